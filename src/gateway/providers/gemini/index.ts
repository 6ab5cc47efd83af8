import type { Usage } from '../../../money/usage'
import { withoutTrailingSlashes } from '../../../util/base-url'
import { SseParser } from '../../../util/sse'
import { usageOfGemini } from '../../translate/gemini'
import { asRecord, type ProviderAdapter, parseJson, type StreamUsage, type WireFamily } from '../provider'

/**
 * Google's `generateContent`, as the Gemini API and Vertex AI serve it: the model in the URL, the
 * answer's candidates and their usage, streamed as server-sent events of whole answer chunks.
 */

const geminiUsage = (payload: unknown): Usage | undefined => usageOfGemini(asRecord(payload)?.usageMetadata)

const servedModel = (payload: unknown): string | undefined => {
  const version = asRecord(payload)?.modelVersion
  return typeof version === 'string' && version !== '' ? version : undefined
}

function finishReasons(payload: unknown): string[] {
  const candidates = asRecord(payload)?.candidates
  if (!Array.isArray(candidates)) return []
  return candidates.flatMap((candidate) => {
    const reason = asRecord(candidate)?.finishReason
    return typeof reason === 'string' ? [reason] : []
  })
}

/** Every chunk of the Gemini API carries the usage so far; Vertex's only the last: the latest complete one wins. */
function streamUsage(): StreamUsage {
  let usage: Usage | undefined
  let model: string | undefined
  let reasons: string[] = []
  return {
    push(event) {
      const payload = parseJson(event.data)
      usage = geminiUsage(payload) ?? usage
      model ??= servedModel(payload)
      const said = finishReasons(payload)
      if (said.length > 0) reasons = said
    },
    result: () => usage,
    servedModel: () => model,
    finishReasons: () => reasons,
  }
}

export const geminiFamily: WireFamily = {
  format: 'gemini',
  // Google's SDK calls generateContent under either version; the model and method are in the path.
  paths: ['/v1beta/models/*', '/v1/models/*'],
  chatPath: 'generateContent',
  requestUsageInStream: (body) => ({ body, callerAskedForUsage: true }),
  usageOf: geminiUsage,
  streamUsage,
  servedModel,
  finishReasons,
  // There is no closing event: the chunk that says why the model stopped is the last.
  isStreamEnd: (event) => finishReasons(parseJson(event.data)).length > 0,
  isInjectedUsageEvent: () => false,
  eventParser: () => new SseParser(),
}

/** The model's method: a whole answer, or its chunks as server-sent events. */
export const generateMethod = (stream: boolean): string => (stream ? 'streamGenerateContent?alt=sse' : 'generateContent')

/** The Gemini API (Google AI Studio): an API key in `x-goog-api-key`. */
export const gemini: ProviderAdapter = {
  name: 'gemini',
  family: () => geminiFamily,
  requiresKey: () => true,
  async upstream({ model, stream, credentials }) {
    const headers = new Headers({ 'content-type': 'application/json' })
    if (credentials.apiKey) headers.set('x-goog-api-key', credentials.apiKey)
    const url = `${withoutTrailingSlashes(credentials.baseUrl)}/v1beta/models/${encodeURIComponent(model)}:${generateMethod(stream)}`
    return { url, headers }
  },
}
