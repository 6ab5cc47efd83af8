import { EgressRefused } from '../../egress/policy'
import { ApiError } from '../../errors'
import { type CallerWireFormat, parseJson } from '../providers/provider'
import { type AttemptFailure, retryAfterMs } from '../routing/policy'
import { type ProviderFailure, readFailure } from '../translate/errors'

export interface UpstreamRequest {
  /** POST unless said (a provider API's GET or DELETE). */
  method?: string
  url: string
  headers: Headers
  body?: string | Uint8Array
  /** The caller's request signal: a caller that goes away aborts the provider call. */
  clientSignal: AbortSignal
  provider: string
  /** How long to wait for the provider's response headers before answering 504. */
  timeoutMs: number
  /**
   * The egress policy's fetch, for an address an organisation configured (its provider key's base
   * URL): checked and pinned at connect time, redirects not followed. The operator's addresses are
   * trusted and fetched directly.
   */
  guardedFetch?: (url: string, init: RequestInit) => Promise<Response>
}

/** The options every provider call's listener on its caller's signal takes, made once. */
const ONCE = { once: true }

/**
 * A provider call's one deadline. A caller that goes away aborts the call; so does the time running
 * out, whether the answer's headers or the part of it read before it counts as served are late: an
 * aborted fetch fails the read of its body too, so one timer covers both.
 */
class Deadline {
  readonly abort = new AbortController()
  private readonly timer: ReturnType<typeof setTimeout>

  constructor(clientSignal: AbortSignal, timeoutMs: number) {
    const abort = this.abort
    clientSignal.addEventListener('abort', () => abort.abort(new Error('client disconnected')), ONCE)
    this.timer = setTimeout(() => abort.abort(TIMED_OUT), timeoutMs)
  }

  get expired(): boolean {
    return this.abort.signal.reason === TIMED_OUT
  }

  /** What is read within the deadline has been read: the rest of the answer takes its own time. */
  end(): void {
    clearTimeout(this.timer)
  }
}

const TIMED_OUT = new Error('timeout')

/** Sends the call; the deadline keeps running, so the caller can read within it and end it. */
async function send(request: UpstreamRequest, deadline: Deadline): Promise<Response> {
  const { provider } = request
  try {
    // decompress is left on and the encoding headers are not passed on: Bun hands us decoded bytes.
    const { method = 'POST', url, headers, body, guardedFetch } = request
    const signal = deadline.abort.signal
    if (!guardedFetch) return await fetch(url, { method, headers, body, signal })
    const response = await guardedFetch(url, { method, headers, body, signal })
    if (response.status >= 300 && response.status < 400) {
      await response.body?.cancel()
      throw new ApiError(
        'upstream_error',
        `provider ${provider} answered a redirect (${response.status}), which gw does not follow for an organization's base URL: it could lead past the egress policy`,
      )
    }
    return response
  } catch (error) {
    if (error instanceof EgressRefused)
      throw new ApiError('egress_refused', `this organization's ${provider} base URL is refused: ${error.message}`)
    if (error instanceof ApiError) throw error
    if (deadline.expired) throw timedOut(request)
    if (request.clientSignal.aborted) throw clientClosed()
    throw new ApiError('upstream_unreachable', `provider ${provider} could not be reached: ${(error as Error).message}`)
  }
}

/** Calls the provider; a timeout, an unreachable provider or a caller gone first is an ApiError that says which. */
export async function callProvider(request: UpstreamRequest): Promise<Response> {
  const deadline = new Deadline(request.clientSignal, request.timeoutMs)
  try {
    return await send(request, deadline)
  } finally {
    deadline.end()
  }
}

/** The caller left before its answer: recorded as 499, as proxies do. */
export const clientClosed = () => new ApiError('client_closed', 'the client went away before its answer')

/** A provider's 4xx/5xx body as it came, and the failure it describes, in neutral terms. */
export async function readProviderFailure(
  response: Response,
  provider: string,
): Promise<{ text: string; failure: ProviderFailure }> {
  const text = await response.text()
  return { text, failure: readFailure(parseJson(text), response.status, `provider ${provider} answered ${response.status}`) }
}

/**
 * The provider's answer headers a caller's SDK acts on: when to retry, how much of its rate limit is
 * left, and the provider's request id for support. Nothing else is passed on (cookies, the provider's
 * organisation and server details are the operator's, not the caller's).
 */
const PASSED_HEADERS = ['retry-after', 'retry-after-ms', 'x-request-id', 'request-id']
const PASSED_PREFIXES = ['x-ratelimit-', 'anthropic-ratelimit-']
/** The request-id header each format's SDK reads, so a translated answer carries the id where the caller looks. */
const REQUEST_ID_HEADER = { openai: 'x-request-id', anthropic: 'request-id', gemini: 'x-request-id' } as const

const isPassed = (name: string): boolean => {
  if (PASSED_HEADERS.includes(name)) return true
  for (const prefix of PASSED_PREFIXES) if (name.startsWith(prefix)) return true
  return false
}

export function passProviderHeaders(from: Headers, to: Headers, callerFormat: CallerWireFormat): void {
  from.forEach((value, name) => {
    if (isPassed(name)) to.set(name, value)
  })
  const requestId = from.get('x-request-id') ?? from.get('request-id')
  if (requestId !== null) to.set(REQUEST_ID_HEADER[callerFormat], requestId)
}

/** How much of a successful answer is read before it counts as served: nothing, all of it, or a stream's first bytes. */
export type AnswerRead = 'raw' | 'whole' | 'stream'

/** What the relay needs of a provider answer's reader. */
export interface AnswerReader {
  read(): Promise<{ done: true; value?: undefined } | { done: false; value: Uint8Array }>
  cancel(reason?: unknown): Promise<void>
}

/** A provider's answer that served: a whole one's text, or a stream's first bytes and the rest to read. */
export type Served =
  | { response: Response; read: 'raw' }
  | { response: Response; read: 'whole'; text: string }
  | { response: Response; read: 'stream'; reader: AnswerReader; first: Uint8Array }

/** A provider's error answer, read: passed on as it came when no other step serves. */
export interface FailedAnswer {
  response: Response
  text: string
  failure: ProviderFailure
}

/** A provider call that did not serve, and what the caller is answered if it is the last. */
export interface Unserved {
  failure: AttemptFailure
  answer?: FailedAnswer
  /** What went wrong, for the attempt's record and for the caller when there was no answer to pass on. */
  error: ApiError
}

export type AttemptResult = ({ ok: true } & Served) | ({ ok: false } & Unserved)

/**
 * One call to a provider, read far enough to know whether it served. Until the caller has been sent a
 * byte, a failure can still be answered by another step: so a whole answer is read to its end and a
 * stream to its first bytes (both within the timeout) before the call counts as served. A caller
 * that left ends everything (thrown).
 */
export async function attemptProvider(request: UpstreamRequest, read: AnswerRead, now: () => number): Promise<AttemptResult> {
  const deadline = new Deadline(request.clientSignal, request.timeoutMs)
  try {
    return await attemptWithin(request, read, now, deadline)
  } finally {
    deadline.end()
  }
}

async function attemptWithin(
  request: UpstreamRequest,
  read: AnswerRead,
  now: () => number,
  deadline: Deadline,
): Promise<AttemptResult> {
  let response: Response
  try {
    response = await send(request, deadline)
  } catch (error) {
    if (!(error instanceof ApiError) || error.code === 'client_closed') throw error
    return { ok: false, failure: { kind: FAILURE_KINDS[error.code] ?? 'network' }, error }
  }
  if (!response.ok) {
    const { text, failure } = await readProviderFailure(response, request.provider).catch((error: unknown) => {
      if (request.clientSignal.aborted) throw clientClosed()
      const message = deadline.expired
        ? `provider ${request.provider} answered ${response.status} and did not finish its error body within ${request.timeoutMs} ms`
        : `provider ${request.provider} answered ${response.status} and broke off: ${errorText(error)}`
      return { text: '', failure: { kind: 'api_error', message } as ProviderFailure }
    })
    const error = new ApiError('upstream_error', failure.message, { status: response.status })
    const retryAfter = retryAfterMs(response.headers, now()) ?? failure.retryAfterMs
    return {
      ok: false,
      failure: { kind: 'status', status: response.status, ...(retryAfter === undefined ? {} : { retryAfterMs: retryAfter }) },
      answer: { response, text, failure },
      error,
    }
  }
  if (read === 'raw') return { ok: true, response, read }
  try {
    if (read === 'whole') return { ok: true, response, read, text: await response.text() }
    const reader = response.body?.getReader()
    if (!reader) throw new Error('the stream has no body')
    const first = await reader.read()
    if (first.done) throw new Error('the stream ended before its first event')
    return { ok: true, response, read, reader, first: first.value }
  } catch (error) {
    if (request.clientSignal.aborted) throw clientClosed()
    if (deadline.expired) return { ok: false, failure: { kind: 'timeout' }, error: timedOut(request) }
    const broke = new ApiError('upstream_unreachable', `provider ${request.provider}'s answer broke off: ${errorText(error)}`)
    return { ok: false, failure: { kind: 'network' }, error: broke }
  }
}

/** What a provider call that got no answer came to, by the error it ended with; anything else is a network failure. */
const FAILURE_KINDS: Partial<Record<ApiError['code'], 'timeout' | 'refused'>> = {
  upstream_timeout: 'timeout',
  egress_refused: 'refused',
}

const errorText = (error: unknown) => (error instanceof Error ? error.message : String(error))
const timedOut = (request: UpstreamRequest) =>
  new ApiError('upstream_timeout', `provider ${request.provider} did not answer within ${request.timeoutMs} ms`)
