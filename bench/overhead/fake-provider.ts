/**
 * The model provider every arm calls, in each wire format gw reaches, plain and streamed, with the
 * usage gw needs to price the call. It runs as its own process so it never competes with the load
 * client's event loop, and answers from precomputed bytes so it is not the bottleneck.
 *
 *   FAKE_PORT=9000 FAKE_LATENCY_MS=0 bun bench/overhead/fake-provider.ts
 *
 *   POST /v1/chat/completions                                 OpenAI (and every OpenAI-compatible vendor)
 *   POST /openai/deployments/{deployment}/chat/completions    Azure OpenAI: OpenAI's answers, without Azure's
 *                                                             content-filter fields, so the Azure arm differs
 *                                                             from OpenAI's only in how gw addresses it
 *   POST /v1/messages                                         Anthropic's Messages
 *   POST /v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse
 *                                                             the Gemini API (usage on every chunk)
 *   POST /v1/projects/{p}/locations/{l}/publishers/google/models/{model}:generateContent, ...
 *                                                             Gemini on Vertex (usage on the last chunk only)
 *   POST /token                                               a service account's token endpoint
 *   POST /model/{modelId}/converse, /converse-stream          Bedrock's Converse; the stream in AWS
 *                                                             event-stream frames (AWS's own codec)
 *   POST /model/{modelId}/invoke, /invoke-with-response-stream
 *                                                             Claude through InvokeModel: Anthropic's answer,
 *                                                             its events base64 in `chunk` frames
 *
 * Nothing is authenticated: a Bedrock request's SigV4 signature is not verified, and the token
 * endpoint issues a token for any assertion without checking the JWT's signature. The test fakes
 * (test/support/fake-google.ts, fake-aws-azure.ts) hold gw to those rules; this one only has to be
 * fast, so gw's cost of signing and of making assertions is measured, the provider's of checking them
 * is not. Every format answers the same four pieces of text, so an arm's check reads the same words.
 *
 * GET /stats answers {"calls": n, "routes": {...}}: how many model calls it served, in all and by
 * format (and the token requests, apart), so a benchmark can prove an arm reached the provider it
 * means to. An OpenAI model whose name starts with `failing` is answered 500 at once (in OpenAI's
 * error shape): the routing benchmark's failing step.
 */
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import type { FakeRoute } from './arms'

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
  /** OpenAI's: the chunk only `stream_options.include_usage` asks for. */
  usageFrame?: Uint8Array
  contentType: string
}

const SSE = 'text/event-stream'
const JSON_TYPE = 'application/json'
const EVENT_STREAM = 'application/vnd.amazon.eventstream'

const frame = (data: unknown) => encoder.encode(`data: ${typeof data === 'string' ? data : JSON.stringify(data)}\n\n`)
const namedFrame = (event: string, data: unknown) => encoder.encode(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
/** Google ends its lines with CRLF, and names no event. */
const googleFrame = (data: unknown) => encoder.encode(`data: ${JSON.stringify(data)}\r\n\r\n`)

function openaiAnswers(model: string): Answers {
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
    contentType: SSE,
  }
}

/** Anthropic's answer to the suite's call, and its stream's events in order. */
function anthropicMessage(model: string) {
  const usage = { input_tokens: USAGE.prompt_tokens, output_tokens: USAGE.completion_tokens }
  const message = { id: 'msg_bench', type: 'message', role: 'assistant', model, stop_sequence: null }
  const events: Array<Record<string, unknown> & { type: string }> = [
    { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } },
    { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
    { type: 'ping' },
    ...TEXT.map((text) => ({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } })),
    { type: 'content_block_stop', index: 0 },
    {
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: USAGE.completion_tokens },
    },
    { type: 'message_stop' },
  ]
  return {
    json: JSON.stringify({ ...message, content: [{ type: 'text', text: TEXT.join('') }], stop_reason: 'end_turn', usage }),
    events,
  }
}

function anthropicAnswers(model: string): Answers {
  const { json, events } = anthropicMessage(model)
  return { json, frames: events.map((event) => namedFrame(event.type, event)), contentType: SSE }
}

/** The Gemini API's usage is cumulative on every chunk; Vertex's is on the last one alone (the others name the traffic type). */
function googleAnswers(model: string, vertex: boolean): Answers {
  const usage = (candidates: number) => ({
    promptTokenCount: USAGE.prompt_tokens,
    candidatesTokenCount: candidates,
    totalTokenCount: USAGE.prompt_tokens + candidates,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: USAGE.prompt_tokens }],
    ...(vertex ? { trafficType: 'ON_DEMAND' } : {}),
  })
  const answer = (text: string, usageMetadata: unknown, finished: boolean) => ({
    candidates: [
      {
        content: { role: 'model', parts: [{ text }] },
        ...(finished ? { finishReason: 'STOP' } : {}),
        ...(vertex ? {} : { index: 0 }),
      },
    ],
    usageMetadata,
    modelVersion: model,
    ...(vertex ? { createTime: new Date(CREATED * 1000).toISOString() } : {}),
    responseId: 'benchResponse',
  })
  return {
    json: JSON.stringify(answer(TEXT.join(''), usage(USAGE.completion_tokens), true)),
    frames: TEXT.map((text, i) => {
      const last = i === TEXT.length - 1
      const candidates = Math.round((USAGE.completion_tokens * (i + 1)) / TEXT.length)
      const usageMetadata = vertex && !last ? { trafficType: 'ON_DEMAND' } : usage(candidates)
      return googleFrame(answer(text, usageMetadata, last))
    }),
    contentType: SSE,
  }
}

const codec = new EventStreamCodec(toUtf8, fromUtf8)
const stringHeaders = (headers: Record<string, string>): MessageHeaders =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }]))
/**
 * AWS pads each payload with a `p` field of random length to hide its size; a fixed one here keeps
 * the frames the size Bedrock's are (about as long as the longest padding) and the answers precomputed.
 */
const PADDING = 'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.slice(0, 30)
/** One ConverseStream event as Bedrock frames it: the payload is the event itself, not wrapped in its name. */
const eventFrame = (eventType: string, payload: Record<string, unknown>): Uint8Array =>
  codec.encode({
    headers: stringHeaders({ ':message-type': 'event', ':event-type': eventType, ':content-type': JSON_TYPE }),
    body: fromUtf8(JSON.stringify({ ...payload, p: PADDING })),
  })

function bedrockAnswers(): Answers {
  const usage = {
    inputTokens: USAGE.prompt_tokens,
    outputTokens: USAGE.completion_tokens,
    totalTokens: USAGE.total_tokens,
  }
  return {
    json: JSON.stringify({
      output: { message: { role: 'assistant', content: [{ text: TEXT.join('') }] } },
      stopReason: 'end_turn',
      usage,
      metrics: { latencyMs: 1 },
    }),
    // Text blocks are never started in ConverseStream, only deltas and a stop; `metadata` comes last.
    frames: [
      eventFrame('messageStart', { role: 'assistant' }),
      ...TEXT.map((text) => eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text } })),
      eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
      eventFrame('messageStop', { stopReason: 'end_turn' }),
      eventFrame('metadata', { usage, metrics: { latencyMs: 1 } }),
    ],
    contentType: EVENT_STREAM,
  }
}

/**
 * Claude through Bedrock's InvokeModel: Anthropic's answer, and its events each base64 in the `bytes`
 * of a `chunk` frame, the last with Bedrock's invocation metrics, as Bedrock streams them.
 */
function invokeAnswers(model: string): Answers {
  const { json, events } = anthropicMessage(model)
  const chunk = (event: Record<string, unknown>) =>
    eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64') })
  const metrics = {
    inputTokenCount: USAGE.prompt_tokens,
    outputTokenCount: USAGE.completion_tokens,
    invocationLatency: 1,
    firstByteLatency: 1,
  }
  return {
    json,
    frames: events.map((event) =>
      chunk(event.type === 'message_stop' ? { ...event, 'amazon-bedrock-invocationMetrics': metrics } : event),
    ),
    contentType: EVENT_STREAM,
  }
}

/** A model call's route, its model and whether it streams, read from the path (and, for OpenAI's formats, the body). */
interface Call {
  route: Exclude<FakeRoute, 'token'>
  model?: string
  stream?: boolean
  /** Bedrock's InvokeModel (Claude in Anthropic's format) rather than Converse. */
  invoke?: boolean
}

const GEMINI_PATH = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/
const VERTEX_PATH =
  /^\/v1\/projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/([^/:]+):(generateContent|streamGenerateContent)$/
const BEDROCK_PATH = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/
const AZURE_PATH = /^\/openai\/deployments\/([^/]+)\/chat\/completions$/

function callOf(pathname: string): Call | undefined {
  if (pathname === '/v1/chat/completions') return { route: 'openai' }
  if (pathname === '/v1/messages') return { route: 'anthropic' }
  const gemini = GEMINI_PATH.exec(pathname)
  if (gemini) return { route: 'gemini', model: gemini[1], stream: gemini[2] === 'streamGenerateContent' }
  const vertex = VERTEX_PATH.exec(pathname)
  if (vertex) return { route: 'vertex', model: vertex[1], stream: vertex[2] === 'streamGenerateContent' }
  const bedrock = BEDROCK_PATH.exec(pathname)
  if (bedrock) {
    const operation = bedrock[2] as string
    return {
      route: 'bedrock',
      model: decodeURIComponent(bedrock[1] as string),
      stream: operation.includes('stream'),
      invoke: operation.startsWith('invoke'),
    }
  }
  const azure = AZURE_PATH.exec(pathname)
  if (azure) return { route: 'azure', model: decodeURIComponent(azure[1] as string) }
  return undefined
}

function answersFor({ route, invoke }: Call, model: string): Answers {
  switch (route) {
    case 'openai':
    case 'azure':
      return openaiAnswers(model)
    case 'anthropic':
      return anthropicAnswers(model)
    case 'gemini':
      return googleAnswers(model, false)
    case 'vertex':
      return googleAnswers(model, true)
    case 'bedrock':
      return invoke ? invokeAnswers(model) : bedrockAnswers()
  }
}

// The arms send one model per route; the cache keeps the per-request work to a JSON.parse and a lookup.
const cache = new Map<string, Answers>()
const answers = (call: Call, model: string): Answers => {
  const key = `${call.route}${call.invoke ? ' invoke' : ''} ${model}`
  let found = cache.get(key)
  if (!found) {
    found = answersFor(call, model)
    cache.set(key, found)
  }
  return found
}

const DONE = frame('[DONE]')
const FAILURE = JSON.stringify({ error: { message: 'The server had an error', type: 'server_error', param: null, code: null } })
const JSON_HEADERS = { 'content-type': JSON_TYPE }
/** An hour, as Google's tokens last: gw asks once a run. */
const TOKEN = JSON.stringify({ access_token: 'ya29.bench-token', expires_in: 3_599, token_type: 'Bearer' })

/** One frame per pull, so the stream leaves as separate writes the way a provider's tokens do. */
function stream(frames: Uint8Array[], contentType: string): Response {
  let next = 0
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      const item = frames[next++]
      if (item) controller.enqueue(item)
      else controller.close()
    },
  })
  return new Response(body, { headers: { 'content-type': contentType, 'cache-control': 'no-cache' } })
}

interface Body {
  model?: unknown
  stream?: unknown
  stream_options?: { include_usage?: unknown }
}

let calls = 0
const routes: Record<FakeRoute, number> = { openai: 0, azure: 0, anthropic: 0, gemini: 0, vertex: 0, bedrock: 0, token: 0 }

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  idleTimeout: 0,
  async fetch(request) {
    const { pathname } = new URL(request.url)
    if (pathname === '/stats') return Response.json({ calls, routes })
    if (request.method !== 'POST') return new Response('not found', { status: 404 })
    if (pathname === '/token') {
      await request.arrayBuffer()
      routes.token += 1
      return new Response(TOKEN, { headers: JSON_HEADERS })
    }
    const call = callOf(pathname)
    if (!call) return new Response('not found', { status: 404 })
    const body = (await request.json()) as Body
    calls += 1
    routes[call.route] += 1
    if (latencyMs > 0) await Bun.sleep(latencyMs)
    const model = call.model ?? (typeof body.model === 'string' ? body.model : 'unknown')
    if (call.route === 'openai' && model.startsWith('failing'))
      return new Response(FAILURE, { status: 500, headers: JSON_HEADERS })
    const found = answers(call, model)
    if (!(call.stream ?? body.stream === true)) return new Response(found.json, { headers: JSON_HEADERS })
    if (!found.usageFrame) return stream(found.frames, found.contentType)
    const withUsage = body.stream_options?.include_usage === true
    return stream(withUsage ? [...found.frames, found.usageFrame, DONE] : [...found.frames, DONE], found.contentType)
  },
})

console.log(JSON.stringify({ port: server.port }))
