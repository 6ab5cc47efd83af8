import { ApiError } from '../../errors'
import { asRecord, parseJson } from '../providers/provider'

export interface UpstreamRequest {
  url: string
  headers: Headers
  body: string
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
    return await fetch(request.url, { method: 'POST', headers: request.headers, body: request.body, signal: abort.signal })
  } catch (error) {
    if (abort.signal.aborted && String(abort.signal.reason).includes('timeout')) {
      throw new ApiError('upstream_timeout', `provider ${provider} did not answer within ${timeoutMs} ms`)
    }
    if (clientSignal.aborted) throw new ApiError('bad_request', 'the client went away before the provider answered')
    throw new ApiError('upstream_unreachable', `provider ${provider} could not be reached: ${(error as Error).message}`)
  } finally {
    clearTimeout(timer)
  }
}

/** A provider's 4xx/5xx body as it came, and the message it gives (or what status it answered). */
export async function readProviderFailure(response: Response, provider: string): Promise<{ text: string; description: string }> {
  const text = await response.text()
  const message = asRecord(asRecord(parseJson(text))?.error)?.message
  return { text, description: typeof message === 'string' ? message : `provider ${provider} answered ${response.status}` }
}
