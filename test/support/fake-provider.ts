/**
 * A fake model provider on loopback that speaks both OpenAI's and Anthropic's APIs, so the gateway's
 * tests never call a real one. A test steers it with directives anywhere in the request body:
 *
 *   fake:error:<status>   answer with that status and the provider's error shape, with the error type the
 *                         real provider uses for that status (Anthropic: 400 invalid_request_error, 401
 *                         authentication_error, 429 rate_limit_error, 529 overloaded_error, ...; OpenAI:
 *                         429 type `requests` code `rate_limit_exceeded`, 401 code `invalid_api_key`, ...)
 *   fake:retry-after:<s>  with fake:error, the error answer also carries `retry-after: <s>`
 *   fake:midstream-fail   stream a few frames, then break the connection
 *   fake:stream-error     stream a few frames, then the provider's own in-band error event, then end the
 *                         stream cleanly (Anthropic: `event: error` with an overloaded_error; chat and
 *                         completions: `data: {"error": {...}}`; Responses: its `error` event)
 *   fake:slow:<ms>        wait that long between stream frames
 *   fake:hang             never answer (until the caller gives up)
 *   fake:drop             send the answer's headers, then break the connection before its first byte
 *   fake:stall            send the answer's headers, then nothing more (until the caller gives up)
 *   fake:delay:<ms>       wait that long before answering
 *   fake:pause:<ms>       stream the first frame, then go quiet that long once
 *   fake:gzip             gzip the (non-streamed) answer
 *   fake:cache            report prompt-cache tokens in the usage
 *   fake:tools            answer with a tool call instead of text
 *   fake:tools-once       answer with a tool call while the conversation has no tool result yet, and with
 *                         text once it has one (OpenAI chat: a `tool` message; Anthropic: a `tool_result`
 *                         block; Responses: a `function_call_output` input item): a two-step tool loop
 *   fake:thinking         Anthropic answers open with a `thinking` block (its text and a signature) before
 *                         the answer, as extended thinking does (thinking_delta and signature_delta streamed)
 *
 * A test may also steer calls without touching their body (`steer`): a rule adds its directives to
 * the calls naming its model and/or made with its key (Bearer or x-api-key), for its first `times`
 * calls or all of them; how a fallback chain's steps, or one key among several, are made to fail.
 *
 * Every answer (success, error, stream) carries the provider's request id, `x-request-id` on OpenAI's
 * paths and `request-id` on Anthropic's, `req_fake_<n>` where n is the call's position in `calls`
 * (from 1), and its rate-limit headers (`x-ratelimit-limit-requests`/`x-ratelimit-remaining-requests`,
 * or `anthropic-ratelimit-requests-limit`/`-remaining`). The Responses API streams its own events
 * (response.created ... response.completed); `POST /v1/messages/count_tokens` answers
 * `{input_tokens: fakeTokenCount(body)}`.
 *
 * A `multipart/form-data` body is never read as JSON: the fake keeps its bytes as received
 * (`rawBody`), parses the form, records its text fields as `body` and its file as `file` (name, type,
 * bytes), and reads directives from the text fields. Every answer below also carries the request id
 * and rate-limit headers above (Anthropic's on `/v1/messages/batches*`, OpenAI's on the rest).
 *
 * Model endpoints (OpenAI):
 *   POST /v1/images/generations   `{created, data: [{url: FAKE_IMAGE_URL}]}`
 *   POST /v1/moderations          `{id, model, results: [{flagged: false, categories, category_scores,
 *                                 category_applied_input_types}]}` (model: the body's, else omni-moderation-latest)
 *   POST /v1/audio/speech         the bytes of FAKE_SPEECH (1 KiB of every byte value), `content-type:
 *                                 audio/mpeg` (audio/wav, audio/flac, ... for another `response_format`)
 *   POST /v1/audio/transcriptions, POST /v1/audio/translations
 *                                 multipart only (`file` and `model`; else a 400 in OpenAI's shape): `{text}`
 *                                 with FAKE_TRANSCRIPT or FAKE_TRANSLATION, or the text alone as text/plain for
 *                                 `response_format` text, srt or vtt
 *
 * Provider APIs without a model, kept in memory for the fake's life; they need a key (`authorization:
 * Bearer ...` for OpenAI, `x-api-key` for Anthropic), else 401 in the provider's shape, and an unknown id
 * is a 404 in it:
 *   POST /v1/files (multipart: `file`, `purpose`)  `{id: 'file-<n>', object: 'file', bytes, created_at,
 *                                 filename, purpose, status: 'processed'}`
 *   GET /v1/files                 `{object: 'list', data, first_id, last_id, has_more: false}`
 *   GET /v1/files/{id}            the file object; GET /v1/files/{id}/content its bytes as uploaded
 *                                 (application/octet-stream); DELETE /v1/files/{id} `{id, object: 'file', deleted: true}`
 *   POST /v1/batches              `{input_file_id, endpoint, completion_window}` (the file must exist):
 *                                 `{id: 'batch_<n>', object: 'batch', status: 'validating', request_counts, ...}`
 *   GET /v1/batches, GET /v1/batches/{id}, POST /v1/batches/{id}/cancel (status 'cancelling')
 *   POST /v1/messages/batches     `{requests: [{custom_id, params}]}`: `{id: 'msgbatch_<n>', type:
 *                                 'message_batch', processing_status: 'in_progress', request_counts, ...}`. The
 *                                 batch is processed at once: every later read says `ended`, with `results_url`
 *                                 the fake's own absolute URL of its results (as Anthropic's is on
 *                                 api.anthropic.com), unless it was cancelled (`canceling`, no results)
 *   GET /v1/messages/batches      `{data, has_more: false, first_id, last_id}`; GET /v1/messages/batches/{id}
 *   GET /v1/messages/batches/{id}/results  JSONL (application/binary), one line a request: `{custom_id,
 *                                 result: {type: 'succeeded', message}}`, the message as /v1/messages answers
 *   POST /v1/messages/batches/{id}/cancel (`canceling`); DELETE /v1/messages/batches/{id}
 *                                 `{id, type: 'message_batch_deleted'}`
 */

/** A multipart body's file part, as the fake received it. */
export interface ReceivedFile {
  /** The form field it came in (`file`). */
  field: string
  name: string
  type: string
  bytes: Uint8Array
}

export interface RecordedCall {
  path: string
  /** GET, POST, DELETE. */
  method: string
  /** The query string as received, with its `?`, or ''. */
  query: string
  headers: Record<string, string>
  /** A JSON body, parsed; a multipart body's text fields. */
  body: Record<string, unknown>
  /** A multipart body: its bytes exactly as received. */
  rawBody?: Uint8Array
  /** A multipart body's file, when the form could be parsed and had one. */
  file?: ReceivedFile
  /** The request id the fake answered this call with (`req_fake_<n>`). */
  requestId: string
  /** When the fake received the call (Date.now()). */
  receivedAt: number
}

export interface FakeProvider {
  url: string
  openaiBaseUrl: string
  anthropicBaseUrl: string
  calls: RecordedCall[]
  /** Streams the caller stopped reading before they ended. */
  cancelledStreams: number
  /** Adds directives to the calls that match (see the header); the newest rule that matches wins. */
  steer(rule: SteeringRule): void
  /** Drops every steering rule. */
  unsteer(): void
  close(): Promise<void>
}

/** Directives for the calls naming `model` and/or made with `key`; for the first `times` of them, or every one. */
export interface SteeringRule {
  model?: string
  key?: string
  directives: string
  times?: number
}

export const OPENAI_TEXT = ['Hello', ' from', ' the fake', ' OpenAI provider.']
export const ANTHROPIC_TEXT = ['Hello', ' from', ' the fake', ' Anthropic provider.']
/** What `fake:thinking` thinks, in the deltas it streams, and the signature it closes the block with. */
export const THINKING_TEXT = ['Let me think', ' about this', ' carefully.']
export const THINKING_SIGNATURE = 'EqQBCkgIBRABGAIiQFakeSignatureOfTheFakeProvider=='

/** Usage the fake reports: fixed numbers, so tests can price them by hand. */
export const FAKE_USAGE = {
  openai: { prompt: 1_000, completion: 500, cached: 400 },
  anthropic: { input: 1_000, output: 500, cacheRead: 2_000, cacheWrite: 3_000 },
}

/** The rate-limit headers' limits; the remaining count is the limit less the call's number. */
export const FAKE_RATE_LIMIT = { openai: 10_000, anthropic: 4_000 }

/** The messages of the in-band errors `fake:stream-error` sends. */
export const STREAM_ERROR_MESSAGE = { openai: 'The server had an error while processing your request.', anthropic: 'Overloaded' }

/** Where `POST /v1/images/generations` says each image is. */
export const FAKE_IMAGE_URL = 'https://fake/image.png'
/** The audio `POST /v1/audio/speech` answers: 1 KiB holding every byte value (not UTF-8), so any decoding as text shows. */
export const FAKE_SPEECH = Uint8Array.from({ length: 1024 }, (_, i) => (i * 37 + 11) % 256)
/** The text `POST /v1/audio/transcriptions` and `/v1/audio/translations` answer. */
export const FAKE_TRANSCRIPT = 'fake transcript'
export const FAKE_TRANSLATION = 'fake translation'

/** What `POST /v1/messages/count_tokens` answers for a body: a count that depends only on the conversation. */
export const fakeTokenCount = (body: Record<string, unknown>): number =>
  Math.max(1, Math.ceil(JSON.stringify([body.system ?? null, body.messages ?? [], body.tools ?? []]).length / 4))

const encoder = new TextEncoder()
const sse = (data: unknown, event?: string) =>
  encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)

interface Directives {
  error?: number
  retryAfter?: number
  midstreamFail: boolean
  streamError: boolean
  slowMs: number
  delayMs: number
  pauseMs: number
  hang: boolean
  drop: boolean
  stall: boolean
  gzip: boolean
  cache: boolean
  /** A tool call instead of text: `fake:tools`, or `fake:tools-once` before the conversation has a tool result. */
  tools: boolean
  toolsOnce: boolean
  thinking: boolean
}

function directives(raw: string): Directives {
  const error = /fake:error:(\d{3})/.exec(raw)?.[1]
  const retryAfter = /fake:retry-after:(\d+)/.exec(raw)?.[1]
  const slow = /fake:slow:(\d+)/.exec(raw)?.[1]
  const delay = /fake:delay:(\d+)/.exec(raw)?.[1]
  const pause = /fake:pause:(\d+)/.exec(raw)?.[1]
  return {
    error: error ? Number(error) : undefined,
    retryAfter: retryAfter ? Number(retryAfter) : undefined,
    midstreamFail: raw.includes('fake:midstream-fail'),
    streamError: raw.includes('fake:stream-error'),
    slowMs: slow ? Number(slow) : 0,
    delayMs: delay ? Number(delay) : 0,
    pauseMs: pause ? Number(pause) : 0,
    hang: raw.includes('fake:hang'),
    drop: raw.includes('fake:drop'),
    stall: raw.includes('fake:stall'),
    gzip: raw.includes('fake:gzip'),
    cache: raw.includes('fake:cache'),
    tools: /fake:tools(?!-)/.test(raw),
    toolsOnce: raw.includes('fake:tools-once'),
    thinking: raw.includes('fake:thinking'),
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** Whether the conversation already carries a tool's result, in the format of the path it came to. */
function hasToolResult(path: string, body: Record<string, unknown>): boolean {
  const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])
  if (path === '/v1/messages')
    return list(body.messages).some(
      (message) => isRecord(message) && list(message.content).some((block) => isRecord(block) && block.type === 'tool_result'),
    )
  if (path === '/v1/responses') return list(body.input).some((item) => isRecord(item) && item.type === 'function_call_output')
  return list(body.messages).some((message) => isRecord(message) && message.role === 'tool')
}

function openaiUsage(d: Directives) {
  const { prompt, completion, cached } = FAKE_USAGE.openai
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: d.cache ? cached : 0 },
  }
}

function responsesUsage(d: Directives) {
  const { prompt, completion, cached } = FAKE_USAGE.openai
  return {
    input_tokens: prompt,
    output_tokens: completion,
    total_tokens: prompt + completion,
    input_tokens_details: { cached_tokens: d.cache ? cached : 0 },
    output_tokens_details: { reasoning_tokens: 0 },
  }
}

function anthropicUsage(d: Directives, output: number) {
  const { input, cacheRead, cacheWrite } = FAKE_USAGE.anthropic
  return {
    input_tokens: input,
    output_tokens: output,
    cache_read_input_tokens: d.cache ? cacheRead : 0,
    cache_creation_input_tokens: d.cache ? cacheWrite : 0,
  }
}

const TOOL_CALL = { id: 'call_fake_1', name: 'get_weather', arguments: '{"city":"Paris"}' }

/** The Responses API's output items: a message with the text, or a function call. */
const RESPONSES_MESSAGE_ID = 'msg_fake_1'
const RESPONSES_CALL_ID = 'fc_fake_1'
const responsesText = (text: string) => ({ type: 'output_text', text, annotations: [], logprobs: [] })
const responsesMessage = (status: 'in_progress' | 'completed', text: string | undefined) => ({
  id: RESPONSES_MESSAGE_ID,
  type: 'message',
  status,
  role: 'assistant',
  content: text === undefined ? [] : [responsesText(text)],
})
const responsesCall = (status: 'in_progress' | 'completed', args: string) => ({
  id: RESPONSES_CALL_ID,
  type: 'function_call',
  status,
  call_id: TOOL_CALL.id,
  name: TOOL_CALL.name,
  arguments: args,
})

function responsesObject(model: string, d: Directives, status: 'in_progress' | 'completed', output: unknown[]) {
  return {
    id: 'resp_fake',
    object: 'response',
    created_at: 1_700_000_000,
    model,
    status,
    error: null,
    incomplete_details: null,
    output,
    parallel_tool_calls: true,
    tool_choice: 'auto',
    tools: [],
    usage: status === 'completed' ? responsesUsage(d) : null,
  }
}

function openaiAnswer(path: string, model: string, d: Directives): unknown {
  if (path === '/v1/embeddings') {
    return {
      object: 'list',
      data: [{ object: 'embedding', index: 0, embedding: [0.1, 0.2, 0.3] }],
      model,
      usage: { prompt_tokens: 5, total_tokens: 5 },
    }
  }
  if (path === '/v1/completions') {
    return {
      id: 'cmpl-fake',
      object: 'text_completion',
      created: 1_700_000_000,
      model,
      choices: [{ index: 0, text: OPENAI_TEXT.join(''), finish_reason: 'stop', logprobs: null }],
      usage: openaiUsage(d),
    }
  }
  if (path === '/v1/responses') {
    const output = d.tools ? responsesCall('completed', TOOL_CALL.arguments) : responsesMessage('completed', OPENAI_TEXT.join(''))
    return responsesObject(model, d, 'completed', [output])
  }
  const message = d.tools
    ? {
        role: 'assistant',
        content: null,
        tool_calls: [{ id: TOOL_CALL.id, type: 'function', function: { name: TOOL_CALL.name, arguments: TOOL_CALL.arguments } }],
      }
    : { role: 'assistant', content: OPENAI_TEXT.join('') }
  return {
    id: 'chatcmpl-fake',
    object: 'chat.completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, message, finish_reason: d.tools ? 'tool_calls' : 'stop', logprobs: null }],
    usage: openaiUsage(d),
  }
}

/** OpenAI's in-band stream error on chat and completions: a data-only frame with an `error` object. */
const openaiStreamError = () =>
  sse({ error: { message: STREAM_ERROR_MESSAGE.openai, type: 'server_error', param: null, code: null } })

function openaiFrames(model: string, d: Directives, includeUsage: boolean): Uint8Array[] {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: 'chatcmpl-fake',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })
  const frames = [sse(chunk({ role: 'assistant', content: '' }))]
  if (d.tools) {
    frames.push(
      sse(
        chunk({
          tool_calls: [{ index: 0, id: TOOL_CALL.id, type: 'function', function: { name: TOOL_CALL.name, arguments: '' } }],
        }),
      ),
    )
    if (d.streamError) return [...frames, openaiStreamError()]
    frames.push(sse(chunk({ tool_calls: [{ index: 0, function: { arguments: TOOL_CALL.arguments } }] })))
  } else {
    for (const text of OPENAI_TEXT) {
      frames.push(sse(chunk({ content: text })))
      if (d.streamError) return [...frames, openaiStreamError()]
    }
  }
  frames.push(sse(chunk({}, d.tools ? 'tool_calls' : 'stop')))
  if (includeUsage)
    frames.push(
      sse({
        id: 'chatcmpl-fake',
        object: 'chat.completion.chunk',
        created: 1_700_000_000,
        model,
        choices: [],
        usage: openaiUsage(d),
      }),
    )
  frames.push(sse('[DONE]'))
  return frames
}

/** Legacy completions streamed: `text_completion` chunks, the usage chunk when asked, `[DONE]`. */
function completionFrames(model: string, d: Directives, includeUsage: boolean): Uint8Array[] {
  const chunk = (text: string, finish: string | null = null) => ({
    id: 'cmpl-fake',
    object: 'text_completion',
    created: 1_700_000_000,
    model,
    choices: [{ index: 0, text, finish_reason: finish, logprobs: null }],
  })
  const frames: Uint8Array[] = []
  for (const text of OPENAI_TEXT) {
    frames.push(sse(chunk(text)))
    if (d.streamError) return [...frames, openaiStreamError()]
  }
  frames.push(sse(chunk('', 'stop')))
  if (includeUsage)
    frames.push(
      sse({ id: 'cmpl-fake', object: 'text_completion', created: 1_700_000_000, model, choices: [], usage: openaiUsage(d) }),
    )
  frames.push(sse('[DONE]'))
  return frames
}

/** The Responses API streamed: named events, each with its sequence number, ending with response.completed. */
function responsesFrames(model: string, d: Directives): Uint8Array[] {
  const frames: Uint8Array[] = []
  const event = (type: string, fields: Record<string, unknown>) =>
    frames.push(sse({ type, sequence_number: frames.length, ...fields }, type))
  const failed = () => {
    event('error', { code: 'server_error', message: STREAM_ERROR_MESSAGE.openai, param: null })
    return frames
  }
  event('response.created', { response: responsesObject(model, d, 'in_progress', []) })
  event('response.in_progress', { response: responsesObject(model, d, 'in_progress', []) })
  let done: unknown
  if (d.tools) {
    event('response.output_item.added', { output_index: 0, item: responsesCall('in_progress', '') })
    if (d.streamError) return failed()
    event('response.function_call_arguments.delta', { item_id: RESPONSES_CALL_ID, output_index: 0, delta: TOOL_CALL.arguments })
    event('response.function_call_arguments.done', {
      item_id: RESPONSES_CALL_ID,
      output_index: 0,
      arguments: TOOL_CALL.arguments,
    })
    done = responsesCall('completed', TOOL_CALL.arguments)
  } else {
    const text = OPENAI_TEXT.join('')
    const at = { item_id: RESPONSES_MESSAGE_ID, output_index: 0, content_index: 0 }
    event('response.output_item.added', { output_index: 0, item: responsesMessage('in_progress', undefined) })
    event('response.content_part.added', { ...at, part: responsesText('') })
    for (const delta of OPENAI_TEXT) {
      event('response.output_text.delta', { ...at, delta, logprobs: [] })
      if (d.streamError) return failed()
    }
    event('response.output_text.done', { ...at, text, logprobs: [] })
    event('response.content_part.done', { ...at, part: responsesText(text) })
    done = responsesMessage('completed', text)
  }
  event('response.output_item.done', { output_index: 0, item: done })
  event('response.completed', { response: responsesObject(model, d, 'completed', [done]) })
  return frames
}

function anthropicAnswer(model: string, d: Directives): unknown {
  const answer = d.tools
    ? [{ type: 'tool_use', id: 'toolu_fake_1', name: TOOL_CALL.name, input: JSON.parse(TOOL_CALL.arguments) }]
    : [{ type: 'text', text: ANTHROPIC_TEXT.join('') }]
  const thinking = d.thinking ? [{ type: 'thinking', thinking: THINKING_TEXT.join(''), signature: THINKING_SIGNATURE }] : []
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content: [...thinking, ...answer],
    stop_reason: d.tools ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: anthropicUsage(d, FAKE_USAGE.anthropic.output),
  }
}

function anthropicFrames(model: string, d: Directives): Uint8Array[] {
  const message = {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
    usage: anthropicUsage(d, 1),
  }
  const frames = [sse({ type: 'message_start', message }, 'message_start')]
  const delta = (index: number, value: unknown) =>
    frames.push(sse({ type: 'content_block_delta', index, delta: value }, 'content_block_delta'))
  const failed = () => {
    frames.push(sse({ type: 'error', error: { type: 'overloaded_error', message: STREAM_ERROR_MESSAGE.anthropic } }, 'error'))
    return frames
  }
  let index = 0
  if (d.thinking) {
    frames.push(
      sse(
        { type: 'content_block_start', index, content_block: { type: 'thinking', thinking: '', signature: '' } },
        'content_block_start',
      ),
    )
    for (const thinking of THINKING_TEXT) delta(index, { type: 'thinking_delta', thinking })
    delta(index, { type: 'signature_delta', signature: THINKING_SIGNATURE })
    frames.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'))
    index += 1
  }
  if (d.tools) {
    frames.push(
      sse(
        {
          type: 'content_block_start',
          index,
          content_block: { type: 'tool_use', id: 'toolu_fake_1', name: TOOL_CALL.name, input: {} },
        },
        'content_block_start',
      ),
    )
    if (d.streamError) return failed()
    delta(index, { type: 'input_json_delta', partial_json: TOOL_CALL.arguments })
  } else {
    frames.push(sse({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } }, 'content_block_start'))
    frames.push(sse({ type: 'ping' }, 'ping'))
    for (const text of ANTHROPIC_TEXT) {
      delta(index, { type: 'text_delta', text })
      if (d.streamError) return failed()
    }
  }
  frames.push(sse({ type: 'content_block_stop', index }, 'content_block_stop'))
  frames.push(
    sse(
      {
        type: 'message_delta',
        delta: { stop_reason: d.tools ? 'tool_use' : 'end_turn', stop_sequence: null },
        usage: { output_tokens: FAKE_USAGE.anthropic.output },
      },
      'message_delta',
    ),
  )
  frames.push(sse({ type: 'message_stop' }, 'message_stop'))
  return frames
}

/** The error types (and OpenAI's codes) the real providers answer each status with. */
function anthropicErrorType(status: number): string {
  const types: Record<number, string> = {
    400: 'invalid_request_error',
    401: 'authentication_error',
    402: 'billing_error',
    403: 'permission_error',
    404: 'not_found_error',
    413: 'request_too_large',
    429: 'rate_limit_error',
    500: 'api_error',
    504: 'timeout_error',
    529: 'overloaded_error',
  }
  return types[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error')
}

function openaiError(status: number): { type: string; code: string | null } {
  if (status === 429) return { type: 'requests', code: 'rate_limit_exceeded' }
  if (status === 401) return { type: 'invalid_request_error', code: 'invalid_api_key' }
  if (status === 404) return { type: 'invalid_request_error', code: 'model_not_found' }
  if (status < 500) return { type: 'invalid_request_error', code: null }
  return { type: 'server_error', code: null }
}

function errorAnswer(anthropic: boolean, status: number, headers: Record<string, string>): Response {
  const message = `fake provider error ${status}`
  const body = anthropic
    ? { type: 'error', error: { type: anthropicErrorType(status), message } }
    : { error: { message, ...openaiError(status), param: null } }
  return Response.json(body, { status, headers })
}

/** The headers every answer of the fake carries: its request id and its rate-limit state, as each provider names them. */
function providerHeaders(anthropic: boolean, n: number): Record<string, string> {
  const requestId = `req_fake_${n}`
  if (anthropic) {
    const limit = FAKE_RATE_LIMIT.anthropic
    return {
      'request-id': requestId,
      'anthropic-ratelimit-requests-limit': String(limit),
      'anthropic-ratelimit-requests-remaining': String(Math.max(0, limit - n)),
    }
  }
  const limit = FAKE_RATE_LIMIT.openai
  return {
    'x-request-id': requestId,
    'x-ratelimit-limit-requests': String(limit),
    'x-ratelimit-remaining-requests': String(Math.max(0, limit - n)),
  }
}

/** A request as the fake read it: its directives' text, its body (JSON, or a multipart's text fields), a multipart's bytes and file. */
interface Received {
  raw: string
  body: Record<string, unknown>
  rawBody?: Uint8Array
  file?: ReceivedFile
  /** A multipart body whose form could not be parsed. */
  unreadable?: boolean
}

/** Reads a request's body: a multipart form as a form (never as JSON), anything else as JSON, as the fake always has. */
async function receive(request: Request): Promise<Received> {
  const contentType = request.headers.get('content-type') ?? ''
  if (!contentType.toLowerCase().startsWith('multipart/form-data')) {
    const raw = await request.text()
    return { raw, body: (JSON.parse(raw || '{}') as Record<string, unknown>) ?? {} }
  }
  const rawBody = new Uint8Array(await request.arrayBuffer())
  const form = await new Response(rawBody, { headers: { 'content-type': contentType } }).formData().catch(() => undefined)
  if (!form) return { raw: '', body: {}, rawBody, unreadable: true }
  const body: Record<string, string> = {}
  let file: ReceivedFile | undefined
  for (const [field, value] of form.entries()) {
    if (typeof value === 'string') body[field] = value
    else file ??= { field, name: value.name, type: value.type, bytes: new Uint8Array(await value.arrayBuffer()) }
  }
  return { raw: Object.values(body).join('\n'), body, rawBody, file }
}

const isMessageBatchPath = (path: string) => path === '/v1/messages/batches' || path.startsWith('/v1/messages/batches/')

/** The seconds the fake's objects are stamped with, and the same moments in RFC 3339 for Anthropic's. */
const CREATED_AT = 1_700_000_000
const iso = (seconds: number) => new Date(seconds * 1000).toISOString()

function openaiRefusal(status: number, message: string, param: string | null, headers: Record<string, string>): Response {
  const code = status === 401 ? 'invalid_api_key' : null
  return Response.json({ error: { message, type: 'invalid_request_error', param, code } }, { status, headers })
}

const anthropicRefusal = (status: number, message: string, headers: Record<string, string>): Response =>
  Response.json({ type: 'error', error: { type: anthropicErrorType(status), message } }, { status, headers })

const MODERATION_CATEGORIES = [
  'harassment',
  'harassment/threatening',
  'hate',
  'hate/threatening',
  'illicit',
  'illicit/violent',
  'self-harm',
  'self-harm/instructions',
  'self-harm/intent',
  'sexual',
  'sexual/minors',
  'violence',
  'violence/graphic',
] as const

function moderationAnswer(model: string): unknown {
  const each = <T>(value: T) => Object.fromEntries(MODERATION_CATEGORIES.map((category) => [category, value]))
  return {
    id: 'modr-fake',
    model,
    results: [
      {
        flagged: false,
        categories: each(false),
        category_scores: each(0.0001),
        category_applied_input_types: each(['text']),
      },
    ],
  }
}

const SPEECH_TYPES: Record<string, string> = {
  mp3: 'audio/mpeg',
  opus: 'audio/ogg',
  aac: 'audio/aac',
  flac: 'audio/flac',
  wav: 'audio/wav',
  pcm: 'audio/pcm',
}

/** The OpenAI model endpoints besides chat, completions, embeddings and responses; undefined for other paths. */
function modelEndpointAnswer(path: string, call: Received, headers: Record<string, string>): Response | undefined {
  const { body } = call
  if (path === '/v1/images/generations')
    return Response.json({ created: CREATED_AT, data: [{ url: FAKE_IMAGE_URL }] }, { headers })
  if (path === '/v1/moderations')
    return Response.json(moderationAnswer(typeof body.model === 'string' ? body.model : 'omni-moderation-latest'), { headers })
  if (path === '/v1/audio/speech') {
    const type = SPEECH_TYPES[typeof body.response_format === 'string' ? body.response_format : 'mp3'] ?? 'audio/mpeg'
    return new Response(FAKE_SPEECH, { headers: { 'content-type': type, ...headers } })
  }
  if (path !== '/v1/audio/transcriptions' && path !== '/v1/audio/translations') return undefined
  if (!call.rawBody) return openaiRefusal(400, 'Invalid Content-Type header, expected multipart/form-data', null, headers)
  if (call.unreadable) return openaiRefusal(400, 'Could not parse multipart form', null, headers)
  if (call.file?.field !== 'file') return openaiRefusal(400, "Missing required parameter: 'file'.", 'file', headers)
  if (typeof body.model !== 'string') return openaiRefusal(400, "Missing required parameter: 'model'.", 'model', headers)
  const text = path === '/v1/audio/translations' ? FAKE_TRANSLATION : FAKE_TRANSCRIPT
  const format = typeof body.response_format === 'string' ? body.response_format : 'json'
  if (format === 'text' || format === 'srt' || format === 'vtt')
    return new Response(text, { headers: { 'content-type': 'text/plain; charset=utf-8', ...headers } })
  if (format === 'verbose_json')
    return Response.json(
      { task: path.slice('/v1/audio/'.length, -1), language: 'english', duration: 1, text, segments: [] },
      { headers },
    )
  return Response.json({ text }, { headers })
}

interface StoredMessageBatch {
  requests: Array<{ custom_id: string; model: string }>
  cancelled: boolean
}

/** What the fake keeps of files and batches, and how many it has made (for their ids). */
interface ProviderStore {
  made: number
  files: Map<string, { object: Record<string, unknown>; bytes: Uint8Array }>
  batches: Map<string, Record<string, unknown>>
  messageBatches: Map<string, StoredMessageBatch>
}

/** A page of a list in OpenAI's shape. */
const openaiList = (data: Array<Record<string, unknown>>) => ({
  object: 'list',
  data,
  first_id: data[0]?.id ?? null,
  last_id: data.at(-1)?.id ?? null,
  has_more: false,
})

/** OpenAI's files and batches; undefined for other paths. */
function openaiProviderApi(
  store: ProviderStore,
  method: string,
  path: string,
  call: Received,
  headers: Record<string, string>,
): Response | undefined {
  const [, , family, id, action, ...rest] = path.split('/')
  if (path.split('/')[1] !== 'v1' || (family !== 'files' && family !== 'batches')) return undefined
  const invalid = () => openaiRefusal(404, `Invalid URL (${method} ${path})`, null, headers)
  if (rest.length > 0) return invalid()
  if (family === 'files') {
    if (id === undefined) {
      if (method === 'GET') return Response.json(openaiList([...store.files.values()].map((f) => f.object)), { headers })
      if (method !== 'POST') return invalid()
      if (!call.rawBody) return openaiRefusal(400, 'Invalid Content-Type header, expected multipart/form-data', null, headers)
      if (call.unreadable) return openaiRefusal(400, 'Could not parse multipart form', null, headers)
      if (call.file?.field !== 'file') return openaiRefusal(400, "Missing required parameter: 'file'.", 'file', headers)
      if (typeof call.body.purpose !== 'string')
        return openaiRefusal(400, "Missing required parameter: 'purpose'.", 'purpose', headers)
      store.made += 1
      const object = {
        id: `file-${store.made}`,
        object: 'file',
        bytes: call.file.bytes.byteLength,
        created_at: CREATED_AT,
        filename: call.file.name,
        purpose: call.body.purpose,
        status: 'processed',
      }
      store.files.set(object.id, { object, bytes: call.file.bytes })
      return Response.json(object, { headers })
    }
    const stored = store.files.get(id)
    if (!stored) return openaiRefusal(404, `No such File object: ${id}`, 'id', headers)
    if (action === 'content' && method === 'GET')
      return new Response(stored.bytes, { headers: { 'content-type': 'application/octet-stream', ...headers } })
    if (action !== undefined) return invalid()
    if (method === 'GET') return Response.json(stored.object, { headers })
    if (method !== 'DELETE') return invalid()
    store.files.delete(id)
    return Response.json({ id, object: 'file', deleted: true }, { headers })
  }
  if (id === undefined) {
    if (method === 'GET') return Response.json(openaiList([...store.batches.values()]), { headers })
    if (method !== 'POST') return invalid()
    const { input_file_id: fileId, endpoint, completion_window: window } = call.body
    for (const [name, value] of Object.entries({ input_file_id: fileId, endpoint, completion_window: window }))
      if (typeof value !== 'string') return openaiRefusal(400, `Missing required parameter: '${name}'.`, name, headers)
    const input = store.files.get(fileId as string)
    if (!input) return openaiRefusal(400, `Invalid 'input_file_id': no such file ${String(fileId)}`, 'input_file_id', headers)
    store.made += 1
    const total = new TextDecoder()
      .decode(input.bytes)
      .split('\n')
      .filter((line) => line.trim() !== '').length
    const batch = {
      id: `batch_${store.made}`,
      object: 'batch',
      endpoint,
      input_file_id: fileId,
      completion_window: window,
      status: 'validating',
      created_at: CREATED_AT,
      expires_at: CREATED_AT + 86_400,
      request_counts: { total, completed: 0, failed: 0 },
      metadata: isRecord(call.body.metadata) ? call.body.metadata : null,
    }
    store.batches.set(batch.id, batch)
    return Response.json(batch, { headers })
  }
  const batch = store.batches.get(id)
  if (!batch) return openaiRefusal(404, `No batch found with id '${id}'.`, null, headers)
  if (action === undefined && method === 'GET') return Response.json(batch, { headers })
  if (action !== 'cancel' || method !== 'POST') return invalid()
  Object.assign(batch, { status: 'cancelling', cancelling_at: CREATED_AT + 1 })
  return Response.json(batch, { headers })
}

const NO_DIRECTIVES = directives('')

/** A message batch as Anthropic shows it: in progress when created, ended (or canceling) on every later read. */
function messageBatchView(origin: string, id: string, batch: StoredMessageBatch, justCreated = false) {
  const status = justCreated ? 'in_progress' : batch.cancelled ? 'canceling' : 'ended'
  const count = batch.requests.length
  const ended = status === 'ended'
  return {
    id,
    type: 'message_batch',
    processing_status: status,
    request_counts: { processing: ended ? 0 : count, succeeded: ended ? count : 0, errored: 0, canceled: 0, expired: 0 },
    ended_at: ended ? iso(CREATED_AT + 60) : null,
    created_at: iso(CREATED_AT),
    expires_at: iso(CREATED_AT + 86_400),
    archived_at: null,
    cancel_initiated_at: batch.cancelled ? iso(CREATED_AT + 1) : null,
    results_url: ended ? `${origin}/v1/messages/batches/${id}/results` : null,
  }
}

/** Anthropic's message batches; undefined for other paths. */
function anthropicProviderApi(
  store: ProviderStore,
  origin: string,
  method: string,
  path: string,
  call: Received,
  headers: Record<string, string>,
): Response | undefined {
  if (!isMessageBatchPath(path)) return undefined
  const [id, action, ...rest] = path.slice('/v1/messages/batches/'.length).split('/')
  const invalid = () => anthropicRefusal(404, `Not found: ${method} ${path}`, headers)
  if (rest.length > 0) return invalid()
  if (path === '/v1/messages/batches') {
    if (method === 'GET') {
      const data = [...store.messageBatches].map(([key, batch]) => messageBatchView(origin, key, batch))
      return Response.json(
        { data, has_more: false, first_id: data[0]?.id ?? null, last_id: data.at(-1)?.id ?? null },
        { headers },
      )
    }
    if (method !== 'POST') return invalid()
    const requests = Array.isArray(call.body.requests) ? call.body.requests : []
    const valid = requests.every((r) => isRecord(r) && typeof r.custom_id === 'string' && isRecord(r.params))
    if (requests.length === 0 || !valid)
      return anthropicRefusal(400, 'requests: a non-empty list of {custom_id, params} is required', headers)
    store.made += 1
    const batchId = `msgbatch_${store.made}`
    const batch: StoredMessageBatch = {
      requests: requests.map((r) => {
        const { custom_id, params } = r as { custom_id: string; params: Record<string, unknown> }
        return { custom_id, model: typeof params.model === 'string' ? params.model : 'unknown' }
      }),
      cancelled: false,
    }
    store.messageBatches.set(batchId, batch)
    return Response.json(messageBatchView(origin, batchId, batch, true), { headers })
  }
  const batch = id === undefined ? undefined : store.messageBatches.get(id)
  if (id === undefined || !batch) return anthropicRefusal(404, `No message batch found with id ${id}`, headers)
  if (action === undefined && method === 'GET') return Response.json(messageBatchView(origin, id, batch), { headers })
  if (action === undefined && method === 'DELETE') {
    store.messageBatches.delete(id)
    return Response.json({ id, type: 'message_batch_deleted' }, { headers })
  }
  if (action === 'cancel' && method === 'POST') {
    batch.cancelled = true
    return Response.json(messageBatchView(origin, id, batch), { headers })
  }
  if (action !== 'results' || method !== 'GET') return invalid()
  if (batch.cancelled) return anthropicRefusal(404, `Message batch ${id} has no results: it was cancelled`, headers)
  const lines = batch.requests.map(({ custom_id, model }, i) =>
    JSON.stringify({
      custom_id,
      result: {
        type: 'succeeded',
        message: { ...(anthropicAnswer(model, NO_DIRECTIVES) as object), id: `msg_fake_batch_${i + 1}` },
      },
    }),
  )
  // The SDK asks for application/binary and reads the bytes as JSONL whatever their type.
  return new Response(`${lines.join('\n')}\n`, { headers: { 'content-type': 'application/binary', ...headers } })
}

/** The provider APIs that need the caller's own key: OpenAI's files and batches, Anthropic's message batches. */
const needsKey = (path: string) => isMessageBatchPath(path) || /^\/v1\/(files|batches)(\/|$)/.test(path)

function missingKey(anthropic: boolean, headers: Headers): boolean {
  if (anthropic) return !headers.get('x-api-key')
  return !/^Bearer \S+/.test(headers.get('authorization') ?? '')
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const calls: RecordedCall[] = []
  const state = { cancelledStreams: 0 }
  let rules: SteeringRule[] = []
  /** The directives the steering rules add to a call, counting the call against a rule with `times`. */
  const steered = (model: unknown, headers: Headers): string => {
    const key = headers.get('x-api-key') ?? headers.get('authorization')?.replace(/^Bearer /, '')
    const rule = rules.findLast((r) => (r.model === undefined || r.model === model) && (r.key === undefined || r.key === key))
    if (!rule) return ''
    if (rule.times !== undefined) {
      rule.times -= 1
      if (rule.times <= 0) rules = rules.filter((r) => r !== rule)
    }
    return ` ${rule.directives}`
  }
  const store: ProviderStore = { made: 0, files: new Map(), batches: new Map(), messageBatches: new Map() }
  let origin = ''

  const stream = (frames: Uint8Array[], d: Directives, signal: AbortSignal, headers: Record<string, string>) =>
    new Response(
      new ReadableStream<Uint8Array>({
        async start(controller) {
          const limit = d.midstreamFail ? 2 : frames.length
          for (let i = 0; i < limit; i++) {
            if (signal.aborted) return
            controller.enqueue(frames[i] as Uint8Array)
            if (d.slowMs > 0) await Bun.sleep(d.slowMs)
            if (i === 0 && d.pauseMs > 0) await Bun.sleep(d.pauseMs)
          }
          if (d.midstreamFail) {
            // The frames go out first, so the break comes mid-stream, after the answer's headers.
            await Bun.sleep(20)
            controller.error(new Error('fake provider broke the stream'))
          } else controller.close()
        },
        cancel() {
          state.cancelledStreams += 1
        },
      }),
      { headers: { 'content-type': 'text/event-stream', ...headers } },
    )

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const received = await receive(request)
      const { raw, body } = received
      const n = calls.length + 1
      calls.push({
        path: url.pathname,
        method: request.method,
        query: url.search,
        headers: Object.fromEntries(request.headers),
        body,
        ...(received.rawBody ? { rawBody: received.rawBody } : {}),
        ...(received.file ? { file: received.file } : {}),
        requestId: `req_fake_${n}`,
        receivedAt: Date.now(),
      })
      const parsed = directives(raw + steered(body.model, request.headers))
      const d = { ...parsed, tools: parsed.tools || (parsed.toolsOnce && !hasToolResult(url.pathname, body)) }
      const anthropic =
        url.pathname === '/v1/messages' || url.pathname === '/v1/messages/count_tokens' || isMessageBatchPath(url.pathname)
      const headers = providerHeaders(anthropic, n)
      if (needsKey(url.pathname) && missingKey(anthropic, request.headers))
        return anthropic
          ? anthropicRefusal(401, 'x-api-key header is required', headers)
          : openaiRefusal(401, 'You did not provide an API key.', null, headers)
      const model = typeof body.model === 'string' ? body.model : 'unknown'
      if (d.hang) {
        await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }))
        return new Response(null, { status: 499, headers })
      }
      if (d.delayMs > 0) await Bun.sleep(d.delayMs)
      if (d.drop) {
        const broken = new ReadableStream<Uint8Array>({
          async start(controller) {
            await Bun.sleep(5)
            controller.error(new Error('fake provider dropped the connection'))
          },
        })
        const type = body.stream === true ? 'text/event-stream' : 'application/json'
        return new Response(broken, { headers: { 'content-type': type, ...headers } })
      }
      if (d.stall) {
        // Headers now; the body's bytes never come, and the connection ends when the caller's does.
        const silent = new ReadableStream<Uint8Array>({
          start(controller) {
            request.signal.addEventListener('abort', () => controller.close(), { once: true })
          },
        })
        const type = body.stream === true ? 'text/event-stream' : 'application/json'
        return new Response(silent, { headers: { 'content-type': type, ...headers } })
      }
      if (d.error)
        return errorAnswer(
          anthropic,
          d.error,
          d.retryAfter === undefined ? headers : { ...headers, 'retry-after': String(d.retryAfter) },
        )
      const answered =
        modelEndpointAnswer(url.pathname, received, headers) ??
        openaiProviderApi(store, request.method, url.pathname, received, headers) ??
        anthropicProviderApi(store, origin, request.method, url.pathname, received, headers)
      if (answered) return answered
      if (url.pathname === '/v1/messages/count_tokens') return Response.json({ input_tokens: fakeTokenCount(body) }, { headers })
      if (body.stream === true) {
        const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true
        const frames = anthropic
          ? anthropicFrames(model, d)
          : url.pathname === '/v1/responses'
            ? responsesFrames(model, d)
            : url.pathname === '/v1/completions'
              ? completionFrames(model, d, includeUsage)
              : openaiFrames(model, d, includeUsage)
        return stream(frames, d, request.signal, headers)
      }
      const answer = JSON.stringify(anthropic ? anthropicAnswer(model, d) : openaiAnswer(url.pathname, model, d))
      if (d.gzip)
        return new Response(Bun.gzipSync(answer), {
          headers: { 'content-type': 'application/json', 'content-encoding': 'gzip', ...headers },
        })
      return new Response(answer, { headers: { 'content-type': 'application/json', ...headers } })
    },
  })
  const url = `http://127.0.0.1:${server.port}`
  origin = url
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    calls,
    get cancelledStreams() {
      return state.cancelledStreams
    },
    steer(rule) {
      rules.push({ ...rule })
    },
    unsteer() {
      rules = []
    },
    async close() {
      await server.stop(true)
    },
  }
}

/** The harness's provider settings for a fake provider: both families behind it, with operator keys. */
export const providersAt = (fake: FakeProvider, apiKey = 'sk-operator') => ({
  openai: { apiKey, baseUrl: fake.openaiBaseUrl },
  anthropic: { apiKey, baseUrl: fake.anthropicBaseUrl },
})
