/**
 * The model provider every arm calls: OpenAI's POST /v1/chat/completions, plain and streamed, with the
 * usage gw needs to price the call. It runs as its own process so it never competes with the load
 * client's event loop, and answers from precomputed bytes so it is not the bottleneck.
 *
 *   FAKE_PORT=9000 FAKE_LATENCY_MS=0 bun bench/overhead/fake-provider.ts
 *
 * GET /stats answers {"calls": n}: how many chat completions it served, so the suite can prove an arm
 * really reached it. A model whose name starts with `failing` is answered 500 at once (in OpenAI's
 * error shape): the routing benchmark's failing step.
 */

const port = Number(process.env.FAKE_PORT ?? 0)
const latencyMs = Number(process.env.FAKE_LATENCY_MS ?? 0)
if (!Number.isInteger(port) || !(latencyMs >= 0)) throw new Error('FAKE_PORT must be an integer, FAKE_LATENCY_MS >= 0')

const TEXT = ['Hello', ' from', ' the fake', ' provider.']
const USAGE = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 }
const CREATED = 1_700_000_000
const encoder = new TextEncoder()

interface Answers {
  json: string
  frames: Uint8Array[]
  usageFrame: Uint8Array
}

const frame = (data: unknown) => encoder.encode(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)

function answersFor(model: string): Answers {
  const chunk = (delta: unknown, finish: string | null = null) => ({
    id: 'chatcmpl-bench',
    object: 'chat.completion.chunk',
    created: CREATED,
    model,
    choices: [{ index: 0, delta, finish_reason: finish }],
  })
  return {
    json: JSON.stringify({
      id: 'chatcmpl-bench',
      object: 'chat.completion',
      created: CREATED,
      model,
      choices: [{ index: 0, message: { role: 'assistant', content: TEXT.join('') }, finish_reason: 'stop', logprobs: null }],
      usage: USAGE,
    }),
    frames: [
      frame(chunk({ role: 'assistant', content: '' })),
      ...TEXT.map((content) => frame(chunk({ content }))),
      frame(chunk({}, 'stop')),
    ],
    usageFrame: frame({ ...chunk({}), choices: [], usage: USAGE }),
  }
}

// The arms send one model; the cache keeps the per-request work to a JSON.parse and a lookup.
const cache = new Map<string, Answers>()
const answers = (model: string): Answers => {
  let found = cache.get(model)
  if (!found) {
    found = answersFor(model)
    cache.set(model, found)
  }
  return found
}

const DONE = frame('[DONE]')
const FAILURE = JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } })
const JSON_HEADERS = { 'content-type': 'application/json' }
const SSE_HEADERS = { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' }

/** One frame per pull, so the stream leaves as separate writes the way a provider's tokens do. */
function stream(frames: Uint8Array[]): Response {
  let next = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const item = frames[next++]
      if (item) controller.enqueue(item)
      else controller.close()
    },
  })
  return new Response(body, { headers: SSE_HEADERS })
}

interface ChatBody {
  model?: unknown
  stream?: unknown
  stream_options?: { include_usage?: unknown }
}

let calls = 0

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  idleTimeout: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url)
    if (pathname === '/stats') return Response.json({ calls })
    if (request.method !== 'POST' || pathname !== '/v1/chat/completions') return new Response('not found', { status: 404 })
    const body = (await request.json()) as ChatBody
    calls += 1
    if (latencyMs > 0) await Bun.sleep(latencyMs)
    const model = typeof body.model === 'string' ? body.model : 'unknown'
    if (model.startsWith('failing')) return new Response(FAILURE, { status: 500, headers: JSON_HEADERS })
    const found = answers(model)
    if (body.stream !== true) return new Response(found.json, { headers: JSON_HEADERS })
    const withUsage = body.stream_options?.include_usage === true
    return stream(withUsage ? [...found.frames, found.usageFrame, DONE] : [...found.frames, DONE])
  },
})

console.log(JSON.stringify({ port: server.port }))
