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
 * Every answer (success, error, stream) carries the provider's request id, `x-request-id` on OpenAI's
 * paths and `request-id` on Anthropic's, `req_fake_<n>` where n is the call's position in `calls`
 * (from 1), and its rate-limit headers (`x-ratelimit-limit-requests`/`x-ratelimit-remaining-requests`,
 * or `anthropic-ratelimit-requests-limit`/`-remaining`). The Responses API streams its own events
 * (response.created ... response.completed); `POST /v1/messages/count_tokens` answers
 * `{input_tokens: fakeTokenCount(body)}`.
 */

export interface RecordedCall {
  path: string
  headers: Record<string, string>
  body: Record<string, unknown>
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
  close(): Promise<void>
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

export async function startFakeProvider(): Promise<FakeProvider> {
  const calls: RecordedCall[] = []
  const state = { cancelledStreams: 0 }

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
      const raw = await request.text()
      const body = (JSON.parse(raw || '{}') as Record<string, unknown>) ?? {}
      const n = calls.length + 1
      calls.push({
        path: url.pathname,
        headers: Object.fromEntries(request.headers),
        body,
        requestId: `req_fake_${n}`,
        receivedAt: Date.now(),
      })
      const parsed = directives(raw)
      const d = { ...parsed, tools: parsed.tools || (parsed.toolsOnce && !hasToolResult(url.pathname, body)) }
      const anthropic = url.pathname === '/v1/messages' || url.pathname === '/v1/messages/count_tokens'
      const headers = providerHeaders(anthropic, n)
      const model = typeof body.model === 'string' ? body.model : 'unknown'
      if (d.hang) {
        await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }))
        return new Response(null, { status: 499, headers })
      }
      if (d.delayMs > 0) await Bun.sleep(d.delayMs)
      if (d.error)
        return errorAnswer(
          anthropic,
          d.error,
          d.retryAfter === undefined ? headers : { ...headers, 'retry-after': String(d.retryAfter) },
        )
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
  return {
    url,
    openaiBaseUrl: `${url}/v1`,
    anthropicBaseUrl: url,
    calls,
    get cancelledStreams() {
      return state.cancelledStreams
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
