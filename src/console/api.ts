/**
 * The console speaks to the management API as every client does: `Authorization: Bearer` with the
 * session token (the API accepts nothing else). The token lives in sessionStorage: it is gone when the
 * tab closes, it is not sent by the browser on its own (no cookie, so no cross-site request can use
 * it), and the strict Content-Security-Policy (no inline or foreign script) is what keeps a script
 * that could read it off the page.
 */
const TOKEN = 'gw.session'

export interface Session {
  token: string
  orgId: string
  orgName: string
  /** Who signed in: the pages tell their own row from the others' (nobody changes their own role). */
  userId: string
}

export const session = {
  get(): Session | undefined {
    const raw = sessionStorage.getItem(TOKEN)
    const kept = raw ? (JSON.parse(raw) as Partial<Session>) : undefined
    // A session kept by an older console lacks fields the pages need: signing in again fills them.
    return kept?.token && kept.orgId && kept.userId ? (kept as Session) : undefined
  },
  set(value: Session): void {
    sessionStorage.setItem(TOKEN, JSON.stringify(value))
  },
  clear(): void {
    sessionStorage.removeItem(TOKEN)
  },
}

/** The API's own message for a failure, shown as it is. */
export class ApiFailure extends Error {
  constructor(
    message: string,
    readonly status: number,
  ) {
    super(message)
  }
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = session.get()?.token
  const response = await fetch(path, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const json = (await response.json().catch(() => undefined)) as
    | { data: T; error: null }
    | { data: null; error: { message: string } }
    | undefined
  if (!response.ok || !json || json.error) {
    throw new ApiFailure(json?.error?.message ?? `the server answered ${response.status}`, response.status)
  }
  return json.data
}
