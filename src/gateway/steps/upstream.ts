import { ApiError } from '../../errors'
import { parseJson, type WireFormat } from '../providers/provider'
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
}

/** Calls the provider; a timeout, an unreachable provider or a caller gone first is an ApiError that says which. */
export async function callProvider(request: UpstreamRequest): Promise<Response> {
  const { clientSignal, provider, timeoutMs } = request
  const abort = new AbortController()
  const onClientGone = () => abort.abort(new Error('client disconnected'))
  clientSignal.addEventListener('abort', onClientGone, { once: true })
  const timer = setTimeout(() => abort.abort(new Error('timeout')), timeoutMs)
  try {
    // decompress is left on and the encoding headers are not passed on: Bun hands us decoded bytes.
    const { method = 'POST', url, headers, body } = request
    return await fetch(url, { method, headers, body, signal: abort.signal })
  } catch (error) {
    if (abort.signal.aborted && String(abort.signal.reason).includes('timeout')) {
      throw new ApiError('upstream_timeout', `provider ${provider} did not answer within ${timeoutMs} ms`)
    }
    if (clientSignal.aborted) throw clientClosed()
    throw new ApiError('upstream_unreachable', `provider ${provider} could not be reached: ${(error as Error).message}`)
  } finally {
    clearTimeout(timer)
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
const REQUEST_ID_HEADER = { openai: 'x-request-id', anthropic: 'request-id' } as const

export function passProviderHeaders(from: Headers, to: Headers, callerFormat: WireFormat): void {
  from.forEach((value, name) => {
    if (PASSED_HEADERS.includes(name) || PASSED_PREFIXES.some((prefix) => name.startsWith(prefix))) to.set(name, value)
  })
  const requestId = from.get('x-request-id') ?? from.get('request-id')
  if (requestId !== null) to.set(REQUEST_ID_HEADER[callerFormat], requestId)
}
