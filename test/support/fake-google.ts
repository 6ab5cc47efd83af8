import { createPublicKey, type KeyObject, randomBytes, verify } from 'node:crypto'
import { type FakeProvider, startFakeProvider } from './fake-provider'

/**
 * Google's model APIs on loopback, holding gw to what Google checks, so that the Gemini and Vertex
 * adapters and the Gemini translation meet the same refusals they would meet in production:
 *
 *   POST /v1beta/models/{model}:generateContent, :streamGenerateContent?alt=sse   the Gemini API (also
 *       under /v1/). `x-goog-api-key` (or `?key=`) must be the fake's key: none is 403 PERMISSION_DENIED, another
 *       400 INVALID_ARGUMENT (reason API_KEY_INVALID), as Google answers. A model that is not
 *       `gemini-*` is 404 NOT_FOUND. Streams are `data:` lines only, CRLF-ended (no `event:`, no
 *       `[DONE]`), each call whole in one part, usageMetadata (cumulative) on every chunk. The JSON
 *       array Google streams without `alt=sse` is not served (400): gw never asks for it.
 *   POST /v1/projects/{project}/locations/{location}/publishers/google/models/{m}:generateContent,
 *       :streamGenerateContent?alt=sse   Gemini on Vertex: the same, but usage only on the last chunk
 *       (earlier ones carry only the traffic type), no candidate index, and a createTime
 *   POST /v1/projects/{project}/locations/{location}/publishers/anthropic/models/{m}:rawPredict,
 *       :streamRawPredict   Claude on Vertex: Anthropic's Messages, refused (400, Anthropic's shape, as
 *       Vertex answers) while the body still names a `model` or lacks `anthropic_version:
 *       "vertex-2023-10-16"`; else answered by the fake Anthropic provider behind it (`anthropic`), the
 *       model put back in the body as Anthropic's API wants it, so every `fake:` directive of
 *       fake-provider.ts works here too
 *     Every Vertex call needs `Authorization: Bearer <a token this fake issued and that has not
 *     expired>` (else 401 UNAUTHENTICATED), and the project and location the fake serves (another
 *     project is 403 PERMISSION_DENIED, another location 404 NOT_FOUND).
 *   POST /token   the OAuth token endpoint of the service accounts the test trusts (`trust`): an access
 *       token only for `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer` with an `assertion`
 *       that is a JWT signed RS256 by the account's private key (checked with its public key), `iss`
 *       the account's email, `aud` this endpoint, a `scope` with cloud-platform, `exp - iat` at most
 *       3600 s and not expired; else 400 `{error, error_description}` in Google's words.
 *
 * What the fake checks in a generateContent body, as Google does: no field Google does not know
 * (`Unknown name "model"`: Google's JSON parser refuses them, so a `model` or `stream` left in the
 * body fails), a non-empty `contents`, roles `user` or `model` (required on Vertex), no empty
 * `parts`, one data field per part, calls only in the model's turns and results only in the user's,
 * results as objects, as many results as the turn before made calls, thought signatures that are
 * base64 and that the fake issued, and (Gemini 3's rule, held here for every model so that a lost
 * signature fails whichever model a test names) a signature on the first call of each model turn.
 *
 * Every call is kept in `calls` (the token requests too, with their form fields), with the status it
 * was answered. Directives anywhere in the body's text steer the answer (Gemini and Gemini on Vertex):
 *   fake:tools          a call of get_weather({"city":"Paris"}) with a thought signature (and, for
 *                       `gemini-3*` models, an id, as Gemini 3 numbers its calls)
 *   fake:tools-once     the call while the conversation has no functionResponse, text once it has
 *   fake:parallel       with a call, a second one (get_time, unsigned, as Gemini signs only the first)
 *   fake:thinking       a thought summary part first, and thoughtsTokenCount in the usage
 *   fake:cache          cachedContentTokenCount in the usage
 *   fake:error:<status> Google's error: 400 INVALID_ARGUMENT, 429 RESOURCE_EXHAUSTED (with QuotaFailure
 *                       and RetryInfo details), 500 INTERNAL, 503 UNAVAILABLE, ...
 *   fake:midstream-fail two chunks, then the connection breaks
 *   fake:stream-error   a chunk, then Google's in-band error (`data: {"error": {...}}`), then the end
 */

export const GEMINI_TEXT = ['Hello', ' from', ' the fake', ' Gemini.']
export const GEMINI_THOUGHT = 'The user wants the weather in Paris.'
export const GEMINI_CALL = { name: 'get_weather', args: { city: 'Paris' } }
/** The counts every answer reports; the thoughts and cached ones only when asked for. */
export const GEMINI_USAGE = { prompt: 1_000, candidates: 400, thoughts: 100, cached: 300 }
const TOKEN_SCOPE = 'https://www.googleapis.com/auth/cloud-platform'
const JWT_BEARER = 'urn:ietf:params:oauth:grant-type:jwt-bearer'
const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16'
const TOKEN_SECONDS = 3_600

export interface GoogleCall {
  api: 'gemini' | 'vertex' | 'token'
  path: string
  /** With its `?`, or ''. */
  query: string
  headers: Record<string, string>
  /** The JSON body, or the token request's form fields. */
  body: Record<string, unknown>
  /** The model named in the path. */
  model?: string
  /** What the fake answered (200 for a stream, whatever broke in it). */
  status: number
}

export interface FakeGoogle {
  /** The Gemini API's base URL (GEMINI_BASE_URL) and Vertex's (a connection's baseUrl). */
  url: string
  /** The token endpoint: a service account's `token_uri`. */
  tokenUri: string
  apiKey: string
  project: string
  location: string
  calls: GoogleCall[]
  /** Access tokens issued. */
  readonly tokensIssued: number
  /** Every thought signature the fake put in an answer, in order. */
  signatures: string[]
  /** The fake Anthropic provider that answers Claude on Vertex. */
  anthropic: FakeProvider
  /** Trusts a service account: the token endpoint verifies its assertions with this public key. */
  trust(clientEmail: string, publicKey: KeyObject | string): void
  /** Revokes every access token issued so far, as rotating an account's key does: each is a 401 from then on. */
  revokeTokens(): void
  close(): Promise<void>
}

/** The JSON key file of a service account, as Google hands it out, with its token_uri at the fake. */
export function serviceAccountKeyFile(
  fake: FakeGoogle,
  account: { clientEmail: string; privateKeyPem: string; privateKeyId?: string },
): string {
  return JSON.stringify({
    type: 'service_account',
    project_id: fake.project,
    private_key_id: account.privateKeyId ?? 'fake-key-1',
    private_key: account.privateKeyPem,
    client_email: account.clientEmail,
    client_id: '100000000000000000001',
    auth_uri: 'https://accounts.google.com/o/oauth2/auth',
    token_uri: fake.tokenUri,
    universe_domain: 'googleapis.com',
  })
}

interface Directives {
  tools: boolean
  toolsOnce: boolean
  parallel: boolean
  thinking: boolean
  cache: boolean
  error?: number
  midstreamFail: boolean
  streamError: boolean
}

function directives(raw: string): Directives {
  const error = /fake:error:(\d{3})/.exec(raw)?.[1]
  return {
    tools: /fake:tools(?!-)/.test(raw),
    toolsOnce: raw.includes('fake:tools-once'),
    parallel: raw.includes('fake:parallel'),
    thinking: raw.includes('fake:thinking'),
    cache: raw.includes('fake:cache'),
    error: error === undefined ? undefined : Number(error),
    midstreamFail: raw.includes('fake:midstream-fail'),
    streamError: raw.includes('fake:stream-error'),
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)
const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : [])

// ---------------------------------------------------------------------------------------------
// Google's errors

const STATUS_NAMES: Record<number, string> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
}

const DEFAULT_MESSAGES: Record<number, string> = {
  429: 'You exceeded your current quota, please check your plan and billing details.',
  500: 'An internal error has occurred. Please retry or report in https://developers.generativeai.google/guide/troubleshooting',
  503: 'The model is overloaded. Please try again later.',
}

/** `google.rpc.Status` as Google's JSON APIs answer it. */
function googleError(code: number, message?: string, details?: unknown[]): Response {
  const status = STATUS_NAMES[code] ?? (code < 500 ? 'FAILED_PRECONDITION' : 'UNKNOWN')
  const text = message ?? DEFAULT_MESSAGES[code] ?? `fake Google error ${code}`
  const quota =
    code === 429
      ? [
          {
            '@type': 'type.googleapis.com/google.rpc.QuotaFailure',
            violations: [{ quotaMetric: 'generativelanguage.googleapis.com/generate_content_requests', quotaValue: '10' }],
          },
          { '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: '7s' },
        ]
      : []
  const all = [...quota, ...(details ?? [])]
  return Response.json({ error: { code, message: text, status, ...(all.length > 0 ? { details: all } : {}) } }, { status: code })
}

const invalidArgument = (message: string) => googleError(400, message)

/** Claude on Vertex refuses a body the way Anthropic's API does, in Anthropic's shape. */
const anthropicInvalid = (message: string) =>
  Response.json({ type: 'error', error: { type: 'invalid_request_error', message } }, { status: 400 })

// ---------------------------------------------------------------------------------------------
// What Google checks in a generateContent body

const fields = (...names: string[]) => new Set(names)
const TOP_FIELDS = fields(
  'contents',
  'systemInstruction',
  'tools',
  'toolConfig',
  'safetySettings',
  'generationConfig',
  'cachedContent',
  'labels',
  'serviceTier',
)
const CONTENT_FIELDS = fields('role', 'parts')
const DATA_FIELDS = [
  'text',
  'inlineData',
  'fileData',
  'functionCall',
  'functionResponse',
  'executableCode',
  'codeExecutionResult',
]
const PART_FIELDS = fields(...DATA_FIELDS, 'thought', 'thoughtSignature', 'videoMetadata', 'mediaResolution')
const CALL_FIELDS = fields('name', 'args', 'id')
const RESPONSE_FIELDS = fields('name', 'response', 'id', 'parts', 'willContinue', 'scheduling')
const BLOB_FIELDS = fields('mimeType', 'data')
const FILE_FIELDS = fields('mimeType', 'fileUri')
const TOOL_FIELDS = fields('functionDeclarations', 'googleSearch', 'googleSearchRetrieval', 'codeExecution', 'urlContext')
const DECLARATION_FIELDS = fields(
  'name',
  'description',
  'parameters',
  'parametersJsonSchema',
  'response',
  'responseJsonSchema',
  'behavior',
)
const TOOL_CONFIG_FIELDS = fields('functionCallingConfig', 'retrievalConfig')
const CALLING_FIELDS = fields('mode', 'allowedFunctionNames')
const GENERATION_FIELDS = fields(
  'temperature',
  'topP',
  'topK',
  'candidateCount',
  'maxOutputTokens',
  'stopSequences',
  'presencePenalty',
  'frequencyPenalty',
  'seed',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'responseLogprobs',
  'logprobs',
  'responseModalities',
  'mediaResolution',
  'thinkingConfig',
)
const THINKING_FIELDS = fields('includeThoughts', 'thinkingBudget', 'thinkingLevel')
const FUNCTION_NAME = /^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/

class Refusal extends Error {}

/** Google's parser refuses a field it does not know, naming it and where it is. */
function known(value: unknown, allowed: ReadonlySet<string>, at: string): Record<string, unknown> {
  if (!isRecord(value)) throw new Refusal(`Invalid value at '${at || 'request'}': expected an object.`)
  for (const name of Object.keys(value))
    if (!allowed.has(name))
      throw new Refusal(`Invalid JSON payload received. Unknown name "${name}"${at ? ` at '${at}'` : ''}: Cannot find field.`)
  return value
}

interface Checked {
  /** Whether the conversation carries a function's result already. */
  hasResult: boolean
}

function checkRequest(body: Record<string, unknown>, vertex: boolean, issued: ReadonlySet<string>): Checked {
  known(body, TOP_FIELDS, '')
  const contents = list(body.contents)
  if (contents.length === 0) throw new Refusal('* GenerateContentRequest.contents: contents is not specified')
  if (body.systemInstruction !== undefined) {
    const system = known(body.systemInstruction, CONTENT_FIELDS, 'system_instruction')
    for (const [i, part] of list(system.parts).entries()) checkPart(part, `system_instruction.parts[${i}]`, 'user', issued)
  }
  let hasResult = false
  let callsBefore = 0
  for (const [i, content] of contents.entries()) {
    const at = `contents[${i}]`
    const { role, parts } = known(content, CONTENT_FIELDS, at)
    if (role === undefined && vertex) throw new Refusal('Please use a valid role: user, model.')
    if (role !== undefined && role !== 'user' && role !== 'model') throw new Refusal('Please use a valid role: user, model.')
    const turn = role === 'model' ? 'model' : 'user'
    if (list(parts).length === 0) throw new Refusal(`* GenerateContentRequest.${at}.parts: contents.parts must not be empty.`)
    const checked = list(parts).map((part, j) => checkPart(part, `${at}.parts[${j}]`, turn, issued))
    const calls = checked.filter((part) => part.call)
    const results = checked.filter((part) => part.result).length
    if (callsBefore > 0 && results !== callsBefore)
      throw new Refusal(
        'Please ensure that the number of function response parts is equal to the number of function call parts of the function call turn.',
      )
    hasResult ||= results > 0
    callsBefore = calls.length
    const first = calls[0]
    if (first && !first.signed)
      throw new Refusal(
        `Function call is missing a thought_signature in functionCall parts. This is required for tools to work correctly, and missing thought_signature may lead to degraded model performance. Additional data, function call \`${first.name}\` , position ${i + 1}. Please refer to https://ai.google.dev/gemini-api/docs/thought-signatures for more details.`,
      )
  }
  for (const [i, tool] of list(body.tools).entries()) {
    const { functionDeclarations } = known(tool, TOOL_FIELDS, `tools[${i}]`)
    for (const [j, declaration] of list(functionDeclarations).entries()) {
      const at = `tools[${i}].function_declarations[${j}]`
      const checked = known(declaration, DECLARATION_FIELDS, at)
      if (typeof checked.name !== 'string' || !FUNCTION_NAME.test(checked.name))
        throw new Refusal(`* GenerateContentRequest.${at}.name: Invalid function name.`)
      if (checked.parameters !== undefined && checked.parametersJsonSchema !== undefined)
        throw new Refusal(`* GenerateContentRequest.${at}: parameters and parameters_json_schema are mutually exclusive.`)
    }
  }
  if (body.toolConfig !== undefined) {
    const config = known(body.toolConfig, TOOL_CONFIG_FIELDS, 'tool_config')
    if (config.functionCallingConfig !== undefined)
      known(config.functionCallingConfig, CALLING_FIELDS, 'tool_config.function_calling_config')
  }
  if (body.generationConfig !== undefined) {
    const config = known(body.generationConfig, GENERATION_FIELDS, 'generation_config')
    if (config.thinkingConfig !== undefined) {
      const thinking = known(config.thinkingConfig, THINKING_FIELDS, 'generation_config.thinking_config')
      if (thinking.thinkingBudget !== undefined && thinking.thinkingLevel !== undefined)
        throw new Refusal('You can only set only one of thinking budget and thinking level.')
    }
  }
  return { hasResult }
}

interface CheckedPart {
  call: boolean
  result: boolean
  signed: boolean
  name?: string
}

function checkPart(value: unknown, at: string, turn: 'user' | 'model', issued: ReadonlySet<string>): CheckedPart {
  const part = known(value, PART_FIELDS, at)
  const data = DATA_FIELDS.filter((name) => part[name] !== undefined)
  if (data.length !== 1)
    throw new Refusal(`* GenerateContentRequest.${at}.data: required oneof field 'data' must have one initialized field`)
  if (part.text !== undefined && typeof part.text !== 'string')
    throw new Refusal(`Invalid value at '${at}.text' (TYPE_STRING), ${JSON.stringify(part.text)}`)
  const signature = part.thoughtSignature
  if (signature !== undefined) {
    if (typeof signature !== 'string' || !BASE64.test(signature))
      throw new Refusal(
        `Invalid value at '${at}.thought_signature' (TYPE_BYTES), Base64 decoding failed for ${JSON.stringify(signature)}`,
      )
    if (!issued.has(signature)) throw new Refusal(`Thought signature is not valid (${at}).`)
  }
  if (part.inlineData !== undefined) known(part.inlineData, BLOB_FIELDS, `${at}.inline_data`)
  if (part.fileData !== undefined) known(part.fileData, FILE_FIELDS, `${at}.file_data`)
  if (part.functionCall !== undefined) {
    const call = known(part.functionCall, CALL_FIELDS, `${at}.function_call`)
    if (turn !== 'model') throw new Refusal(`* GenerateContentRequest.${at}: function calls are the model's, not the user's.`)
    if (typeof call.name !== 'string' || call.name === '')
      throw new Refusal(`* GenerateContentRequest.${at}.function_call.name: Name cannot be empty.`)
    if (call.args !== undefined && !isRecord(call.args))
      throw new Refusal(`Invalid value at '${at}.function_call.args' (type.googleapis.com/google.protobuf.Struct)`)
    return { call: true, result: false, signed: signature !== undefined, name: call.name }
  }
  if (part.functionResponse !== undefined) {
    const result = known(part.functionResponse, RESPONSE_FIELDS, `${at}.function_response`)
    if (turn !== 'user') throw new Refusal(`* GenerateContentRequest.${at}: function responses are the user's, not the model's.`)
    if (typeof result.name !== 'string' || result.name === '')
      throw new Refusal(`* GenerateContentRequest.${at}.function_response.name: Name cannot be empty.`)
    if (!isRecord(result.response))
      throw new Refusal(`Invalid value at '${at}.function_response.response' (type.googleapis.com/google.protobuf.Struct)`)
    return { call: false, result: true, signed: false }
  }
  return { call: false, result: false, signed: signature !== undefined }
}

// ---------------------------------------------------------------------------------------------
// Answers

interface Answering {
  model: string
  vertex: boolean
  d: Directives
  hasResult: boolean
  responseId: string
  /** A fresh thought signature, remembered as issued. */
  sign(): string
}

function usageOf({ d }: Answering, candidates: number) {
  const thoughts = d.thinking ? GEMINI_USAGE.thoughts : 0
  return {
    promptTokenCount: GEMINI_USAGE.prompt,
    candidatesTokenCount: candidates,
    ...(thoughts > 0 ? { thoughtsTokenCount: thoughts } : {}),
    ...(d.cache ? { cachedContentTokenCount: GEMINI_USAGE.cached } : {}),
    totalTokenCount: GEMINI_USAGE.prompt + candidates + thoughts,
    promptTokensDetails: [{ modality: 'TEXT', tokenCount: GEMINI_USAGE.prompt }],
  }
}

/** The parts of the answer, chunk by chunk: a thought, then the text piece by piece, or the calls. */
function answerChunks(a: Answering): Array<Array<Record<string, unknown>>> {
  const chunks: Array<Array<Record<string, unknown>>> = []
  if (a.d.thinking) chunks.push([{ text: GEMINI_THOUGHT, thought: true }])
  if (a.d.tools || (a.d.toolsOnce && !a.hasResult)) {
    // Gemini 3 numbers its calls; 2.x sends none.
    const id = (n: number) => (a.model.startsWith('gemini-3') ? { id: `fc_${a.responseId}_${n}` } : {})
    const calls: Array<Record<string, unknown>> = [{ functionCall: { ...GEMINI_CALL, ...id(0) }, thoughtSignature: a.sign() }]
    if (a.d.parallel) calls.push({ functionCall: { name: 'get_time', args: { zone: 'Europe/Paris' }, ...id(1) } })
    chunks.push(calls)
  } else for (const text of GEMINI_TEXT) chunks.push([{ text }])
  return chunks
}

function responseOf(a: Answering, parts: Array<Record<string, unknown>>, usage: unknown, finished: boolean) {
  const candidate = {
    content: { role: 'model', parts },
    ...(finished ? { finishReason: 'STOP' } : {}),
    ...(a.vertex ? {} : { index: 0 }),
  }
  return {
    candidates: [candidate],
    ...(usage === undefined ? {} : { usageMetadata: usage }),
    modelVersion: a.model,
    ...(a.vertex ? { createTime: new Date(1_700_000_000_000).toISOString() } : {}),
    responseId: a.responseId,
  }
}

function wholeAnswer(a: Answering): Response {
  const parts = answerChunks(a).flat()
  const usage = usageOf(a, GEMINI_USAGE.candidates)
  const body = responseOf(a, mergeText(parts), a.vertex ? { ...usage, trafficType: 'ON_DEMAND' } : usage, true)
  return Response.json(body)
}

/** A whole answer's text is one part, as Gemini's are. */
function mergeText(parts: Array<Record<string, unknown>>): Array<Record<string, unknown>> {
  const out: Array<Record<string, unknown>> = []
  for (const part of parts) {
    const last = out.at(-1)
    if (last && typeof last.text === 'string' && typeof part.text === 'string' && !last.thought && !part.thought)
      last.text += part.text
    else out.push({ ...part })
  }
  return out
}

const encoder = new TextEncoder()
const sseData = (payload: unknown) => encoder.encode(`data: ${JSON.stringify(payload)}\r\n\r\n`)

/**
 * Chunks with only their new parts; the Gemini API's usage is cumulative on each, Vertex's only on the
 * last (earlier ones name the traffic type alone). Google ends its lines with CRLF.
 */
function streamAnswer(a: Answering, signal: AbortSignal): Response {
  const chunks = answerChunks(a)
  const frames = chunks.map((parts, i) => {
    const last = i === chunks.length - 1
    const candidates = Math.round((GEMINI_USAGE.candidates * (i + 1)) / chunks.length)
    const usage = a.vertex
      ? last
        ? { ...usageOf(a, candidates), trafficType: 'ON_DEMAND' }
        : { trafficType: 'ON_DEMAND' }
      : usageOf(a, candidates)
    return sseData(responseOf(a, parts, usage, last))
  })
  const body = new ReadableStream<Uint8Array>({
    async start(controller) {
      const sent = a.d.midstreamFail ? frames.slice(0, 2) : a.d.streamError ? frames.slice(0, 1) : frames
      for (const frame of sent) {
        if (signal.aborted) return
        controller.enqueue(frame)
        await Bun.sleep(1)
      }
      if (a.d.midstreamFail) {
        await Bun.sleep(20)
        controller.error(new Error('fake Google broke the stream'))
        return
      }
      if (a.d.streamError)
        controller.enqueue(sseData({ error: { code: 500, message: DEFAULT_MESSAGES[500], status: 'INTERNAL' } }))
      controller.close()
    },
  })
  return new Response(body, { headers: { 'content-type': 'text/event-stream', 'content-disposition': 'attachment' } })
}

// ---------------------------------------------------------------------------------------------
// The token endpoint

const base64urlJson = (part: string | undefined): Record<string, unknown> | undefined => {
  try {
    const value: unknown = JSON.parse(Buffer.from(part ?? '', 'base64url').toString('utf8'))
    return isRecord(value) ? value : undefined
  } catch {
    return undefined
  }
}

const grantError = (error: string, description: string) =>
  Response.json({ error, error_description: description }, { status: 400 })

/** Google's checks of a JWT bearer assertion; the description Google gives when one fails. */
function assertionProblem(
  assertion: string,
  accounts: ReadonlyMap<string, KeyObject>,
  tokenUri: string,
  nowSeconds: number,
): string | undefined {
  const [header, claims, signature, ...rest] = assertion.split('.')
  const head = base64urlJson(header)
  const claimed = base64urlJson(claims)
  if (!head || !claimed || signature === undefined || rest.length > 0) return 'Invalid JWT: the assertion is not a JWT.'
  if (head.alg !== 'RS256') return 'Invalid JWT: the algorithm must be RS256.'
  const key = typeof claimed.iss === 'string' ? accounts.get(claimed.iss) : undefined
  if (!key) return 'Invalid grant: account not found'
  const signed = verify('sha256', Buffer.from(`${header}.${claims}`), key, Buffer.from(signature, 'base64url'))
  if (!signed) return 'Invalid JWT Signature.'
  if (claimed.aud !== tokenUri) return `Invalid JWT: Failed audience check. The right audience is ${tokenUri}`
  const scopes = typeof claimed.scope === 'string' ? claimed.scope.split(' ') : []
  if (!scopes.includes(TOKEN_SCOPE)) return 'Invalid OAuth scope or ID token audience provided.'
  const { iat, exp } = claimed
  const timely =
    typeof iat === 'number' &&
    typeof exp === 'number' &&
    exp - iat <= TOKEN_SECONDS &&
    exp > nowSeconds &&
    iat <= nowSeconds + 300
  if (!timely)
    return 'Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.'
  return undefined
}

// ---------------------------------------------------------------------------------------------
// The server

const GEMINI_PATH = /^\/v1(?:beta)?\/models\/([^/:]+):(generateContent|streamGenerateContent)$/
const VERTEX_PATH =
  /^\/v1\/projects\/([^/]+)\/locations\/([^/]+)\/publishers\/(google|anthropic)\/models\/([^/:]+):(generateContent|streamGenerateContent|rawPredict|streamRawPredict)$/

export async function startFakeGoogle(
  options: { apiKey?: string; project?: string; location?: string } = {},
): Promise<FakeGoogle> {
  const apiKey = options.apiKey ?? 'AIzaFakeGeminiKey0123456789'
  const project = options.project ?? 'fake-project'
  const location = options.location ?? 'us-central1'
  const anthropic = await startFakeProvider()
  const calls: GoogleCall[] = []
  const accounts = new Map<string, KeyObject>()
  const tokens = new Map<string, number>()
  const signatures: string[] = []
  const issued = new Set<string>()
  let url = ''
  let answered = 0

  const sign = () => {
    // Random bytes of varied length: their base64 has `+`, `/` and padding as real signatures do.
    const signature = randomBytes(200 + (signatures.length % 3)).toString('base64')
    signatures.push(signature)
    issued.add(signature)
    return signature
  }

  function token(form: Record<string, unknown>): Response {
    if (form.grant_type !== JWT_BEARER)
      return grantError('unsupported_grant_type', `Invalid grant_type: ${String(form.grant_type ?? '')}`)
    const assertion = typeof form.assertion === 'string' ? form.assertion : ''
    const problem = assertionProblem(assertion, accounts, `${url}/token`, Math.floor(Date.now() / 1000))
    if (problem) return grantError('invalid_grant', problem)
    const accessToken = `ya29.fake-${tokens.size + 1}-${randomBytes(12).toString('hex')}`
    tokens.set(accessToken, Date.now() + TOKEN_SECONDS * 1000)
    return Response.json({ access_token: accessToken, expires_in: TOKEN_SECONDS - 1, token_type: 'Bearer' })
  }

  function record(api: GoogleCall['api'], request: Request, body: Record<string, unknown>, model?: string): GoogleCall {
    const target = new URL(request.url)
    const call: GoogleCall = {
      api,
      path: target.pathname,
      query: target.search,
      headers: Object.fromEntries(request.headers),
      body,
      ...(model === undefined ? {} : { model }),
      status: 200,
    }
    calls.push(call)
    return call
  }

  /** The Vertex caller's bearer token, checked: undefined when it is one the fake issued and still good. */
  function vertexAuthProblem(request: Request): Response | undefined {
    const bearer = /^Bearer (\S+)$/.exec(request.headers.get('authorization') ?? '')?.[1]
    const expires = bearer === undefined ? undefined : tokens.get(bearer)
    if (expires !== undefined && expires > Date.now()) return undefined
    const response = googleError(
      401,
      'Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential. See https://developers.google.com/identity/sign-in/web/devconsole-project.',
    )
    response.headers.set('www-authenticate', 'Bearer realm="https://accounts.google.com/"')
    return response
  }

  function geminiKeyProblem(request: Request, target: URL): Response | undefined {
    const key = request.headers.get('x-goog-api-key') ?? target.searchParams.get('key')
    if (key === null || key === '')
      return googleError(
        403,
        "Method doesn't allow unregistered callers (callers without established identity). Please use API Key or other form of API consumer identity to call this API.",
      )
    if (key === apiKey) return undefined
    return googleError(400, 'API key not valid. Please pass a valid API key.', [
      {
        '@type': 'type.googleapis.com/google.rpc.ErrorInfo',
        reason: 'API_KEY_INVALID',
        domain: 'googleapis.com',
        metadata: { service: 'generativelanguage.googleapis.com' },
      },
    ])
  }

  async function generate(
    request: Request,
    target: URL,
    model: string,
    method: string,
    vertex: boolean,
    body: Record<string, unknown>,
    raw: string,
  ): Promise<Response> {
    if (!model.startsWith('gemini-'))
      return googleError(
        404,
        vertex
          ? `Publisher Model \`projects/${project}/locations/${location}/publishers/google/models/${model}\` not found.`
          : `models/${model} is not found for API version v1beta, or is not supported for generateContent. Call ListModels to see the list of available models and their supported methods.`,
      )
    const stream = method === 'streamGenerateContent'
    if (stream && target.searchParams.get('alt') !== 'sse')
      return invalidArgument('this fake serves streamGenerateContent as server-sent events only (alt=sse)')
    let checked: Checked
    try {
      checked = checkRequest(body, vertex, issued)
    } catch (error) {
      if (error instanceof Refusal) return invalidArgument(error.message)
      throw error
    }
    const d = directives(raw)
    if (d.error !== undefined) return googleError(d.error)
    answered += 1
    const answering: Answering = {
      model,
      vertex,
      d,
      hasResult: checked.hasResult,
      responseId: `fakeResp${answered}`,
      sign,
    }
    return stream ? streamAnswer(answering, request.signal) : wholeAnswer(answering)
  }

  /** Claude on Vertex: the body checked as Vertex checks it, then answered by the fake Anthropic provider. */
  async function claude(request: Request, model: string, method: string, body: Record<string, unknown>): Promise<Response> {
    if (body.model !== undefined) return anthropicInvalid('model: Extra inputs are not permitted')
    if (body.anthropic_version === undefined) return anthropicInvalid('anthropic_version: Field required')
    if (body.anthropic_version !== VERTEX_ANTHROPIC_VERSION)
      return anthropicInvalid(`anthropic_version: Input should be '${VERTEX_ANTHROPIC_VERSION}'`)
    const { anthropic_version: _version, ...messages } = body
    const stream = method === 'streamRawPredict'
    const answer = await fetch(`${anthropic.anthropicBaseUrl}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'vertex', 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ ...messages, model, ...(stream ? { stream: true } : {}) }),
      signal: request.signal,
    })
    const headers = new Headers({ 'content-type': answer.headers.get('content-type') ?? 'application/json' })
    return new Response(answer.body, { status: answer.status, headers })
  }

  async function vertexCall(
    request: Request,
    target: URL,
    match: RegExpExecArray,
    body: Record<string, unknown> | undefined,
    raw: string,
  ): Promise<Response> {
    const [, projectId, locationId, publisher, model = '', method = ''] = match
    const unauthenticated = vertexAuthProblem(request)
    if (unauthenticated) return unauthenticated
    const resource = `projects/${projectId}/locations/${locationId}/publishers/${publisher}/models/${model}`
    if (projectId !== project)
      return googleError(
        403,
        `Permission 'aiplatform.endpoints.predict' denied on resource '//aiplatform.googleapis.com/${resource}' (or it may not exist).`,
      )
    if (locationId !== location) return googleError(404, `Publisher Model \`${resource}\` not found.`)
    if (!body) return invalidArgument('Invalid JSON payload received.')
    const google = publisher === 'google'
    if (google !== (method === 'generateContent' || method === 'streamGenerateContent'))
      return googleError(404, `The method ${method} is not served for publisher ${publisher}.`)
    return google ? generate(request, target, model, method, true, body, raw) : claude(request, model, method, body)
  }

  function geminiCall(
    request: Request,
    target: URL,
    match: RegExpExecArray,
    body: Record<string, unknown> | undefined,
    raw: string,
  ): Promise<Response> | Response {
    const [, model = '', method = ''] = match
    const refused = geminiKeyProblem(request, target)
    if (refused) return refused
    if (!body) return invalidArgument('Invalid JSON payload received.')
    return generate(request, target, model, method, false, body, raw)
  }

  /** Every call is recorded as it came, with the status it was answered. */
  async function answer(request: Request, target: URL): Promise<Response> {
    const raw = await request.text()
    if (target.pathname === '/token') {
      const call = record('token', request, Object.fromEntries(new URLSearchParams(raw)))
      const response = token(call.body)
      call.status = response.status
      return response
    }
    const vertex = VERTEX_PATH.exec(target.pathname)
    const gemini = vertex ? null : GEMINI_PATH.exec(target.pathname)
    if (!vertex && !gemini) return googleError(404, `The requested URL ${target.pathname} was not found on this server.`)
    const body = parseBody(raw)
    const call = record(vertex ? 'vertex' : 'gemini', request, body ?? {}, vertex?.[4] ?? gemini?.[1])
    const response = vertex
      ? await vertexCall(request, target, vertex, body, raw)
      : await geminiCall(request, target, gemini as RegExpExecArray, body, raw)
    call.status = response.status
    return response
  }

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 0,
    fetch(request) {
      const target = new URL(request.url)
      if (request.method !== 'POST') return googleError(404, `${request.method} ${target.pathname} is not served here.`)
      return answer(request, target)
    },
  })
  url = `http://127.0.0.1:${server.port}`

  return {
    url,
    tokenUri: `${url}/token`,
    apiKey,
    project,
    location,
    calls,
    get tokensIssued() {
      return tokens.size
    },
    signatures,
    anthropic,
    trust(clientEmail, publicKey) {
      accounts.set(clientEmail, typeof publicKey === 'string' ? createPublicKey(publicKey) : publicKey)
    },
    revokeTokens() {
      for (const issuedToken of tokens.keys()) tokens.set(issuedToken, 0)
    },
    async close() {
      await server.stop(true)
      await anthropic.close()
    },
  }
}

function parseBody(raw: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(raw)
    return isRecord(parsed) ? parsed : undefined
  } catch {
    return undefined
  }
}
