import type { ServiceAccount } from '../../../directory/service-account'
import { EgressRefused } from '../../../egress/policy'
import { ApiError } from '../../../errors'

/**
 * Access tokens for Google service accounts, by the JWT bearer grant (RFC 7523): gw signs a short
 * assertion with the account's private key and trades it at the account's `token_uri` for a token
 * good for an hour. A token is reused until five minutes before it expires, and concurrent calls
 * wait on one exchange rather than each making their own.
 */

const SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
const ASSERTION_SECONDS = 3_600
/** Refreshed this long before it expires, so no call goes out with a token that lapses on the way. */
const REFRESH_BEFORE_MS = 5 * 60_000
/** A clock a little ahead of Google's would make a fresh assertion look issued in the future. */
const CLOCK_SKEW_SECONDS = 30
const TOKEN_TIMEOUT_MS = 10_000
const MAX_ACCOUNTS = 1_000

type Fetch = (url: string, init: RequestInit) => Promise<Response>

interface Held {
  token: string
  expiresAt: number
}

const accountKey = (account: ServiceAccount) => `${account.clientEmail}\n${account.privateKeyId ?? ''}\n${account.tokenUri}`

const base64url = (value: string | Uint8Array): string => Buffer.from(value).toString('base64url')

/**
 * The signed assertion an access token is asked for with. node:crypto is read here, on a Vertex
 * call's first exchange, not at start-up: evaluating it costs every start about 1.5 ms.
 */
export async function assertion(account: ServiceAccount, nowMs: number): Promise<string> {
  const { sign } = await import('node:crypto')
  const issuedAt = Math.floor(nowMs / 1000) - CLOCK_SKEW_SECONDS
  const header = { alg: 'RS256', typ: 'JWT', ...(account.privateKeyId ? { kid: account.privateKeyId } : {}) }
  const claims = {
    iss: account.clientEmail,
    scope: SCOPE,
    aud: account.tokenUri,
    iat: issuedAt,
    exp: issuedAt + ASSERTION_SECONDS,
  }
  const input = `${base64url(JSON.stringify(header))}.${base64url(JSON.stringify(claims))}`
  // Keys pasted through a variable or a form often carry "\n" as two characters.
  const key = account.privateKey.replace(/\\n/g, '\n')
  return `${input}.${base64url(sign('sha256', Buffer.from(input), key))}`
}

/** Where a token could not be had: the call fails as its provider's would, with Google's reason. */
const refused = (why: string) =>
  new ApiError('upstream_error', `Vertex AI: the service account could not be authenticated: ${why}`, { status: 502 })

export class AccessTokens {
  private readonly held = new Map<string, Held>()
  private readonly pending = new Map<string, Promise<Held>>()

  constructor(private readonly now: () => number = Date.now) {}

  async token(account: ServiceAccount, fetch: Fetch): Promise<string> {
    const key = accountKey(account)
    const held = this.held.get(key)
    if (held && held.expiresAt - REFRESH_BEFORE_MS > this.now()) return held.token
    let exchange = this.pending.get(key)
    if (!exchange) {
      exchange = this.exchange(account, fetch).finally(() => this.pending.delete(key))
      this.pending.set(key, exchange)
    }
    const fresh = await exchange
    if (this.held.size >= MAX_ACCOUNTS) this.held.clear()
    this.held.set(key, fresh)
    return fresh.token
  }

  /**
   * Forgets an account's token, so the next call asks for another: Google refused it before it expired
   * (the account's key was revoked or rotated, its token with it).
   */
  forget(account: ServiceAccount): void {
    this.held.delete(accountKey(account))
  }

  private async exchange(account: ServiceAccount, fetch: Fetch): Promise<Held> {
    let signed: string
    try {
      signed = await assertion(account, this.now())
    } catch (error) {
      throw refused(`its private key cannot sign (${(error as Error).message})`)
    }
    let response: Response
    try {
      response = await fetch(account.tokenUri, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ grant_type: 'urn:ietf:params:oauth:grant-type:jwt-bearer', assertion: signed }).toString(),
        signal: AbortSignal.timeout(TOKEN_TIMEOUT_MS),
      })
    } catch (error) {
      if (error instanceof EgressRefused)
        throw new ApiError('egress_refused', `Vertex AI: the service account's token_uri is refused: ${error.message}`)
      throw refused(`its token endpoint could not be reached (${(error as Error).message})`)
    }
    const body = (await response.json().catch(() => undefined)) as Record<string, unknown> | undefined
    const token = body?.access_token
    if (!response.ok || typeof token !== 'string') {
      const reason = [body?.error, body?.error_description].filter((part) => typeof part === 'string').join(': ')
      throw refused(`its token endpoint answered ${response.status}${reason ? ` (${reason})` : ''}`)
    }
    const seconds = typeof body?.expires_in === 'number' && body.expires_in > 0 ? body.expires_in : 3_600
    return { token, expiresAt: this.now() + seconds * 1000 }
  }
}
