import fc from 'fast-check'
import type { App } from '../../src/app'
import { ROUTE_CATALOGUE } from '../../src/auth/catalogue'
import { type Body, bodyText, expandText, type PathParam, paramInUrl } from './hostile-values'

/**
 * One hostile call of the hostile-input suite, what its answer must look like, and a report of a
 * wrong answer that a person can act on: method, path, body (cut short), status and answer.
 */

/** Which credential a call carries; the suite maps it to a real token when the call is sent. */
export type Caller = 'owner' | 'apiKey'

/** The body shape a route's callers expect: the management envelope, or the SDK error object of a provider path. */
export type Family = 'management' | 'openai' | 'anthropic' | 'gemini'

/** What a successful answer of the route is. */
export type SuccessShape =
  /** `{data, error: null}` */
  | 'envelope'
  /** the envelope, or a CSV document (audit export) */
  | 'envelope-or-csv'
  /** GatewayMeta, or `{status: "pending"}` */
  | 'gateway-meta'
  /** OpenAI's model list */
  | 'model-list'
  /** whatever the provider answered: JSON, or an event stream */
  | 'provider'
  /** the provider's bytes as they came (audio, a transcript as text) */
  | 'provider-raw'

export interface Expectation {
  family: Family
  success: SuccessShape
  /** Whether the 501 of a catalogue route without a handler is an acceptable answer. */
  stubs: boolean
}

/**
 * The exact answers of the router's stubs, one per catalogue route. Any of them passes, not only the
 * called route's: an empty last parameter (`/v1/integration/`) reaches the parent route, as in any
 * router that ignores a trailing slash.
 */
const STUB_ANSWERS = new Set(
  ROUTE_CATALOGUE.map(([method, path]) =>
    JSON.stringify({ data: null, error: { code: 'not_implemented', message: `${method} ${path} is not implemented yet` } }),
  ),
)

export interface HostileCall {
  method: string
  /** The route as the catalogue writes it, `{name}` for a parameter. */
  route: string
  params: Record<string, PathParam>
  query: string
  headers: Record<string, string>
  body: Body
  contentType: string | undefined
  caller: Caller
  expect: Expectation
}

const cut = (text: string, limit = 300): string =>
  text.length > limit ? `${JSON.stringify(text.slice(0, limit))}... (${text.length} characters)` : JSON.stringify(text)

/** The path as sent, parameters substituted and the query string appended. */
export const pathOf = (call: Pick<HostileCall, 'route' | 'params' | 'query'>): string =>
  call.route.replace(/\{(\w+)\}/g, (whole, name: string) => {
    const param = call.params[name]
    return param ? paramInUrl(param) : whole
  }) + expandText(call.query)

/** A call with a short description, for fast-check's report of a counterexample. */
export function hostileCall(call: HostileCall): HostileCall {
  const describe = () => {
    const body =
      call.body.kind === 'none'
        ? 'no body'
        : `body ${cut(call.body.kind === 'raw' ? call.body.text : (JSON.stringify(call.body.value) ?? ''), 200)}`
    const headers = Object.keys(call.headers).length > 0 ? ` headers ${cut(JSON.stringify(call.headers), 200)}` : ''
    return `${call.method} ${cut(pathOf(call), 200)} as ${call.caller}, ${call.contentType ?? 'no content type'}, ${body}${headers}`
  }
  return Object.defineProperty({ ...call }, fc.toStringMethod, { value: describe, enumerable: false })
}

export interface Answer {
  status: number
  contentType: string
  text: string
  /** Why the body could not be read to its end, when it could not: a stream that broke after its status. */
  bodyError?: string
  tookMs: number
}

/**
 * How long one answer may take. Every call of the suite is answered in milliseconds when the server
 * is sound; one that takes seconds (validation that is quadratic in the depth of a body, say) holds
 * the event loop, and every other caller, for that long.
 */
export const SLOW_CALL_MS = 3_000

/**
 * Routes that call out to an address the caller configured may wait for it, without holding the event
 * loop, up to their own timeout: the SSO test fetches the issuer's discovery document for up to 5 s,
 * and a fuzzed issuer such as `http://c?4` is never answered here, where there is no network.
 */
const OUTBOUND_CALL_MS: ReadonlyMap<string, number> = new Map([['POST /v1/organization/{id}/sso/test', 6_000]])

/** How long one call may take before the suite calls it hung: a hang is a failure too, and must say where. */
const CALL_TIMEOUT_MS = 15_000

export async function send(app: App, call: HostileCall, token: string): Promise<Answer> {
  const headers: Record<string, string> = { ...call.headers, authorization: `Bearer ${token}` }
  if (call.contentType !== undefined && call.body.kind !== 'none') headers['content-type'] = call.contentType
  const body = bodyText(call.body)
  // Elysia reads the path from a fixed offset of the URL; `http://localhost` is the form it expects in tests.
  const request = new Request(`http://localhost${pathOf(call)}`, { method: call.method, headers, body })
  let timer: ReturnType<typeof setTimeout> | undefined
  const hung = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${CALL_TIMEOUT_MS} ms`)), CALL_TIMEOUT_MS)
  })
  const started = performance.now()
  try {
    const response = await Promise.race([app.handle(request), hung])
    const contentType = response.headers.get('content-type') ?? ''
    try {
      const text = await Promise.race([response.text(), hung])
      return { status: response.status, contentType, text, tookMs: performance.now() - started }
    } catch (error) {
      const bodyError = error instanceof Error ? error.message : String(error)
      return { status: response.status, contentType, text: '', bodyError, tookMs: performance.now() - started }
    }
  } finally {
    clearTimeout(timer)
  }
}

type Json = null | boolean | number | string | Json[] | { [key: string]: Json }

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

const isErrorObject = (value: unknown, ...keys: string[]) =>
  isObject(value) && keys.every((key) => typeof value[key] === 'string')

function familyProblem(family: Family, json: Json): string | undefined {
  switch (family) {
    case 'management':
      return isObject(json) && json.data === null && isErrorObject(json.error, 'code', 'message')
        ? undefined
        : 'the error is not the management envelope {data: null, error: {code, message}}'
    case 'openai':
      return isObject(json) && isErrorObject(json.error, 'message', 'type')
        ? undefined
        : "the error is not OpenAI's error object {error: {message, type}}"
    case 'anthropic':
      return isObject(json) && json.type === 'error' && isErrorObject(json.error, 'type', 'message')
        ? undefined
        : "the error is not Anthropic's error object {type: 'error', error: {type, message}}"
    case 'gemini':
      return isObject(json) &&
        isErrorObject(json.error, 'message', 'status') &&
        isObject(json.error) &&
        typeof json.error.code === 'number'
        ? undefined
        : "the error is not Google's error object {error: {code, message, status}}"
  }
}

function successProblem(shape: SuccessShape, answer: Answer, json: Json | undefined): string | undefined {
  switch (shape) {
    case 'envelope':
      return isObject(json) && 'data' in json && json.error === null
        ? undefined
        : 'the answer is not the envelope {data, error: null}'
    case 'envelope-or-csv':
      if (answer.contentType.startsWith('text/csv')) return undefined
      return successProblem('envelope', answer, json)
    case 'gateway-meta':
      return isObject(json) && (typeof json.requestId === 'string' || json.status === 'pending')
        ? undefined
        : 'the answer is neither GatewayMeta nor {status: "pending"}'
    case 'model-list':
      return isObject(json) && json.object === 'list' && Array.isArray(json.data) ? undefined : 'the answer is not a model list'
    case 'provider':
      return answer.contentType.startsWith('text/event-stream') || json !== undefined
        ? undefined
        : 'the answer is neither JSON nor an event stream'
    case 'provider-raw':
      return undefined
  }
}

const parse = (text: string): Json | undefined => {
  try {
    return JSON.parse(text) as Json
  } catch {
    return undefined
  }
}

/**
 * What is wrong with an answer, or nothing. Never a 5xx, except the 501 of a route that has no handler
 * yet, recognised by the stub's own body (a real handler's 501 does not pass); errors in the route's family.
 */
export function problemWith(call: HostileCall, answer: Answer): string | undefined {
  if (answer.bodyError !== undefined) return `the body broke off after a ${answer.status}: ${answer.bodyError}`
  const bound = OUTBOUND_CALL_MS.get(`${call.method} ${call.route}`) ?? SLOW_CALL_MS
  if (answer.tookMs > bound) return `answered after ${Math.round(answer.tookMs)} ms (more than ${bound} ms)`
  const json = parse(answer.text)
  const { expect } = call
  if (answer.status === 501 && expect.stubs) {
    const message = isObject(json) && isObject(json.error) ? json.error.message : undefined
    return STUB_ANSWERS.has(JSON.stringify(json)) && typeof message === 'string' && message.startsWith(`${call.method} `)
      ? undefined
      : "a 501 that is not the answer of a catalogue route's stub (not_implemented, naming the route)"
  }
  if (answer.status >= 500) return `a ${answer.status}: a server fault where the caller sent bad input`
  if (answer.status >= 400) {
    if (json === undefined) return 'the error is not JSON'
    return familyProblem(expect.family, json)
  }
  return successProblem(expect.success, answer, json)
}

/** The report of a wrong answer: everything needed to reproduce it by hand. */
export function report(call: HostileCall, answer: Answer | undefined, problem: string): string {
  const body = bodyText(call.body)
  const lines = [
    `${call.method} ${cut(pathOf(call), 500)} (route ${call.method} ${call.route}), as ${call.caller}`,
    `  problem: ${problem}`,
    `  content-type: ${call.contentType ?? '(none)'}`,
    `  body: ${body === undefined ? '(none)' : cut(body)}`,
  ]
  if (Object.keys(call.headers).length > 0) lines.push(`  headers: ${cut(JSON.stringify(call.headers), 500)}`)
  if (answer) lines.push(`  answered ${answer.status} ${answer.contentType}: ${cut(answer.text, 500)}`)
  return lines.join('\n')
}
