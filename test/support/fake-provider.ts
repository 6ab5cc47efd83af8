/**
 * A fake model provider on loopback that speaks both OpenAI's and Anthropic's APIs, so the gateway's
 * tests never call a real one. A test steers it with directives anywhere in the request body:
 *
 *   fake:error:<status>   answer with that status and the provider's error shape
 *   fake:midstream-fail   stream a few frames, then break the connection
 *   fake:slow:<ms>        wait that long between stream frames
 *   fake:hang             never answer (until the caller gives up)
 *   fake:delay:<ms>       wait that long before answering
 *   fake:pause:<ms>       stream the first frame, then go quiet that long once
 *   fake:gzip             gzip the (non-streamed) answer
 *   fake:cache            report prompt-cache tokens in the usage
 *   fake:tools            answer with a tool call instead of text
 */

export interface RecordedCall {
  path: string
  headers: Record<string, string>
  body: Record<string, unknown>
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

/** Usage the fake reports: fixed numbers, so tests can price them by hand. */
export const FAKE_USAGE = {
  openai: { prompt: 1_000, completion: 500, cached: 400 },
  anthropic: { input: 1_000, output: 500, cacheRead: 2_000, cacheWrite: 3_000 },
}

const encoder = new TextEncoder()
const sse = (data: unknown, event?: string) =>
  encoder.encode(`${event ? `event: ${event}\n` : ''}data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)

interface Directives {
  error?: number
  midstreamFail: boolean
  slowMs: number
  delayMs: number
  pauseMs: number
  hang: boolean
  gzip: boolean
  cache: boolean
  tools: boolean
}

function directives(raw: string): Directives {
  const error = /fake:error:(\d{3})/.exec(raw)?.[1]
  const slow = /fake:slow:(\d+)/.exec(raw)?.[1]
  const delay = /fake:delay:(\d+)/.exec(raw)?.[1]
  const pause = /fake:pause:(\d+)/.exec(raw)?.[1]
  return {
    error: error ? Number(error) : undefined,
    midstreamFail: raw.includes('fake:midstream-fail'),
    slowMs: slow ? Number(slow) : 0,
    delayMs: delay ? Number(delay) : 0,
    pauseMs: pause ? Number(pause) : 0,
    hang: raw.includes('fake:hang'),
    gzip: raw.includes('fake:gzip'),
    cache: raw.includes('fake:cache'),
    tools: raw.includes('fake:tools'),
  }
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
      choices: [{ index: 0, text: OPENAI_TEXT.join(''), finish_reason: 'stop' }],
      usage: openaiUsage(d),
    }
  }
  if (path === '/v1/responses') {
    const { prompt, completion } = FAKE_USAGE.openai
    return {
      id: 'resp_fake',
      object: 'response',
      model,
      status: 'completed',
      output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: OPENAI_TEXT.join('') }] }],
      usage: {
        input_tokens: prompt,
        output_tokens: completion,
        total_tokens: prompt + completion,
        input_tokens_details: { cached_tokens: 0 },
      },
    }
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
    frames.push(sse(chunk({ tool_calls: [{ index: 0, function: { arguments: TOOL_CALL.arguments } }] })))
  } else {
    for (const text of OPENAI_TEXT) frames.push(sse(chunk({ content: text })))
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

function anthropicAnswer(model: string, d: Directives): unknown {
  const content = d.tools
    ? [{ type: 'tool_use', id: 'toolu_fake_1', name: TOOL_CALL.name, input: JSON.parse(TOOL_CALL.arguments) }]
    : [{ type: 'text', text: ANTHROPIC_TEXT.join('') }]
  return {
    id: 'msg_fake',
    type: 'message',
    role: 'assistant',
    model,
    content,
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
  if (d.tools) {
    frames.push(
      sse(
        {
          type: 'content_block_start',
          index: 0,
          content_block: { type: 'tool_use', id: 'toolu_fake_1', name: TOOL_CALL.name, input: {} },
        },
        'content_block_start',
      ),
    )
    frames.push(
      sse(
        { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: TOOL_CALL.arguments } },
        'content_block_delta',
      ),
    )
  } else {
    frames.push(sse({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }, 'content_block_start'))
    frames.push(sse({ type: 'ping' }, 'ping'))
    for (const text of ANTHROPIC_TEXT)
      frames.push(sse({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }, 'content_block_delta'))
  }
  frames.push(sse({ type: 'content_block_stop', index: 0 }, 'content_block_stop'))
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

function errorAnswer(anthropic: boolean, status: number): Response {
  const message = `fake provider error ${status}`
  const body = anthropic
    ? { type: 'error', error: { type: 'api_error', message } }
    : { error: { message, type: 'server_error', code: null, param: null } }
  return Response.json(body, { status })
}

export async function startFakeProvider(): Promise<FakeProvider> {
  const calls: RecordedCall[] = []
  const state = { cancelledStreams: 0 }

  const stream = (frames: Uint8Array[], d: Directives, signal: AbortSignal) =>
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
          if (d.midstreamFail) controller.error(new Error('fake provider broke the stream'))
          else controller.close()
        },
        cancel() {
          state.cancelledStreams += 1
        },
      }),
      { headers: { 'content-type': 'text/event-stream' } },
    )

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const raw = await request.text()
      const body = (JSON.parse(raw || '{}') as Record<string, unknown>) ?? {}
      calls.push({ path: url.pathname, headers: Object.fromEntries(request.headers), body })
      const d = directives(raw)
      const anthropic = url.pathname === '/v1/messages'
      const model = typeof body.model === 'string' ? body.model : 'unknown'
      if (d.hang) {
        await new Promise<void>((resolve) => request.signal.addEventListener('abort', () => resolve(), { once: true }))
        return new Response(null, { status: 499 })
      }
      if (d.delayMs > 0) await Bun.sleep(d.delayMs)
      if (d.error) return errorAnswer(anthropic, d.error)
      if (body.stream === true) {
        const includeUsage = (body.stream_options as { include_usage?: boolean } | undefined)?.include_usage === true
        return stream(anthropic ? anthropicFrames(model, d) : openaiFrames(model, d, includeUsage), d, request.signal)
      }
      const answer = JSON.stringify(anthropic ? anthropicAnswer(model, d) : openaiAnswer(url.pathname, model, d))
      if (d.gzip)
        return new Response(Bun.gzipSync(answer), { headers: { 'content-type': 'application/json', 'content-encoding': 'gzip' } })
      return new Response(answer, { headers: { 'content-type': 'application/json' } })
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
