import { PROVIDERS_TABLE, type ProviderSpec, VENDOR_NAMES, type VendorName } from '../../../directory/providers'
import type { Usage } from '../../../money/usage'
import { withoutTrailingSlashes } from '../../../util/base-url'
import { type SseEvent, SseParser } from '../../../util/sse'
import { asRecord, asTokenCount, type ProviderAdapter, parseJson, type StreamUsage, type WireFamily } from '../provider'
import { withNineCharacterToolCallIds } from './tool-call-ids'

/**
 * OpenAI and every server that speaks its API (vLLM, Ollama, llama.cpp, ...): the base URL names the
 * server and includes its `/v1`, as the OpenAI SDK's `baseURL` does.
 */

/** Chat and completions report `prompt_tokens`; the Responses API `input_tokens`. Cached tokens are part of either. */
function usageOf(payload: unknown): Usage | undefined {
  const usage = asRecord(asRecord(payload)?.usage) ?? asRecord(asRecord(asRecord(payload)?.response)?.usage)
  if (!usage) return undefined
  const promptTokens = asTokenCount(usage.prompt_tokens ?? usage.input_tokens)
  const details = asRecord(usage.prompt_tokens_details) ?? asRecord(usage.input_tokens_details)
  return {
    promptTokens,
    completionTokens: asTokenCount(usage.completion_tokens ?? usage.output_tokens),
    cacheReadTokens: asTokenCount(details?.cached_tokens),
    cacheWriteTokens: 0,
  }
}

/** Azure opens a stream with a chunk of the prompt's filter results alone, its model empty: that names none. */
const servedModel = (payload: unknown): string | undefined => {
  const record = asRecord(payload)
  const model = record?.model ?? asRecord(record?.response)?.model
  return typeof model === 'string' && model !== '' ? model : undefined
}

/**
 * Chat and completions say it per choice; the Responses API says its response's status, and why an
 * incomplete one stopped.
 */
function finishReasons(payload: unknown): string[] {
  const record = asRecord(payload)
  if (Array.isArray(record?.choices))
    return record.choices.flatMap((choice) => {
      const reason = asRecord(choice)?.finish_reason
      return typeof reason === 'string' ? [reason] : []
    })
  const response = record?.object === 'response' ? record : asRecord(record?.response)
  const reason = asRecord(response?.incomplete_details)?.reason ?? response?.status
  return typeof reason === 'string' && reason !== 'in_progress' && reason !== 'queued' ? [reason] : []
}

const RESPONSES_END_EVENTS = new Set(['response.completed', 'response.incomplete', 'response.failed'])

const eventType = (event: SseEvent): string | undefined => {
  if (event.event !== undefined) return event.event
  const type = asRecord(parseJson(event.data))?.type
  return typeof type === 'string' ? type : undefined
}

function streamUsage(): StreamUsage {
  let usage: Usage | undefined
  let model: string | undefined
  let reasons: string[] = []
  return {
    push(event) {
      if (event.data === '[DONE]') return
      const payload = parseJson(event.data)
      usage = usageOf(payload) ?? usage
      model ??= servedModel(payload)
      const said = finishReasons(payload)
      if (said.length > 0) reasons = said
    },
    result: () => usage,
    servedModel: () => model,
    finishReasons: () => reasons,
  }
}

/** OpenAI's own formats: Chat Completions, Completions, the Responses API, and the rest of its paths. */
export const openaiFamily: WireFamily = {
  format: 'openai',
  paths: [
    '/v1/chat/completions',
    '/v1/completions',
    '/v1/embeddings',
    '/v1/responses',
    '/v1/images/generations',
    '/v1/moderations',
    '/v1/audio/speech',
    '/v1/audio/transcriptions',
    '/v1/audio/translations',
  ],
  chatPath: '/v1/chat/completions',

  requestUsageInStream(body) {
    const options = asRecord(body.stream_options)
    const callerAskedForUsage = options?.include_usage === true
    // Only chat and completions take stream_options; the Responses API always reports usage at the end.
    if (body.stream !== true || !('messages' in body || 'prompt' in body)) return { body, callerAskedForUsage: true }
    return { body: { ...body, stream_options: { ...options, include_usage: true } }, callerAskedForUsage }
  },

  usageOf,
  streamUsage,
  servedModel,
  finishReasons,

  isStreamEnd: (event) => event.data === '[DONE]' || RESPONSES_END_EVENTS.has(eventType(event) ?? ''),

  isInjectedUsageEvent(event, callerAskedForUsage) {
    if (callerAskedForUsage || event.data === '[DONE]') return false
    const chunk = asRecord(parseJson(event.data))
    return Array.isArray(chunk?.choices) && chunk.choices.length === 0 && chunk.usage !== undefined
  },

  eventParser: () => new SseParser(),
}

/** Servers that refuse `stream_options` (Mistral) report a stream's usage at its end unasked: nothing to ask for. */
const withoutStreamOptions: WireFamily = {
  ...openaiFamily,
  requestUsageInStream: ({ stream_options: options, ...body }) => ({
    body,
    callerAskedForUsage: asRecord(options)?.include_usage === true,
  }),
  isInjectedUsageEvent: () => false,
}

/** An OpenAI-style path below its `/v1`: base URLs include it, as the OpenAI SDK's `baseURL` does. */
const underV1 = (path: string) => path.slice('/v1'.length)

/** The URL of an OpenAI-style path at a base URL. */
const at = (baseUrl: string, path: string) => `${withoutTrailingSlashes(baseUrl)}${underV1(path)}`

/** A bearer key, when there is one (a self-hosted server may take none). */
function bearer(apiKey: string | undefined): Headers {
  const headers = new Headers({ 'content-type': 'application/json' })
  if (apiKey) headers.set('authorization', `Bearer ${apiKey}`)
  return headers
}

/** OpenAI and every server that speaks its API: OpenAI itself, a self-hosted server, or a vendor by name. */
function openaiCompatibleProvider(name: 'openai' | VendorName): ProviderAdapter {
  const spec: ProviderSpec = PROVIDERS_TABLE[name]
  const family = spec.noStreamOptions ? withoutStreamOptions : openaiFamily
  return {
    name,
    family: () => family,
    // vLLM, Ollama and llama.cpp usually run without a key; api.openai.com and the vendors never do.
    requiresKey: (credentials) => name !== 'openai' || new URL(credentials.baseUrl).hostname === 'api.openai.com',
    async upstream({ path, credentials, body }) {
      const upstream = { url: at(credentials.baseUrl, path), headers: bearer(credentials.apiKey) }
      const renamed = spec.nineCharacterToolCallIds ? withNineCharacterToolCallIds(body) : undefined
      return renamed === undefined ? upstream : { ...upstream, body: renamed }
    },
  }
}

export const openaiCompatible = openaiCompatibleProvider('openai')

export const vendors = Object.fromEntries(VENDOR_NAMES.map((name) => [name, openaiCompatibleProvider(name)])) as Record<
  VendorName,
  ProviderAdapter
>

/** The Azure OpenAI API version gw speaks when the connection names none: the newest generally available one. */
export const AZURE_API_VERSION = '2024-10-21'

/**
 * Azure OpenAI: a resource's own endpoint, a deployment in the path where OpenAI has the model in the
 * body, the API version in the query, the key in `api-key`.
 */
export const azure: ProviderAdapter = {
  name: 'azure',
  family: () => openaiFamily,
  requiresKey: () => true,
  async upstream({ path, model, credentials }) {
    const headers = new Headers({ 'content-type': 'application/json' })
    if (credentials.apiKey) headers.set('api-key', credentials.apiKey)
    const deployment = `${withoutTrailingSlashes(credentials.baseUrl)}/openai/deployments/${encodeURIComponent(model)}`
    return { url: `${deployment}${underV1(path)}?api-version=${credentials.apiVersion ?? AZURE_API_VERSION}`, headers }
  },
}
