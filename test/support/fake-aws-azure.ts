/**
 * Fakes on loopback of AWS Bedrock Runtime, Azure OpenAI and Mistral (an OpenAI-compatible vendor),
 * each checking a request as its vendor does before it answers in the vendor's own wire format, so
 * that what gw sends is held to what the real service would accept, not to what gw expects.
 *
 * Bedrock (`startFakeBedrock`): `POST /model/{modelId}/converse` and `/converse-stream`, and for Claude
 * InvokeModel's `/invoke` and `/invoke-with-response-stream`. Every request's
 * SigV4 signature is checked by signing it again with AWS's own signer (`verifySigV4`): a wrong secret,
 * another region or service, a changed body or signed header, a stale date are 403
 * `InvalidSignatureException`, an unknown access key or session token `UnrecognizedClientException`,
 * with `x-amzn-errortype` and a `{message}` body as AWS answers. Then the body is checked as Converse
 * checks it (known members only, a union block has exactly one key, no blank text, roles alternate
 * from a user turn, each tool result answers a tool use of the turn before and each tool use is
 * answered, tool blocks need `toolConfig`, ids and names match AWS's patterns): 400
 * `ValidationException`. Answers: Converse JSON (text, `toolUse`, `reasoningContent`, usage with cache
 * counts, `metrics`), or ConverseStream as AWS event-stream frames (`messageStart`, a
 * `contentBlockStart` only for a tool use, deltas, `contentBlockStop`, `messageStop`, `metadata` last,
 * each payload with a random `p` padding field), the frames sent in pieces that cut across them.
 * InvokeModel takes Anthropic's Messages as Bedrock checks them (`anthropic_version`
 * `bedrock-2023-05-31`, no `model` or `stream` key, `max_tokens` required, `anthropic_beta` a list):
 * 400 `ValidationException` otherwise. It answers Anthropic's message, or its events, each base64 in
 * the `bytes` of a `chunk` frame, the last with Bedrock's `amazon-bedrock-invocationMetrics`.
 *
 * Azure OpenAI (`startFakeAzure`): `POST /openai/deployments/{deployment}/chat/completions` and
 * `/embeddings`. No `api-version`: 404 "Resource not found"; one Azure never shipped: 400; a missing
 * or wrong `api-key`: 401; a deployment the resource lacks: 404 `DeploymentNotFound`. Answers are
 * OpenAI's with Azure's extras: the underlying model's name (not the deployment's), `prompt_filter_results`
 * and per-choice `content_filter_results`; a stream opens with a chunk of empty `choices` (only the
 * prompt's filter results, empty id and model) and ends with a usage chunk only when
 * `stream_options.include_usage` asks for it.
 *
 * Mistral (`startFakeMistral`): `POST /v1/chat/completions` with a bearer key. `stream_options` is
 * refused with Mistral's 422 `extra_forbidden`; a stream reports its usage in its last chunk anyway,
 * beside the finish reason, and a tool call arrives whole in one chunk with a 9-character id, the
 * only form of id Mistral accepts back.
 *
 * Azure and Mistral both check an OpenAI conversation as OpenAI does: each `tool` message answers a
 * call of the assistant message before it, and each call is answered (400 otherwise).
 *
 * Directives anywhere in the request's text steer every fake:
 *   fake:tools         a tool call (the first tool the request declares, `{"city":"Paris"}`) instead of text
 *   fake:tools-once    a tool call while the conversation holds no tool result, text once it does
 *   fake:two-tools     with either of those, two tool calls in one answer (Paris, then Rome)
 *   fake:thinking      (Bedrock) reasoning with its signature before the text
 *   fake:cache         prompt-cache counts in the usage
 *   bedrock:throttle   429 `ThrottlingException` before any byte of an answer
 *   bedrock:stream-throttle  a stream whose first text is followed by a `throttlingException` frame
 *   bedrock:broken-stream    a stream that breaks off inside a frame
 *   azure:content-filter     400 `content_filter` (the prompt filtered), as Azure answers it
 *   azure:rate-limit         429 with `retry-after: 1`
 */
import { EventStreamCodec } from '@smithy/eventstream-codec'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'
import { eventFrame, exceptionFrame, joinFrames, verifySigV4 } from './bedrock'

/** A request a fake received, before it was checked. */
export interface ReceivedCall {
  method: string
  /** As it arrived, percent-encoding included (`/model/...v1%3A0/converse`). */
  path: string
  query: URLSearchParams
  headers: Record<string, string>
  /** The body parsed as JSON; {} when it is not. */
  body: Record<string, unknown>
  /** What the fake answered. */
  status: number
}

export interface Fake {
  url: string
  calls: ReceivedCall[]
  close(): Promise<void>
}

/** The text each fake answers with, in the pieces its stream sends. */
export const BEDROCK_TEXT = ['Hello', ' from', ' the fake', ' Bedrock.']
export const AZURE_TEXT = ['Hello', ' from', ' the fake', ' Azure.']
export const MISTRAL_TEXT = ['Hello', ' from', ' the fake', ' Mistral.']
/** What Bedrock says before its tool calls, in a block of its own. */
export const BEDROCK_TOOL_PREAMBLE = 'Checking.'
export const BEDROCK_THINKING = ['Weighing', ' the question.']
export const BEDROCK_SIGNATURE = 'ErcBCkgIBxABGAIiQBedrockFakeSignature=='

/** The tool calls the fakes make, in order; their arguments, as JSON text. */
export const TOOL_ARGUMENTS = ['{"city":"Paris"}', '{"city":"Rome"}']

/** Fixed usage, so tests can price it by hand. */
export const FAKE_AWS_AZURE_USAGE = {
  bedrock: { input: 1_000, output: 500, cacheRead: 2_000, cacheWrite: 3_000 },
  azure: { prompt: 1_000, completion: 500, cached: 400 },
  mistral: { prompt: 1_000, completion: 500 },
}

/** The Azure deployments the fake resource has, and the model each serves. */
export const AZURE_DEPLOYMENTS: Readonly<Record<string, string>> = {
  'prod-4o': 'gpt-4o-2024-11-20',
  'embed-small': 'text-embedding-3-small',
}
/** The dated API versions Azure has shipped that the fake knows (a few, newest GA among them). */
const AZURE_API_VERSIONS = new Set(['2024-02-01', '2024-06-01', '2024-10-21', '2024-12-01-preview', '2025-04-01-preview'])

/** The models the fake Bedrock serves: a base model id and a cross-region inference profile. */
export const BEDROCK_MODELS = ['anthropic.claude-sonnet-4-5-20250929-v1:0', 'us.anthropic.claude-sonnet-4-5-20250929-v1:0']

export const AZURE_THROTTLE_MESSAGE =
  'Requests to the ChatCompletions_Create Operation under Azure OpenAI API version 2024-10-21 have exceeded token rate limit of your current OpenAI S0 pricing tier. Please retry after 1 second.'
export const AZURE_FILTER_MESSAGE =
  "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. Please modify your prompt and retry."
export const BEDROCK_THROTTLE_MESSAGE = 'Too many requests, please wait before trying again.'
export const BEDROCK_SIGNATURE_MESSAGE =
  'The request signature we calculated does not match the signature you provided. Check your AWS Secret Access Key and signing method. Consult the service documentation for details.'

// ---------------------------------------------------------------------------------------------
// What every fake shares

type Json = Record<string, unknown>

const isRecord = (value: unknown): value is Json => typeof value === 'object' && value !== null && !Array.isArray(value)
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

interface Directives {
  tools: boolean
  twoTools: boolean
  thinking: boolean
  cache: boolean
}

/** The directives of a request, the tools ones given up once the conversation holds a tool result. */
function directivesOf(raw: string, hasToolResult: boolean): Directives {
  const tools = /fake:tools(?!-)/.test(raw) || (raw.includes('fake:tools-once') && !hasToolResult)
  const twoTools = tools && raw.includes('fake:two-tools')
  return { tools, twoTools, thinking: raw.includes('fake:thinking'), cache: raw.includes('fake:cache') }
}

/** The tool calls of an answer: the first declared tool, once or twice. */
const toolCallsOf = (d: Directives, toolName: string | undefined) =>
  toolName === undefined || !d.tools
    ? []
    : TOOL_ARGUMENTS.slice(0, d.twoTools ? 2 : 1).map((input) => ({ name: toolName, input }))

/** JSON text in the uneven pieces a model streams it in (and the fakes stream tool arguments in). */
export const fragmentsOf = (text: string): string[] => {
  const pieces: string[] = []
  for (let at = 0, size = 3; at < text.length; at += size, size = size === 3 ? 5 : 3) pieces.push(text.slice(at, at + size))
  return pieces
}

/** Records the call and runs its handler; whatever the handler answers is the call's recorded status. */
function serveFake(handle: (request: Request, call: ReceivedCall) => Promise<Response>): Fake {
  const calls: ReceivedCall[] = []
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    async fetch(request) {
      const url = new URL(request.url)
      const text = await request.clone().text()
      let body: Json = {}
      try {
        const parsed: unknown = JSON.parse(text)
        if (isRecord(parsed)) body = parsed
      } catch {
        // Not JSON: the handler says so in the vendor's words.
      }
      const call: ReceivedCall = {
        method: request.method,
        path: url.pathname,
        query: url.searchParams,
        headers: Object.fromEntries(request.headers),
        body,
        status: 0,
      }
      calls.push(call)
      const response = await handle(request, call)
      call.status = response.status
      return response
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, calls, close: () => server.stop(true) }
}

/** A stream of byte chunks, each after a short pause, ending cleanly or breaking off. */
function chunkedBody(chunks: Uint8Array[], ending: 'close' | 'break' = 'close'): ReadableStream<Uint8Array> {
  return new ReadableStream<Uint8Array>({
    async start(controller) {
      for (const chunk of chunks) {
        controller.enqueue(chunk)
        await Bun.sleep(2)
      }
      if (ending === 'close') controller.close()
      else {
        await Bun.sleep(20)
        controller.error(new Error('the fake broke the stream'))
      }
    },
  })
}

// ---------------------------------------------------------------------------------------------
// Bedrock

export interface AwsKey {
  secretAccessKey: string
  /** Temporary credentials: the token AWS issued with them, which every request must carry. */
  sessionToken?: string
}

export interface FakeBedrock extends Fake {
  region: string
  /** The model id each call named, decoded from its path. */
  models: string[]
}

/** AWS's error answer: the code in `x-amzn-errortype`, the message in the body. */
function awsError(status: number, code: string, message: string): Response {
  return Response.json(
    { message },
    {
      status,
      headers: {
        'x-amzn-errortype': `${code}:http://internal.amazon.com/coral/com.amazon.bedrock/`,
        'x-amzn-requestid': crypto.randomUUID(),
      },
    },
  )
}

/** The verifier's reason as AWS words the refusal. */
function signatureRefusal(reason: string, stamp: string): Response {
  if (reason === 'an unknown access key')
    return awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.')
  if (reason === 'no SigV4 authorization header')
    return awsError(403, 'MissingAuthenticationTokenException', 'Missing Authentication Token')
  if (reason.startsWith('signed for the region'))
    return awsError(403, 'InvalidSignatureException', 'Credential should be scoped to a valid region. ')
  if (reason.startsWith('signed for the service'))
    return awsError(403, 'InvalidSignatureException', "Credential should be scoped to correct service: 'bedrock'. ")
  if (reason === 'the signature has expired')
    return awsError(403, 'InvalidSignatureException', `Signature expired: ${stamp} is now earlier than the allowed window.`)
  return awsError(403, 'InvalidSignatureException', BEDROCK_SIGNATURE_MESSAGE)
}

const CONVERSE_MEMBERS = new Set([
  'messages',
  'system',
  'inferenceConfig',
  'toolConfig',
  'guardrailConfig',
  'additionalModelRequestFields',
  'additionalModelResponseFieldPaths',
  'promptVariables',
  'requestMetadata',
  'performanceConfig',
  'serviceTier',
  'outputConfig',
])
const CONTENT_BLOCK_KEYS = new Set([
  'text',
  'image',
  'document',
  'video',
  'audio',
  'toolUse',
  'toolResult',
  'reasoningContent',
  'cachePoint',
  'guardContent',
])
const TOOL_USE_ID = /^[a-zA-Z0-9_.:-]{1,64}$/
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/

/** What Converse refuses in a body, in AWS's words; undefined when it would take it. */
function converseProblem(body: Json): string | undefined {
  for (const key of Object.keys(body))
    if (!CONVERSE_MEMBERS.has(key))
      return `Malformed input request: extraneous key [${key}] is not permitted, please reformat your input and try again.`
  for (const [at, block] of list(body.system).entries())
    if (!isRecord(block) || (typeof block.text === 'string' && block.text.trim() === ''))
      return `The text field in the SystemContentBlock object at system.${at} is blank. Add text to the text field, and try again.`
  const inference = body.inferenceConfig
  if (isRecord(inference)) {
    const { maxTokens, temperature, topP } = inference
    if (maxTokens !== undefined && (!Number.isInteger(maxTokens) || (maxTokens as number) < 1))
      return "1 validation error detected: Value at 'inferenceConfig.maxTokens' failed to satisfy constraint: Member must have value greater than or equal to 1"
    for (const [name, value] of [
      ['temperature', temperature],
      ['topP', topP],
    ] as const)
      if (value !== undefined && (typeof value !== 'number' || value < 0 || value > 1))
        return `1 validation error detected: Value at 'inferenceConfig.${name}' failed to satisfy constraint: Member must have value less than or equal to 1`
  }
  const tools = isRecord(body.toolConfig) ? body.toolConfig : undefined
  if (tools) {
    const declared = list(tools.tools)
    if (declared.length === 0)
      return "1 validation error detected: Value at 'toolConfig.tools' failed to satisfy constraint: Member must have length greater than or equal to 1"
    for (const tool of declared) {
      const spec = isRecord(tool) && isRecord(tool.toolSpec) ? tool.toolSpec : undefined
      if (!spec || typeof spec.name !== 'string' || !TOOL_NAME.test(spec.name)) return 'The tool name must match [a-zA-Z0-9_-]+.'
      if (!isRecord(spec.inputSchema) || !isRecord(spec.inputSchema.json))
        return `The inputSchema of tool ${spec.name} must be {"json": {...}}.`
      if (spec.description === '')
        return "1 validation error detected: Value at 'toolConfig.tools.1.member.toolSpec.description' failed to satisfy constraint: Member must have length greater than or equal to 1"
    }
    const choice = tools.toolChoice
    if (
      choice !== undefined &&
      (!isRecord(choice) || Object.keys(choice).length !== 1 || !['auto', 'any', 'tool'].some((k) => k in choice))
    )
      return 'The toolChoice must be exactly one of auto, any or tool.'
  }
  return conversationProblem(list(body.messages), tools !== undefined)
}

function conversationProblem(messages: unknown[], toolsDeclared: boolean): string | undefined {
  if (messages.length === 0)
    return "1 validation error detected: Value at 'messages' failed to satisfy constraint: Member must have length greater than or equal to 1"
  /** The tool uses of the assistant turn before, which the next user turn must answer, each of them. */
  let owed: Set<string> = new Set()
  for (const [at, message] of messages.entries()) {
    if (!isRecord(message) || (message.role !== 'user' && message.role !== 'assistant'))
      return `messages.${at}: the role must be user or assistant.`
    const expected = at % 2 === 0 ? 'user' : 'assistant'
    if (message.role !== expected)
      return at === 0
        ? 'A conversation must start with a user message. Try again with a conversation that starts with a user message.'
        : 'A conversation must alternate between user and assistant roles. Make sure the conversation alternates between user and assistant roles and try again.'
    const blocks = list(message.content)
    if (blocks.length === 0)
      return `The content field in the Message object at messages.${at} is empty. Add a ContentBlock object to the content field and try again.`
    const uses = new Set<string>()
    const answered = new Set<string>()
    for (const [index, block] of blocks.entries()) {
      const where = `messages.${at}.content.${index}`
      if (!isRecord(block)) return `The ContentBlock object at ${where} is malformed.`
      const keys = Object.keys(block)
      if (keys.length !== 1 || !CONTENT_BLOCK_KEYS.has(keys[0] as string))
        return `The ContentBlock object at ${where} must set exactly one of its members; it set ${JSON.stringify(keys)}.`
      if (typeof block.text === 'string' && block.text.trim() === '')
        return `The text field in the ContentBlock object at ${where} is blank. Add text to the text field, and try again.`
      if ((block.toolUse !== undefined || block.toolResult !== undefined) && !toolsDeclared)
        return 'The toolConfig field must be defined when using toolUse and toolResult content blocks.'
      if (isRecord(block.toolUse)) {
        const { toolUseId, name, input } = block.toolUse
        if (message.role !== 'assistant') return `${where}: a toolUse block belongs to an assistant message.`
        if (typeof toolUseId !== 'string' || !TOOL_USE_ID.test(toolUseId))
          return `${where}.toolUse.toolUseId must match [a-zA-Z0-9_.:-]+.`
        if (typeof name !== 'string' || !TOOL_NAME.test(name)) return `${where}.toolUse.name must match [a-zA-Z0-9_-]+.`
        if (!isRecord(input)) return `${where}.toolUse.input must be a JSON object.`
        uses.add(toolUseId)
      }
      if (isRecord(block.toolResult)) {
        const { toolUseId, content } = block.toolResult
        if (message.role !== 'user') return `${where}: a toolResult block belongs to a user message.`
        if (typeof toolUseId !== 'string' || !owed.has(toolUseId))
          return `${where}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${String(toolUseId)}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`
        if (!list(content).every((part) => isRecord(part) && Object.keys(part).length === 1))
          return `${where}.toolResult.content: each block must set exactly one of text, json, image, document.`
        answered.add(toolUseId)
      }
    }
    if (message.role === 'user') {
      const unanswered = [...owed].filter((id) => !answered.has(id))
      if (unanswered.length > 0)
        return `messages.${at}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${unanswered.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`
    }
    owed = uses
  }
  return messages.length % 2 === 1
    ? undefined
    : 'A conversation must end with a user message. Try again with a conversation that ends with a user message.'
}

const bedrockHasToolResult = (body: Json): boolean =>
  list(body.messages).some(
    (message) => isRecord(message) && list(message.content).some((block) => isRecord(block) && 'toolResult' in block),
  )

const firstToolName = (tools: unknown[], read: (tool: Json) => unknown): string | undefined => {
  const name = isRecord(tools[0]) ? read(tools[0]) : undefined
  return typeof name === 'string' ? name : undefined
}

function bedrockUsage(d: Directives) {
  const { input, output, cacheRead, cacheWrite } = FAKE_AWS_AZURE_USAGE.bedrock
  const read = d.cache ? cacheRead : 0
  const write = d.cache ? cacheWrite : 0
  return {
    inputTokens: input,
    outputTokens: output,
    totalTokens: input + output + read + write,
    ...(d.cache ? { cacheReadInputTokens: read, cacheWriteInputTokens: write } : {}),
  }
}

/** AWS hides payload lengths with a `p` field of random length. */
const padding = (): string =>
  'abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789'.slice(0, 1 + Math.floor(Math.random() * 60))
const padded = (event: string, payload: Json): Uint8Array => eventFrame(event, { ...payload, p: padding() })

interface BedrockAnswer {
  thinking: boolean
  text: string[]
  calls: Array<{ name: string; input: string }>
}

function converseAnswer(answer: BedrockAnswer, d: Directives): Json {
  const content: Json[] = []
  if (answer.thinking)
    content.push({ reasoningContent: { reasoningText: { text: BEDROCK_THINKING.join(''), signature: BEDROCK_SIGNATURE } } })
  if (answer.text.length > 0) content.push({ text: answer.text.join('') })
  for (const [n, call] of answer.calls.entries())
    content.push({ toolUse: { toolUseId: `tooluse_fake${n + 1}`, name: call.name, input: JSON.parse(call.input) as unknown } })
  return {
    output: { message: { role: 'assistant', content } },
    stopReason: answer.calls.length > 0 ? 'tool_use' : 'end_turn',
    usage: bedrockUsage(d),
    metrics: { latencyMs: 42 },
  }
}

/** ConverseStream's frames: text and reasoning blocks are never started, a tool use is; `metadata` comes last. */
function converseFrames(answer: BedrockAnswer, d: Directives): Uint8Array[] {
  const frames = [padded('messageStart', { role: 'assistant' })]
  let index = 0
  if (answer.thinking) {
    for (const text of BEDROCK_THINKING)
      frames.push(padded('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { text } } }))
    frames.push(
      padded('contentBlockDelta', { contentBlockIndex: index, delta: { reasoningContent: { signature: BEDROCK_SIGNATURE } } }),
    )
    frames.push(padded('contentBlockStop', { contentBlockIndex: index++ }))
  }
  if (answer.text.length > 0) {
    for (const text of answer.text) frames.push(padded('contentBlockDelta', { contentBlockIndex: index, delta: { text } }))
    frames.push(padded('contentBlockStop', { contentBlockIndex: index++ }))
  }
  for (const [n, call] of answer.calls.entries()) {
    frames.push(
      padded('contentBlockStart', {
        contentBlockIndex: index,
        start: { toolUse: { toolUseId: `tooluse_fake${n + 1}`, name: call.name } },
      }),
    )
    for (const input of fragmentsOf(call.input))
      frames.push(padded('contentBlockDelta', { contentBlockIndex: index, delta: { toolUse: { input } } }))
    frames.push(padded('contentBlockStop', { contentBlockIndex: index++ }))
  }
  frames.push(padded('messageStop', { stopReason: answer.calls.length > 0 ? 'tool_use' : 'end_turn' }))
  frames.push(padded('metadata', { usage: bedrockUsage(d), metrics: { latencyMs: 42 } }))
  return frames
}

/** The frames' bytes in pieces that begin and end inside frames, as a network delivers them. */
function cutAcrossFrames(frames: Uint8Array[]): Uint8Array[] {
  const bytes = joinFrames(frames)
  const pieces: Uint8Array[] = []
  const sizes = [7, 150, 33, 260, 1, 90]
  for (let at = 0, n = 0; at < bytes.byteLength; n++) {
    const size = sizes[n % sizes.length] as number
    pieces.push(bytes.subarray(at, at + size))
    at += size
  }
  return pieces
}

const EVENT_STREAM_HEADERS = {
  'content-type': 'application/vnd.amazon.eventstream',
  'x-amzn-bedrock-content-type': 'application/json',
}

/** A Bedrock Runtime for one region, knowing the access keys given. */
export function startFakeBedrock(keys: Record<string, AwsKey>, region = 'us-east-1'): FakeBedrock {
  const models: string[] = []
  const fake = serveFake(async (request, call) => {
    const stamp = request.headers.get('x-amz-date') ?? ''
    const verdict = await verifySigV4(request, (id) => keys[id]?.secretAccessKey, { region })
    if (!verdict.ok) return signatureRefusal(verdict.reason, stamp)
    const token = keys[verdict.accessKeyId]?.sessionToken
    if (token !== undefined && request.headers.get('x-amz-security-token') !== token)
      return awsError(403, 'UnrecognizedClientException', 'The security token included in the request is invalid.')

    const route = /^\/model\/([^/]+)\/(converse|converse-stream|invoke|invoke-with-response-stream)$/.exec(call.path)
    if (request.method !== 'POST' || !route) return awsError(404, 'UnknownOperationException', 'Unknown operation')
    const model = decodeURIComponent(route[1] as string)
    models.push(model)
    if (!BEDROCK_MODELS.includes(model)) return awsError(400, 'ValidationException', 'The provided model identifier is invalid.')
    if (!request.headers.get('content-type')?.startsWith('application/json'))
      return awsError(400, 'SerializationException', 'Expected a JSON body')
    const raw = await request.text()
    let parsed: unknown
    try {
      parsed = JSON.parse(raw)
    } catch {
      return awsError(400, 'SerializationException', 'The request body is not valid JSON')
    }
    if (!isRecord(parsed)) return awsError(400, 'SerializationException', 'The request body must be a JSON object')
    if (route[2] === 'invoke' || route[2] === 'invoke-with-response-stream')
      return invokeClaude(parsed, raw, route[2] !== 'invoke')
    const problem = converseProblem(parsed)
    if (problem) return awsError(400, 'ValidationException', problem)

    const d = directivesOf(raw, bedrockHasToolResult(parsed))
    if (raw.includes('bedrock:throttle')) return awsError(429, 'ThrottlingException', BEDROCK_THROTTLE_MESSAGE)
    const toolName = firstToolName(list(isRecord(parsed.toolConfig) ? parsed.toolConfig.tools : []), (tool) =>
      isRecord(tool.toolSpec) ? tool.toolSpec.name : undefined,
    )
    const calls = toolCallsOf(d, toolName)
    const answer: BedrockAnswer = {
      thinking: d.thinking,
      text: calls.length > 0 ? [BEDROCK_TOOL_PREAMBLE] : BEDROCK_TEXT,
      calls,
    }
    const requestId = { 'x-amzn-requestid': crypto.randomUUID() }
    if (route[2] === 'converse') return Response.json(converseAnswer(answer, d), { headers: requestId })

    const frames = converseFrames(answer, d)
    const headers = { ...EVENT_STREAM_HEADERS, ...requestId }
    if (raw.includes('bedrock:stream-throttle')) {
      const opening = frames.slice(0, 2)
      const body = chunkedBody([joinFrames(opening), exceptionFrame('throttlingException', BEDROCK_THROTTLE_MESSAGE)])
      return new Response(body, { headers })
    }
    if (raw.includes('bedrock:broken-stream')) {
      const cut = frames[2] as Uint8Array
      return new Response(chunkedBody([joinFrames(frames.slice(0, 2)), cut.subarray(0, cut.byteLength >> 1)], 'break'), {
        headers,
      })
    }
    return new Response(chunkedBody(cutAcrossFrames(frames)), { headers })
  })
  return { ...fake, region, models }
}

// Claude through InvokeModel: Anthropic's Messages in AWS's envelope

/** The Anthropic body as Bedrock's Claude checks it, in Bedrock's words. */
function invokeProblem(body: Json): string | undefined {
  const malformed = (why: string) => `Malformed input request: #: ${why}, please reformat your input and try again.`
  for (const key of ['model', 'stream']) if (key in body) return malformed(`extraneous key [${key}] is not permitted`)
  if (body.anthropic_version !== 'bedrock-2023-05-31') return malformed('anthropic_version: invalid value')
  if (typeof body.max_tokens !== 'number') return malformed('required key [max_tokens] not found')
  if (!Array.isArray(body.messages) || body.messages.length === 0) return malformed('messages: expected minimum item count: 1')
  if (
    body.anthropic_beta !== undefined &&
    !(Array.isArray(body.anthropic_beta) && body.anthropic_beta.every((b) => typeof b === 'string'))
  )
    return malformed('anthropic_beta: expected type: JSONArray')
  return undefined
}

const invokeHasToolResult = (body: Json): boolean =>
  list(body.messages).some(
    (message) => isRecord(message) && list(message.content).some((block) => isRecord(block) && block.type === 'tool_result'),
  )

/** What Bedrock says the model that answered is, in Anthropic's `model` field. */
export const INVOKE_SERVED_MODEL = 'claude-sonnet-4-5-20250929'

function invokeUsage(d: Directives, output: number) {
  const { input, cacheRead, cacheWrite } = FAKE_AWS_AZURE_USAGE.bedrock
  return {
    input_tokens: input,
    cache_creation_input_tokens: d.cache ? cacheWrite : 0,
    cache_read_input_tokens: d.cache ? cacheRead : 0,
    output_tokens: output,
  }
}

function invokeContent(answer: BedrockAnswer): Json[] {
  const content: Json[] = []
  if (answer.thinking) content.push({ type: 'thinking', thinking: BEDROCK_THINKING.join(''), signature: BEDROCK_SIGNATURE })
  if (answer.text.length > 0) content.push({ type: 'text', text: answer.text.join('') })
  for (const [n, call] of answer.calls.entries())
    content.push({ type: 'tool_use', id: `toolu_bdrk_fake${n + 1}`, name: call.name, input: JSON.parse(call.input) as unknown })
  return content
}

const stopOf = (answer: BedrockAnswer) => (answer.calls.length > 0 ? 'tool_use' : 'end_turn')

/** One of Anthropic's events as InvokeModel streams it: base64 in the `bytes` of a `chunk` frame. */
const chunk = (event: Json): Uint8Array =>
  eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(event)).toString('base64'), p: padding() })

function invokeFrames(answer: BedrockAnswer, d: Directives): Uint8Array[] {
  const { output } = FAKE_AWS_AZURE_USAGE.bedrock
  const frames = [
    chunk({
      type: 'message_start',
      message: {
        id: 'msg_bdrk_fake1',
        type: 'message',
        role: 'assistant',
        model: INVOKE_SERVED_MODEL,
        content: [],
        stop_reason: null,
        stop_sequence: null,
        usage: invokeUsage(d, 1),
      },
    }),
  ]
  let index = 0
  const block = (start: Json, deltas: Json[]) => {
    frames.push(chunk({ type: 'content_block_start', index, content_block: start }))
    for (const delta of deltas) frames.push(chunk({ type: 'content_block_delta', index, delta }))
    frames.push(chunk({ type: 'content_block_stop', index: index++ }))
  }
  if (answer.thinking)
    block({ type: 'thinking', thinking: '', signature: '' }, [
      ...BEDROCK_THINKING.map((thinking) => ({ type: 'thinking_delta', thinking })),
      { type: 'signature_delta', signature: BEDROCK_SIGNATURE },
    ])
  if (answer.text.length > 0)
    block(
      { type: 'text', text: '' },
      answer.text.map((text) => ({ type: 'text_delta', text })),
    )
  for (const [n, call] of answer.calls.entries())
    block(
      { type: 'tool_use', id: `toolu_bdrk_fake${n + 1}`, name: call.name, input: {} },
      fragmentsOf(call.input).map((partial_json) => ({ type: 'input_json_delta', partial_json })),
    )
  frames.push(
    chunk({
      type: 'message_delta',
      delta: { stop_reason: stopOf(answer), stop_sequence: null },
      usage: { output_tokens: output },
    }),
  )
  frames.push(
    chunk({
      type: 'message_stop',
      'amazon-bedrock-invocationMetrics': {
        inputTokenCount: 1_000,
        outputTokenCount: output,
        invocationLatency: 42,
        firstByteLatency: 7,
      },
    }),
  )
  return frames
}

/** InvokeModel for Claude: the body checked as Bedrock checks it, then Anthropic's answer, whole or as its events. */
function invokeClaude(body: Json, raw: string, stream: boolean): Response {
  const problem = invokeProblem(body)
  if (problem) return awsError(400, 'ValidationException', problem)
  const d = directivesOf(raw, invokeHasToolResult(body))
  if (raw.includes('bedrock:throttle')) return awsError(429, 'ThrottlingException', BEDROCK_THROTTLE_MESSAGE)
  const calls = toolCallsOf(
    d,
    firstToolName(list(body.tools), (tool) => tool.name),
  )
  const answer: BedrockAnswer = { thinking: d.thinking, text: calls.length > 0 ? [BEDROCK_TOOL_PREAMBLE] : BEDROCK_TEXT, calls }
  const requestId = { 'x-amzn-requestid': crypto.randomUUID() }
  if (!stream)
    return Response.json(
      {
        id: 'msg_bdrk_fake1',
        type: 'message',
        role: 'assistant',
        model: INVOKE_SERVED_MODEL,
        content: invokeContent(answer),
        stop_reason: stopOf(answer),
        stop_sequence: null,
        usage: invokeUsage(d, FAKE_AWS_AZURE_USAGE.bedrock.output),
      },
      { headers: requestId },
    )
  const frames = invokeFrames(answer, d)
  const headers = { ...EVENT_STREAM_HEADERS, ...requestId }
  if (raw.includes('bedrock:stream-throttle'))
    return new Response(
      chunkedBody([joinFrames(frames.slice(0, 3)), exceptionFrame('throttlingException', BEDROCK_THROTTLE_MESSAGE)]),
      {
        headers,
      },
    )
  if (raw.includes('bedrock:broken-stream')) {
    const cut = frames[3] as Uint8Array
    return new Response(chunkedBody([joinFrames(frames.slice(0, 3)), cut.subarray(0, cut.byteLength >> 1)], 'break'), { headers })
  }
  return new Response(chunkedBody(cutAcrossFrames(frames)), { headers })
}

/** Decodes a whole event-stream body into its frames' event types and payloads, for tests that read one. */
export function decodeFrames(bytes: Uint8Array): Array<{ type: string; payload: Json }> {
  const codec = new EventStreamCodec(toUtf8, fromUtf8)
  const out: Array<{ type: string; payload: Json }> = []
  for (let at = 0; at < bytes.byteLength; ) {
    const length = new DataView(bytes.buffer, bytes.byteOffset + at, 4).getUint32(0)
    const message = codec.decode(bytes.subarray(at, at + length))
    const type = message.headers[':event-type']?.value ?? message.headers[':exception-type']?.value
    out.push({ type: String(type), payload: JSON.parse(toUtf8(message.body)) as Json })
    at += length
  }
  return out
}

// ---------------------------------------------------------------------------------------------
// OpenAI's chat format, as Azure and Mistral check and answer it

const openaiHasToolResult = (body: Json): boolean =>
  list(body.messages).some((message) => isRecord(message) && message.role === 'tool')

/** OpenAI's rule for tool messages: each answers a call of the assistant message before it, and every call is answered. */
function toolMessagesProblem(messages: unknown[]): string | undefined {
  let owed: string[] = []
  for (const [at, message] of messages.entries()) {
    if (!isRecord(message)) return `Invalid type for 'messages[${at}]': expected an object.`
    if (message.role === 'tool') {
      const id = message.tool_call_id
      if (typeof id !== 'string' || !owed.includes(id))
        return "Invalid parameter: messages with role 'tool' must be a response to a preceeding message with 'tool_calls'."
      owed = owed.filter((one) => one !== id)
      continue
    }
    if (owed.length > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${owed.join(', ')}`
    owed =
      message.role === 'assistant'
        ? list(message.tool_calls).flatMap((call) => (isRecord(call) && typeof call.id === 'string' ? [call.id] : []))
        : []
  }
  return undefined
}

const chatToolName = (body: Json): string | undefined =>
  firstToolName(list(body.tools), (tool) => (isRecord(tool.function) ? tool.function.name : undefined))

const sseData = (payload: unknown): Uint8Array => new TextEncoder().encode(`data: ${JSON.stringify(payload)}\n\n`)
const SSE_DONE = new TextEncoder().encode('data: [DONE]\n\n')
const SSE_HEADERS = { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-cache' }

// ---------------------------------------------------------------------------------------------
// Azure OpenAI

export interface FakeAzure extends Fake {
  apiKey: string
}

const azureError = (status: number, error: Json, headers: Record<string, string> = {}): Response =>
  Response.json({ error }, { status, headers: { 'apim-request-id': crypto.randomUUID(), ...headers } })

const SAFE = { filtered: false, severity: 'safe' }
const PROMPT_FILTER_RESULTS = [
  {
    prompt_index: 0,
    content_filter_results: {
      hate: SAFE,
      jailbreak: { filtered: false, detected: false },
      self_harm: SAFE,
      sexual: SAFE,
      violence: SAFE,
    },
  },
]
const CHOICE_FILTER_RESULTS = {
  hate: SAFE,
  protected_material_code: { filtered: false, detected: false },
  protected_material_text: { filtered: false, detected: false },
  self_harm: SAFE,
  sexual: SAFE,
  violence: SAFE,
}

function azureUsage(d: Directives) {
  const { prompt, completion, cached } = FAKE_AWS_AZURE_USAGE.azure
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: d.cache ? cached : 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  }
}

const azureToolCall = (call: { name: string; input: string }, n: number) => ({
  id: `call_azure${n + 1}`,
  type: 'function',
  function: { name: call.name, arguments: call.input },
})

function azureChat(deployment: string, body: Json, raw: string): Response {
  const d = directivesOf(raw, openaiHasToolResult(body))
  const model = AZURE_DEPLOYMENTS[deployment] as string
  const calls = toolCallsOf(d, chatToolName(body))
  const id = `chatcmpl-azure${Math.floor(Math.random() * 1e9)}`
  const created = Math.floor(Date.now() / 1000)
  const finish = calls.length > 0 ? 'tool_calls' : 'stop'
  const base = { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_azure' }
  if (body.stream !== true)
    return Response.json({
      id,
      object: 'chat.completion',
      created,
      model,
      system_fingerprint: 'fp_azure',
      prompt_filter_results: PROMPT_FILTER_RESULTS,
      choices: [
        {
          index: 0,
          finish_reason: finish,
          logprobs: null,
          content_filter_results: calls.length > 0 ? {} : CHOICE_FILTER_RESULTS,
          message: {
            role: 'assistant',
            content: calls.length > 0 ? null : AZURE_TEXT.join(''),
            refusal: null,
            ...(calls.length > 0 ? { tool_calls: calls.map(azureToolCall) } : {}),
          },
        },
      ],
      usage: azureUsage(d),
    })
  const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true
  const extra = includeUsage ? { usage: null } : {}
  const choice = (delta: Json, finishReason: string | null = null, filter: Json = CHOICE_FILTER_RESULTS) => ({
    ...base,
    ...extra,
    choices: [{ index: 0, delta, finish_reason: finishReason, logprobs: null, content_filter_results: filter }],
  })
  const chunks: Uint8Array[] = [
    sseData({ choices: [], created: 0, id: '', model: '', object: '', prompt_filter_results: PROMPT_FILTER_RESULTS }),
    sseData(choice({ role: 'assistant', content: '', refusal: null }, null, {})),
  ]
  if (calls.length === 0) for (const text of AZURE_TEXT) chunks.push(sseData(choice({ content: text })))
  for (const [n, call] of calls.entries()) {
    chunks.push(sseData(choice({ tool_calls: [{ index: n, ...azureToolCall({ ...call, input: '' }, n) }] }, null, {})))
    for (const fragment of fragmentsOf(call.input))
      chunks.push(sseData(choice({ tool_calls: [{ index: n, function: { arguments: fragment } }] }, null, {})))
  }
  chunks.push(sseData(choice({}, finish, {})))
  if (includeUsage) chunks.push(sseData({ ...base, choices: [], usage: azureUsage(d) }))
  chunks.push(SSE_DONE)
  return new Response(chunkedBody(chunks), { headers: SSE_HEADERS })
}

function azureEmbeddings(deployment: string, body: Json): Response {
  const vector = [0.25, -0.5, 0.125]
  const base64 = body.encoding_format === 'base64'
  const embedding = base64 ? Buffer.from(new Float32Array(vector).buffer).toString('base64') : vector
  return Response.json({
    object: 'list',
    data: [{ object: 'embedding', index: 0, embedding }],
    model: AZURE_DEPLOYMENTS[deployment],
    usage: { prompt_tokens: 5, total_tokens: 5 },
  })
}

/** An Azure OpenAI resource with the deployments of AZURE_DEPLOYMENTS, taking one key. */
export function startFakeAzure(apiKey: string): FakeAzure {
  const fake = serveFake(async (request, call) => {
    const route = /^\/openai\/deployments\/([^/]+)\/(chat\/completions|embeddings)$/.exec(call.path)
    const version = call.query.get('api-version')
    if (request.method !== 'POST' || !route || version === null)
      return azureError(404, { code: '404', message: 'Resource not found' })
    if (!AZURE_API_VERSIONS.has(version)) return azureError(400, { code: 'BadRequest', message: 'API version not supported' })
    if (request.headers.get('api-key') !== apiKey)
      return azureError(401, {
        code: '401',
        message:
          'Access denied due to invalid subscription key or wrong API endpoint. Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource.',
      })
    const deployment = decodeURIComponent(route[1] as string)
    if (!Object.hasOwn(AZURE_DEPLOYMENTS, deployment))
      return azureError(404, {
        code: 'DeploymentNotFound',
        message:
          'The API deployment for this resource does not exist. If you created the deployment within the last 5 minutes, please wait a moment and try again.',
      })
    const raw = await request.text()
    if (raw.includes('azure:rate-limit'))
      return azureError(429, { code: '429', message: AZURE_THROTTLE_MESSAGE }, { 'retry-after': '1', 'retry-after-ms': '1000' })
    if (raw.includes('azure:content-filter'))
      return azureError(400, {
        message: AZURE_FILTER_MESSAGE,
        type: null,
        param: 'prompt',
        code: 'content_filter',
        status: 400,
        innererror: {
          code: 'ResponsibleAIPolicyViolation',
          content_filter_result: {
            ...PROMPT_FILTER_RESULTS[0]?.content_filter_results,
            jailbreak: { filtered: true, detected: true },
          },
        },
      })
    if (route[2] === 'embeddings') {
      if (AZURE_DEPLOYMENTS[deployment]?.startsWith('text-embedding') !== true)
        return azureError(400, {
          code: 'OperationNotSupported',
          message: 'The embeddings operation does not work with the specified model.',
        })
      return azureEmbeddings(deployment, call.body)
    }
    if (AZURE_DEPLOYMENTS[deployment]?.startsWith('text-embedding'))
      return azureError(400, {
        code: 'OperationNotSupported',
        message: 'The chatCompletion operation does not work with the specified model.',
      })
    const problem = toolMessagesProblem(list(call.body.messages))
    if (problem) return azureError(400, { message: problem, type: 'invalid_request_error', param: 'messages', code: null })
    return azureChat(deployment, call.body, raw)
  })
  return { ...fake, apiKey }
}

// ---------------------------------------------------------------------------------------------
// Mistral

export interface FakeMistral extends Fake {
  /** Where its OpenAI-style API is, as MISTRAL_BASE_URL names it. */
  baseUrl: string
}

const MISTRAL_TOOL_ID = /^[a-zA-Z0-9]{9}$/
const mistralToolId = (n: number) => `Mstrl${String(n + 1).padStart(4, '0')}`

const mistralError = (status: number, message: unknown) =>
  Response.json({ object: 'error', message, type: 'invalid_request_error', param: null, code: null }, { status })

function mistralUsage() {
  const { prompt, completion } = FAKE_AWS_AZURE_USAGE.mistral
  return { prompt_tokens: prompt, total_tokens: prompt + completion, completion_tokens: completion }
}

function mistralChat(body: Json, raw: string): Response {
  const d = directivesOf(raw, openaiHasToolResult(body))
  const model = typeof body.model === 'string' ? body.model : 'mistral-small-latest'
  const calls = toolCallsOf(d, chatToolName(body)).map((call, n) => ({
    id: mistralToolId(n),
    type: 'function',
    function: { name: call.name, arguments: call.input },
  }))
  const id = `cmpl-mistral${Math.floor(Math.random() * 1e9)}`
  const created = Math.floor(Date.now() / 1000)
  const finish = calls.length > 0 ? 'tool_calls' : 'stop'
  if (body.stream !== true)
    return Response.json({
      id,
      object: 'chat.completion',
      created,
      model,
      choices: [
        {
          index: 0,
          finish_reason: finish,
          message: {
            role: 'assistant',
            content: calls.length > 0 ? '' : MISTRAL_TEXT.join(''),
            tool_calls: calls.length > 0 ? calls : null,
            prefix: false,
          },
        },
      ],
      usage: mistralUsage(),
    })
  const base = { id, object: 'chat.completion.chunk', created, model }
  const chunk = (delta: Json, finishReason: string | null = null, usage?: Json) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  })
  const chunks = [sseData(chunk({ role: 'assistant', content: '' }))]
  // Mistral sends a tool call whole, in its last chunk, beside the finish reason and the usage.
  if (calls.length > 0)
    chunks.push(sseData(chunk({ tool_calls: calls.map((call, index) => ({ ...call, index })) }, finish, mistralUsage())))
  else {
    for (const text of MISTRAL_TEXT) chunks.push(sseData(chunk({ content: text })))
    chunks.push(sseData(chunk({ content: '' }, finish, mistralUsage())))
  }
  chunks.push(SSE_DONE)
  return new Response(chunkedBody(chunks), { headers: SSE_HEADERS })
}

/** Mistral's API, taking one key. */
export function startFakeMistral(apiKey: string): FakeMistral {
  const fake = serveFake(async (request, call) => {
    if (request.method !== 'POST' || call.path !== '/v1/chat/completions')
      return Response.json({ detail: 'Not Found' }, { status: 404 })
    if (request.headers.get('authorization') !== `Bearer ${apiKey}`)
      return Response.json({ message: 'Unauthorized', request_id: crypto.randomUUID() }, { status: 401 })
    const raw = await request.text()
    const body = call.body
    if ('stream_options' in body)
      return mistralError(422, {
        detail: [
          {
            type: 'extra_forbidden',
            loc: ['body', 'stream_options'],
            msg: 'Extra inputs are not permitted',
            input: body.stream_options,
          },
        ],
      })
    for (const message of list(body.messages)) {
      const ids = isRecord(message)
        ? [message.tool_call_id, ...list(message.tool_calls).map((one) => (isRecord(one) ? one.id : undefined))]
        : []
      for (const id of ids)
        if (id !== undefined && (typeof id !== 'string' || !MISTRAL_TOOL_ID.test(id)))
          return mistralError(400, `Tool call id was ${String(id)} but must be a-z, A-Z, 0-9, with a length of 9.`)
    }
    const problem = toolMessagesProblem(list(body.messages))
    if (problem) return mistralError(400, problem)
    return mistralChat(body, raw)
  })
  return { ...fake, baseUrl: `${fake.url}/v1` }
}
