import type { Usage } from '../../../money/usage'
import { withoutTrailingSlashes } from '../../../util/base-url'
import { SseParser } from '../../../util/sse'
import { usageOfMessages } from '../../translate/anthropic-messages'
import { asRecord, type ProviderAdapter, parseJson, type StreamUsage, type WireFamily } from '../provider'

/** The version gw speaks when the caller names none; a caller's `anthropic-version` is passed on. */
const DEFAULT_VERSION = '2023-06-01'
const FORWARDED_HEADERS = ['anthropic-version', 'anthropic-beta'] as const

/** Anthropic's `input_tokens` leaves out the cached parts; gw's `promptTokens` counts them in. */
const usageFrom = (usage: Record<string, unknown> | undefined): Usage | undefined => usage && usageOfMessages(usage)

const servedModel = (payload: unknown): string | undefined => {
  const record = asRecord(payload)
  const model = record?.model ?? asRecord(record?.message)?.model
  return typeof model === 'string' ? model : undefined
}

/** `message_start` carries the input side, `message_delta` the running output count (and, lately, input too). */
function streamUsage(): StreamUsage {
  let usage: Usage | undefined
  let model: string | undefined
  let reason: string | undefined
  return {
    push(event) {
      const payload = asRecord(parseJson(event.data))
      const stopReason = asRecord(payload?.delta)?.stop_reason
      if (typeof stopReason === 'string') reason = stopReason
      if (event.event === 'message_start') {
        const message = asRecord(payload?.message)
        usage = usageFrom(asRecord(message?.usage)) ?? usage
        model ??= servedModel(message)
      } else if (event.event === 'message_delta') {
        const delta = asRecord(payload?.usage)
        if (!delta) return
        const base = usage ?? { promptTokens: 0, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 }
        const update = usageFrom({ ...delta, output_tokens: delta.output_tokens ?? base.completionTokens })
        // A delta that repeats the input side replaces it; one that does not keeps what message_start said.
        usage = delta.input_tokens === undefined && update ? { ...base, completionTokens: update.completionTokens } : update
      }
    },
    result: () => usage,
    servedModel: () => model,
    finishReasons: () => (reason === undefined ? [] : [reason]),
  }
}

/** Anthropic's Messages API, as Anthropic serves it (and Bedrock and Vertex, for Claude, by their own addresses). */
export const anthropicFamily: WireFamily = {
  format: 'anthropic',
  paths: ['/v1/messages', '/v1/messages/count_tokens'],
  chatPath: '/v1/messages',
  requestUsageInStream: (body) => ({ body, callerAskedForUsage: true }),
  usageOf: (payload) => usageFrom(asRecord(asRecord(payload)?.usage)),
  streamUsage,
  servedModel,
  finishReasons: (payload) => {
    const reason = asRecord(payload)?.stop_reason
    return typeof reason === 'string' ? [reason] : []
  },
  isStreamEnd: (event) => event.event === 'message_stop',
  isInjectedUsageEvent: () => false,
  eventParser: () => new SseParser(),
}

export const anthropic: ProviderAdapter = {
  name: 'anthropic',
  family: () => anthropicFamily,
  requiresKey: (credentials) => new URL(credentials.baseUrl).hostname === 'api.anthropic.com',

  async upstream({ path, credentials, callerHeaders }) {
    const headers = new Headers({ 'content-type': 'application/json', 'anthropic-version': DEFAULT_VERSION })
    for (const name of FORWARDED_HEADERS) {
      const value = callerHeaders.get(name)
      if (value) headers.set(name, value)
    }
    if (credentials.apiKey) headers.set('x-api-key', credentials.apiKey)
    return { url: `${withoutTrailingSlashes(credentials.baseUrl)}${path}`, headers }
  },
}
