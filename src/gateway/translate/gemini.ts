/**
 * Google's Gemini `generateContent`, as Google's GenAI SDKs speak it and as the Gemini API and Vertex
 * AI answer: read into the canonical call and written from it, the answer and its stream both ways.
 * The model is named in the URL and streaming is another method (`streamGenerateContent?alt=sse`), so
 * neither is in the body: the route and the provider connection set them.
 */

import type { Usage } from '../../money/usage'
import type { SseEvent } from '../../util/sse'
import { asTokenCount } from '../providers/provider'
import {
  type Answer,
  type Block,
  type CallerFormat,
  type ChatCall,
  type Delta,
  type ImageBlock,
  type ProviderFormat,
  type StopReason,
  type StreamReader,
  type StreamWriter,
  settingName,
  type TextBlock,
  type ToolCallBlock,
  type ToolChoice,
  type ToolResultBlock,
  type ToolSpec,
  toolSpec,
  type WrittenRequest,
} from './canonical'
import type {
  GeminiCandidate,
  GeminiContent,
  GeminiFinishReason,
  GeminiFunctionCallingMode,
  GeminiFunctionDeclaration,
  GeminiGenerateContentRequest,
  GeminiGenerateContentResponse,
  GeminiGenerationConfig,
  GeminiPart,
  GeminiUsageMetadata,
} from './gemini-types'
import { addTurn } from './openai-chat'
import { eventPayload } from './stream'
import { finiteNumber, isRecord, isString, lookup, nameUntranslated, parseArguments, saysSomething, wireName } from './types'

// ---------------------------------------------------------------------------------------------
// Shared by both directions

/** The canonical number settings and where `generationConfig` keeps each. */
const NUMBER_SETTINGS = [
  ['maxTokens', 'maxOutputTokens'],
  ['temperature', 'temperature'],
  ['topP', 'topP'],
  ['topK', 'topK'],
  ['seed', 'seed'],
  ['presencePenalty', 'presencePenalty'],
  ['frequencyPenalty', 'frequencyPenalty'],
] as const

/** The image types Gemini documents; a URL's type is guessed from its extension, as Gemini wants one named. */
const IMAGE_TYPE_OF_EXTENSION: Record<string, string> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  webp: 'image/webp',
  heic: 'image/heic',
  heif: 'image/heif',
}

function imageTypeOfUrl(url: string): string | undefined {
  const extension = /\.([A-Za-z0-9]+)$/.exec(urlOf(url)?.pathname ?? '')?.[1]?.toLowerCase()
  return lookup(IMAGE_TYPE_OF_EXTENSION, extension)
}

function urlOf(text: string): URL | undefined {
  try {
    return new URL(text)
  } catch {
    return undefined
  }
}

/**
 * The id gw gives a call that Gemini sent without one (Gemini 2.x numbers none): made of the answer's
 * id and the call's place in it, so the whole answer and its stream give the same ids, and two answers
 * never share one. Gemini pairs a result with such a call by name and order, so when the caller sends
 * them back the id is left out again, and Gemini sees its calls as it sent them.
 */
const MADE_UP_ID = 'call_gw_'
const madeUpCallId = (responseId: string, call: number): string =>
  `${MADE_UP_ID}${responseId.replace(/[^\w-]/g, '').slice(0, 64)}_${call}`
const idForGemini = (id: string): { id: string } | Record<string, never> => (id === '' || id.startsWith(MADE_UP_ID) ? {} : { id })

/**
 * Gemini 3 refuses a conversation whose earlier calls come back without their thought signatures, and
 * OpenAI's and Anthropic's callers have no field to keep one in; but every caller sends a call's id
 * back as it got it, on the call and on its result. So a signed call reaches them with the signature
 * in its id, `<id>__thought__<signature as base64url>` (Anthropic checks ids against
 * `^[a-zA-Z0-9_-]+$`), and the writer splits it back onto the call's part. Gemini writes signatures as
 * padded standard base64 (its JSON for bytes), which turns into base64url and back character for
 * character. A signature longer than MAX_CARRIED_SIGNATURE, or not in that form, is not carried: the
 * call keeps its plain id and comes back unsigned, which Gemini 2.5 takes and Gemini 3 refuses with
 * its own 400 (passed on to the caller), rather than gw sending callers ids of unbounded length.
 */
const SIGNATURE_MARK = '__thought__'
/** About 12 KB of signature: Gemini's are a few hundred bytes to a few kilobytes. */
const MAX_CARRIED_SIGNATURE = 16_384
const STANDARD_BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/
const BASE64URL = /^[A-Za-z0-9_-]+$/

/** A signed call's id for callers of other formats; the plain id when its signature cannot ride in it. */
function idCarrying(id: string, signature: string): string {
  if (signature.length > MAX_CARRIED_SIGNATURE || !STANDARD_BASE64.test(signature)) return id
  const carried = signature.replace(/=+$/, '').replaceAll('+', '-').replaceAll('/', '_')
  return `${id}${SIGNATURE_MARK}${carried}`
}

/** An id as a caller sent it back: Gemini's own (or gw's made-up) id, and the signature it carried, if any. */
function splitCarried(id: string): { id: string; signature?: string } {
  const mark = id.indexOf(SIGNATURE_MARK)
  const carried = mark < 0 ? '' : id.slice(mark + SIGNATURE_MARK.length)
  if (!BASE64URL.test(carried) || carried.length % 4 === 1) return { id }
  const signature = carried.replaceAll('-', '+').replaceAll('_', '/')
  return { id: id.slice(0, mark), signature: signature.padEnd(signature.length + ((4 - (signature.length % 4)) % 4), '=') }
}

/**
 * The conversation with the signatures the ids carry taken out, for a provider other than Gemini: they
 * mean nothing there, and long ids are refused there (Bedrock takes ids of at most 64 characters). A
 * call and its result lose the same part, so they still pair; the caller's own history keeps it, for
 * a later turn that goes to Gemini again.
 */
export function withoutCarriedSignatures(call: ChatCall): ChatCall {
  if (!call.turns.some((turn) => turn.content.some(carriesSignature))) return call
  const plain = (block: Block): Block => {
    if (block.type === 'tool_call') return { ...block, id: splitCarried(block.id).id }
    return block.type === 'tool_result' ? { ...block, callId: splitCarried(block.callId).id } : block
  }
  return { ...call, turns: call.turns.map((turn) => ({ ...turn, content: turn.content.map(plain) })) }
}

const carriesSignature = (block: Block): boolean =>
  (block.type === 'tool_call' && block.id.includes(SIGNATURE_MARK)) ||
  (block.type === 'tool_result' && block.callId.includes(SIGNATURE_MARK))

/** A call Gemini answered with, as other formats' callers get it: its signature in its id (see idCarrying). */
function answered(block: Block | undefined): Block | undefined {
  if (block?.type !== 'tool_call' || block.signature === undefined) return block
  const id = idCarrying(block.id, block.signature)
  if (id === block.id) return block
  const { signature: _carried, ...call } = block
  return { ...call, id }
}

/** The first candidate, the one answer other formats have; Vertex leaves `index` out, which means 0. */
function firstCandidate(response: Record<string, unknown>): Record<string, unknown> | undefined {
  const candidates = Array.isArray(response.candidates) ? response.candidates : []
  return candidates.find((candidate): candidate is Record<string, unknown> => isRecord(candidate) && (candidate.index ?? 0) === 0)
}

function partsOf(content: unknown): unknown[] {
  return isRecord(content) && Array.isArray(content.parts) ? content.parts : []
}

/**
 * One part of what the model said: text, a thought summary, or a function call, with the part's
 * thought signature where the canonical call has room for it (calls and thinking). A signature on a
 * plain text part has none: Gemini checks signatures only on function calls, and merely recommends
 * sending back one on text. `idFor` names a call that came without an id.
 */
function modelBlock(part: Record<string, unknown>, idFor: () => string): Block | undefined {
  const signature = isString(part.thoughtSignature) && part.thoughtSignature !== '' ? { signature: part.thoughtSignature } : {}
  const call = part.functionCall
  if (isRecord(call) && isString(call.name)) {
    const id = isString(call.id) && call.id !== '' ? call.id : idFor()
    return { type: 'tool_call', id, name: call.name, arguments: isRecord(call.args) ? call.args : {}, ...signature }
  }
  if (!isString(part.text)) return undefined
  if (part.thought === true) return { type: 'thinking', text: part.text, ...signature }
  return part.text === '' ? undefined : { type: 'text', text: part.text }
}

// ---------------------------------------------------------------------------------------------
// The request, as a caller sends it

const READ_FIELDS = new Set(['model', 'contents', 'systemInstruction', 'tools', 'toolConfig', 'generationConfig'])
const CONTENT_FIELDS = new Set(['role', 'parts'])
const SYSTEM_PART_FIELDS = new Set(['text'])
const PART_FIELDS = new Set(['text', 'thought', 'thoughtSignature', 'inlineData', 'fileData', 'functionCall', 'functionResponse'])
const BLOB_FIELDS = new Set(['mimeType', 'data'])
const FILE_FIELDS = new Set(['mimeType', 'fileUri'])
const FUNCTION_CALL_FIELDS = new Set(['name', 'args', 'id'])
const FUNCTION_RESPONSE_FIELDS = new Set(['name', 'response', 'id', 'parts'])
const TOOL_FIELDS = new Set(['functionDeclarations'])
const DECLARATION_FIELDS = new Set(['name', 'description', 'parameters', 'parametersJsonSchema'])
const TOOL_CONFIG_FIELDS = new Set(['functionCallingConfig'])
const CALLING_CONFIG_FIELDS = new Set(['mode', 'allowedFunctionNames'])
const GENERATION_FIELDS = new Set([
  ...NUMBER_SETTINGS.map(([, field]) => field),
  'stopSequences',
  'responseMimeType',
  'responseSchema',
  'responseJsonSchema',
  'thinkingConfig',
  'candidateCount',
])
/** `includeThoughts` needs no carrying: any thinking a provider returns reaches the caller as thought parts. */
const THINKING_FIELDS = new Set(['thinkingBudget', 'includeThoughts'])

const PART = 'contents[].parts[].'

/** The caller's name for each setting and part, for a provider that cannot carry it. */
const NAMES: ChatCall['names'] = {
  ...Object.fromEntries(NUMBER_SETTINGS.map(([setting, field]) => [setting, `generationConfig.${field}`])),
  stop: 'generationConfig.stopSequences',
  responseFormat: 'generationConfig.responseMimeType',
  toolChoice: 'toolConfig.functionCallingConfig',
  thinkingBudget: 'generationConfig.thinkingConfig.thinkingBudget',
  thinking: `${PART}thought`,
  image: `${PART}fileData`,
  toolResultImage: `${PART}functionResponse.parts`,
  toolResultError: `${PART}functionResponse.response.error`,
}

function readRequest(body: Record<string, unknown>): { call: ChatCall; dropped: string[] } {
  const dropped = new Set<string>()
  nameUntranslated(body, READ_FIELDS, '', dropped)
  const call: ChatCall = {
    // The model is in the URL; the route that reads it sets it.
    model: '',
    system: systemBlocks(body.systemInstruction, dropped),
    turns: [],
    stream: undefined,
    tools: toolsOf(body.tools, dropped),
    names: { ...NAMES },
  }
  addContents(call, body.contents, dropped)
  readGenerationConfig(call, body.generationConfig, dropped)
  readToolChoice(call, body.toolConfig, dropped)
  return { call, dropped: [...dropped] }
}

/** The role of `systemInstruction` means nothing (the JS SDK sends `user`); only its text does. */
function systemBlocks(instruction: unknown, dropped: Set<string>): TextBlock[] {
  if (instruction === undefined || instruction === null) return []
  if (isString(instruction)) return saysSomething(instruction) ? [{ type: 'text', text: instruction }] : []
  if (!isRecord(instruction) || !Array.isArray(instruction.parts)) {
    dropped.add('systemInstruction')
    return []
  }
  nameUntranslated(instruction, CONTENT_FIELDS, 'systemInstruction.', dropped)
  const blocks: TextBlock[] = []
  for (const part of instruction.parts) {
    if (!isRecord(part)) dropped.add('systemInstruction.parts[]')
    else nameUntranslated(part, SYSTEM_PART_FIELDS, 'systemInstruction.parts[].', dropped)
    if (isRecord(part) && isString(part.text) && saysSomething(part.text)) blocks.push({ type: 'text', text: part.text })
  }
  return blocks
}

/**
 * Pairs results with calls for callers that number neither (Gemini 2.x): a result without an id
 * answers the oldest unanswered call of its name in the model's last turn, as Gemini pairs them.
 */
function callPairing() {
  let waiting = new Map<string, string[]>()
  return {
    /** A new model turn: the calls of earlier turns are answered, or never will be. */
    modelTurn() {
      waiting = new Map()
    },
    called(call: ToolCallBlock) {
      waiting.set(call.name, [...(waiting.get(call.name) ?? []), call.id])
    },
    answered(name: string, id: string | undefined): string | undefined {
      const queue = waiting.get(name) ?? []
      const callId = id ?? queue[0]
      waiting.set(
        name,
        queue.filter((waitingId) => waitingId !== callId),
      )
      return callId
    },
  }
}

type CallPairing = ReturnType<typeof callPairing>

function addContents(call: ChatCall, contents: unknown, dropped: Set<string>): void {
  if (contents === undefined || contents === null) return
  if (!Array.isArray(contents)) {
    dropped.add('contents')
    return
  }
  const pairing = callPairing()
  let previousRole: string | undefined
  contents.forEach((content, index) => {
    if (!isRecord(content)) {
      dropped.add('contents[]')
      return
    }
    nameUntranslated(content, CONTENT_FIELDS, 'contents[].', dropped)
    // The Gemini API reads a content without a role as the user's.
    const role = content.role ?? 'user'
    if (role !== 'user' && role !== 'model') {
      dropped.add(`contents[].role=${wireName(role)}`)
      return
    }
    if (role === 'model' && previousRole !== 'model') pairing.modelTurn()
    previousRole = role
    const blocks: Block[] = []
    partsOf(content).forEach((part, position) => {
      const block = isRecord(part) ? readPart(part, role, `${index}_${position}`, pairing, dropped) : undefined
      if (block) blocks.push(block)
      else if (!isRecord(part)) dropped.add('contents[].parts[]')
    })
    addTurn(call.turns, role === 'model' ? 'assistant' : 'user', blocks)
  })
}

/** `position` (content and part) names a call or result that came without an id, uniquely in the request. */
function readPart(
  part: Record<string, unknown>,
  role: 'user' | 'model',
  position: string,
  pairing: CallPairing,
  dropped: Set<string>,
): Block | undefined {
  nameUntranslated(part, PART_FIELDS, PART, dropped)
  const misplaced = misplacedField(part, role)
  if (misplaced) {
    dropped.add(`${PART}${misplaced}`)
    return undefined
  }
  if (part.inlineData !== undefined) return inlineImage(part.inlineData, dropped)
  if (part.fileData !== undefined) return fileImage(part.fileData, dropped)
  if (part.functionResponse !== undefined) return toolResult(part.functionResponse, position, pairing, dropped)
  return spokenPart(part, position, pairing, dropped)
}

/** Calls and thoughts are the model's and results the user's: one on the other side is no turn any format has. */
function misplacedField(part: Record<string, unknown>, role: 'user' | 'model'): string | undefined {
  if (role === 'model') return part.functionResponse === undefined ? undefined : 'functionResponse'
  if (part.functionCall !== undefined) return 'functionCall'
  return part.thought === true ? 'thought' : undefined
}

/** Text, a thought, or a call. */
function spokenPart(part: Record<string, unknown>, position: string, pairing: CallPairing, dropped: Set<string>) {
  const block = modelBlock(part, () => `call_${position}`)
  if (block?.type === 'tool_call' && isRecord(part.functionCall)) {
    nameUntranslated(part.functionCall, FUNCTION_CALL_FIELDS, `${PART}functionCall.`, dropped)
    pairing.called(block)
  } else if (part.functionCall !== undefined) dropped.add(`${PART}functionCall`)
  else if (block?.type !== 'thinking' && isString(part.thoughtSignature)) dropped.add(`${PART}thoughtSignature`)
  return block
}

function inlineImage(blob: unknown, dropped: Set<string>): ImageBlock | undefined {
  if (!isRecord(blob) || !isString(blob.mimeType) || !blob.mimeType.startsWith('image/') || !isString(blob.data)) {
    // Audio, video and PDF parts have no canonical form: other formats' images are images only.
    dropped.add(`${PART}inlineData`)
    return undefined
  }
  nameUntranslated(blob, BLOB_FIELDS, `${PART}inlineData.`, dropped)
  return { type: 'image', source: { kind: 'base64', mediaType: blob.mimeType, data: blob.data } }
}

/**
 * Another provider can fetch an image at a public http(s) URL, but not a file in Google's Files API
 * (which wants Google's key), nor a `gs://` object.
 */
function fileImage(file: unknown, dropped: Set<string>): ImageBlock | undefined {
  const uri = isRecord(file) && isString(file.fileUri) ? file.fileUri : ''
  const url = urlOf(uri)
  const type = isRecord(file) && isString(file.mimeType) ? file.mimeType : imageTypeOfUrl(uri)
  const fetchable =
    (url?.protocol === 'https:' || url?.protocol === 'http:') && url.hostname !== 'generativelanguage.googleapis.com'
  if (!isRecord(file) || !fetchable || !type?.startsWith('image/')) {
    dropped.add(`${PART}fileData`)
    return undefined
  }
  nameUntranslated(file, FILE_FIELDS, `${PART}fileData.`, dropped)
  return { type: 'image', source: { kind: 'url', url: uri } }
}

function toolResult(
  response: unknown,
  position: string,
  pairing: CallPairing,
  dropped: Set<string>,
): ToolResultBlock | undefined {
  if (!isRecord(response) || !isString(response.name)) {
    dropped.add(`${PART}functionResponse`)
    return undefined
  }
  nameUntranslated(response, FUNCTION_RESPONSE_FIELDS, `${PART}functionResponse.`, dropped)
  const id = isString(response.id) && response.id !== '' ? response.id : undefined
  const { text, isError } = resultText(response.response)
  const result: ToolResultBlock = {
    type: 'tool_result',
    // A result that answers no call keeps an id of its own: the provider then says what is wrong.
    callId: pairing.answered(response.name, id) ?? `call_${position}`,
    name: response.name,
    content: text === '' ? [] : [{ type: 'text', text }],
  }
  if (isError) result.isError = true
  result.content.push(...resultImages(response.parts, dropped))
  return result
}

/**
 * Google reads `{output}` as a tool's result and `{error}` as its failure, and any other object as the
 * output as a whole: other formats' results are text, so objects become their JSON.
 */
function resultText(response: unknown): { text: string; isError: boolean } {
  const only = isRecord(response) && Object.keys(response).length === 1 ? Object.keys(response)[0] : undefined
  if (isRecord(response) && only === 'error') return { text: asText(response.error), isError: true }
  if (isRecord(response) && only === 'output') return { text: asText(response.output), isError: false }
  return { text: response === undefined || response === null ? '' : asText(response), isError: false }
}

const asText = (value: unknown): string => (isString(value) ? value : (JSON.stringify(value) ?? ''))

function resultImages(parts: unknown, dropped: Set<string>): ImageBlock[] {
  if (parts === undefined || parts === null) return []
  const images: ImageBlock[] = []
  for (const part of Array.isArray(parts) ? parts : [parts]) {
    const blob = isRecord(part) ? part.inlineData : undefined
    if (isRecord(blob) && isString(blob.mimeType) && blob.mimeType.startsWith('image/') && isString(blob.data))
      images.push({ type: 'image', source: { kind: 'base64', mediaType: blob.mimeType, data: blob.data } })
    else dropped.add(`${PART}functionResponse.parts[]`)
  }
  return images
}

/** Function declarations; Google's own tools (search, code execution, ...) run at Google only, and are named. */
function toolsOf(tools: unknown, dropped: Set<string>): ToolSpec[] {
  if (tools === undefined || tools === null) return []
  if (!Array.isArray(tools)) {
    dropped.add('tools')
    return []
  }
  const specs: ToolSpec[] = []
  for (const tool of tools) {
    if (!isRecord(tool)) {
      dropped.add('tools[]')
      continue
    }
    nameUntranslated(tool, TOOL_FIELDS, 'tools[].', dropped)
    const declarations = tool.functionDeclarations
    if (declarations !== undefined && !Array.isArray(declarations)) dropped.add('tools[].functionDeclarations')
    for (const declaration of Array.isArray(declarations) ? declarations : []) {
      if (!isRecord(declaration) || !isString(declaration.name)) {
        dropped.add('tools[].functionDeclarations[]')
        continue
      }
      nameUntranslated(declaration, DECLARATION_FIELDS, 'tools[].functionDeclarations[].', dropped)
      const schema = isRecord(declaration.parametersJsonSchema)
        ? declaration.parametersJsonSchema
        : isRecord(declaration.parameters)
          ? jsonSchemaOf(declaration.parameters)
          : undefined
      specs.push(toolSpec(declaration.name, schema, declaration.description, undefined))
    }
  }
  return specs
}

/** Keywords whose counts Gemini's OpenAPI-style schema writes as strings (int64 in its JSON). */
const COUNT_KEYWORDS = new Set(['minItems', 'maxItems', 'minLength', 'maxLength', 'minProperties', 'maxProperties'])

/**
 * Gemini's OpenAPI-style schema (`type: "OBJECT"`, `nullable`, counts as strings) as the JSON Schema
 * other providers read. Only what differs changes; the rest is JSON Schema already.
 */
function jsonSchemaOf(schema: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {}
  const nested = (value: unknown): unknown => (isRecord(value) ? jsonSchemaOf(value) : value)
  for (const [keyword, value] of Object.entries(schema)) {
    if (keyword === 'nullable' || keyword === 'propertyOrdering') continue
    if (keyword === 'type' && isString(value)) out.type = value.toLowerCase()
    else if (keyword === 'properties' && isRecord(value))
      out.properties = Object.fromEntries(Object.entries(value).map(([name, property]) => [name, nested(property)]))
    else if (keyword === 'items') out.items = nested(value)
    else if (keyword === 'anyOf' && Array.isArray(value)) out.anyOf = value.map(nested)
    else if (COUNT_KEYWORDS.has(keyword) && isString(value) && /^\d+$/.test(value)) out[keyword] = Number(value)
    else out[keyword] = value
  }
  if (schema.nullable === true && isString(out.type)) out.type = [out.type, 'null']
  return out
}

function readGenerationConfig(call: ChatCall, generationConfig: unknown, dropped: Set<string>): void {
  const config = section(generationConfig, 'generationConfig', GENERATION_FIELDS, dropped)
  if (!config) return
  // One candidate is what every provider gives; more, no other format can ask for.
  const candidates = config.candidateCount
  if (candidates !== undefined && candidates !== null && candidates !== 1) dropped.add('generationConfig.candidateCount')
  for (const [setting, field] of NUMBER_SETTINGS) {
    const value = config[field]
    const number = finiteNumber(value)
    if (number !== undefined) call[setting] = number
    else if (value !== undefined && value !== null) dropped.add(`generationConfig.${field}`)
  }
  const stop = config.stopSequences
  if (Array.isArray(stop) && stop.every(isString)) {
    if (stop.length > 0) call.stop = stop
  } else if (stop !== undefined && stop !== null) dropped.add('generationConfig.stopSequences')
  readResponseFormat(call, config, dropped)
  readThinking(call, config.thinkingConfig, dropped)
}

/** JSON is asked for by its type; a schema says what the JSON must be, and means nothing without it. */
function readResponseFormat(call: ChatCall, config: Record<string, unknown>, dropped: Set<string>): void {
  const type = config.responseMimeType
  const schema = isRecord(config.responseJsonSchema)
    ? config.responseJsonSchema
    : isRecord(config.responseSchema)
      ? jsonSchemaOf(config.responseSchema)
      : undefined
  if (type === 'application/json') {
    call.responseFormat = schema ? { type: 'json_schema', schema } : { type: 'json' }
    return
  }
  if (type !== undefined && type !== null && type !== 'text/plain') dropped.add('generationConfig.responseMimeType')
  for (const field of ['responseJsonSchema', 'responseSchema'])
    if (config[field] !== undefined && config[field] !== null) dropped.add(`generationConfig.${field}`)
}

/**
 * An object nested in the body at `path`, with the fields the translation does not carry named; a
 * value that is no object is named whole.
 */
function section(value: unknown, path: string, fields: ReadonlySet<string>, dropped: Set<string>) {
  if (value === undefined || value === null) return undefined
  if (!isRecord(value)) {
    dropped.add(path)
    return undefined
  }
  nameUntranslated(value, fields, `${path}.`, dropped)
  return value
}

/** A budget of -1 lets the model decide whether to think, which no other format can say. */
function readThinking(call: ChatCall, thinkingConfig: unknown, dropped: Set<string>): void {
  const thinking = section(thinkingConfig, 'generationConfig.thinkingConfig', THINKING_FIELDS, dropped)
  const budget = finiteNumber(thinking?.thinkingBudget)
  if (budget !== undefined && budget >= 0) call.thinkingBudget = budget
  else if (thinking?.thinkingBudget !== undefined && thinking.thinkingBudget !== null)
    dropped.add('generationConfig.thinkingConfig.thinkingBudget')
}

/** Without tools, a choice has nothing to choose from: `AUTO` and `NONE` then change nothing, anything else is named. */
function readToolChoice(call: ChatCall, toolConfig: unknown, dropped: Set<string>): void {
  const calling = section(
    section(toolConfig, 'toolConfig', TOOL_CONFIG_FIELDS, dropped)?.functionCallingConfig,
    'toolConfig.functionCallingConfig',
    CALLING_CONFIG_FIELDS,
    dropped,
  )
  const choice = calling ? toolChoiceOf(calling, dropped) : undefined
  if (!choice) return
  if (call.tools.length > 0) call.toolChoice = choice
  else if (choice.type !== 'auto' && choice.type !== 'none') dropped.add('toolConfig.functionCallingConfig')
}

/**
 * `ANY` with one allowed name is a choice of that tool; with several it is any tool, which is as close
 * as other formats come. `VALIDATED` (calls held to their schemas) is `AUTO` without that promise.
 */
function toolChoiceOf(config: Record<string, unknown>, dropped: Set<string>): ToolChoice | undefined {
  const names = Array.isArray(config.allowedFunctionNames) ? config.allowedFunctionNames.filter(isString) : []
  const mode = config.mode ?? 'AUTO'
  if (mode === 'AUTO' || mode === 'MODE_UNSPECIFIED') return { type: 'auto' }
  if (mode === 'NONE') return { type: 'none' }
  if (mode === 'ANY') {
    const [only, ...more] = names
    if (only !== undefined && more.length === 0) return { type: 'tool', name: only }
    if (more.length > 0) dropped.add('toolConfig.functionCallingConfig.allowedFunctionNames')
    return { type: 'any' }
  }
  dropped.add(`toolConfig.functionCallingConfig.mode=${wireName(mode)}`)
  return mode === 'VALIDATED' ? { type: 'auto' } : undefined
}

// ---------------------------------------------------------------------------------------------
// The request, as a provider is sent it

function writeRequest(call: ChatCall): WrittenRequest {
  const dropped = new Set<string>()
  const request: GeminiGenerateContentRequest = { contents: contentsOf(call, dropped) }
  if (call.system.length > 0) request.systemInstruction = { parts: call.system.map((block) => ({ text: block.text })) }
  if (call.tools.length > 0) {
    request.tools = [{ functionDeclarations: call.tools.map((tool) => functionDeclaration(call, tool, dropped)) }]
    if (call.toolChoice) request.toolConfig = { functionCallingConfig: callingConfigOf(call.toolChoice) }
  }
  const config = generationConfigOf(call)
  if (Object.keys(config).length > 0) request.generationConfig = config
  // Gemini knows no end user, and cannot be held to one call per answer.
  for (const setting of ['user', 'parallelToolCalls'] as const)
    if (call[setting] !== undefined) dropped.add(settingName(call, setting))
  return { request, dropped: [...dropped], maxTokens: call.maxTokens }
}

/** The JSON Schema goes as written (`parametersJsonSchema`), not converted to Gemini's OpenAPI subset. */
function functionDeclaration(call: ChatCall, tool: ToolSpec, dropped: Set<string>): GeminiFunctionDeclaration {
  if (tool.strict) dropped.add(settingName(call, 'toolStrict'))
  const declaration: GeminiFunctionDeclaration = { name: tool.name }
  if (tool.description !== undefined) declaration.description = tool.description
  declaration.parametersJsonSchema = tool.parameters
  return declaration
}

const MODE_OF_CHOICE: Record<'auto' | 'none' | 'any', GeminiFunctionCallingMode> = { auto: 'AUTO', none: 'NONE', any: 'ANY' }

const callingConfigOf = (choice: ToolChoice) =>
  choice.type === 'tool' ? { mode: 'ANY' as const, allowedFunctionNames: [choice.name] } : { mode: MODE_OF_CHOICE[choice.type] }

function generationConfigOf(call: ChatCall): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {}
  for (const [setting, field] of NUMBER_SETTINGS) {
    const value = call[setting]
    if (value !== undefined) config[field] = value
  }
  if (call.stop) config.stopSequences = call.stop
  if (call.responseFormat) {
    config.responseMimeType = 'application/json'
    if (call.responseFormat.type === 'json_schema') config.responseJsonSchema = call.responseFormat.schema
  }
  // Callers that ask for thinking (Anthropic's) get it back; Gemini returns its summaries only when asked.
  if (call.thinkingBudget !== undefined)
    config.thinkingConfig =
      call.thinkingBudget > 0 ? { thinkingBudget: call.thinkingBudget, includeThoughts: true } : { thinkingBudget: 0 }
  return config
}

/** Turns with nothing Gemini can take are left out: it refuses a content without parts. */
function contentsOf(call: ChatCall, dropped: Set<string>): GeminiContent[] {
  /** Each call id -> its tool's name, from the latest call with that id. */
  const toolNames = new Map<string, string>()
  const contents: GeminiContent[] = []
  for (const turn of call.turns) {
    const parts = turn.content.flatMap((block) => requestParts(call, block, toolNames, dropped))
    if (parts.length > 0) contents.push({ role: turn.role === 'assistant' ? 'model' : 'user', parts })
  }
  return contents
}

/**
 * Thinking that reaches Gemini through another format was written by another provider, or by Gemini
 * and carried back by a caller whose format cannot say so (Gemini's own callers pass through
 * untouched). Its signature cannot be told from a foreign one, which Gemini refuses; a summary without
 * one is no reasoning Gemini can use, and Gemini checks signatures only on calls: it is named, not sent.
 */
function requestParts(call: ChatCall, block: Block, toolNames: Map<string, string>, dropped: Set<string>): GeminiPart[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ text: block.text }]
    case 'image': {
      const part = imagePart(block)
      if (!part) dropped.add(settingName(call, 'image'))
      return part ? [part] : []
    }
    case 'tool_call':
      toolNames.set(block.id, block.name)
      return [functionCallPart(block)]
    case 'tool_result':
      return [functionResponsePart(call, block, toolNames.get(block.callId) ?? block.name ?? '', dropped)]
    case 'thinking':
      dropped.add(settingName(call, 'thinking'))
      return []
    case 'redacted_thinking':
      dropped.add(settingName(call, 'redactedThinking'))
      return []
    default:
      return []
  }
}

/** Gemini fetches an image by URL only when told its type, which is guessed from the URL's extension. */
function imagePart(image: ImageBlock): GeminiPart | undefined {
  if (image.source.kind === 'base64') return { inlineData: { mimeType: image.source.mediaType, data: image.source.data } }
  const mimeType = imageTypeOfUrl(image.source.url)
  return mimeType ? { fileData: { mimeType, fileUri: image.source.url } } : undefined
}

/** The call's signature, its own or the one its id carried, goes back on its part, where Gemini 3 checks for it. */
function functionCallPart(block: ToolCallBlock): GeminiPart {
  const { id, signature = block.signature } = splitCarried(block.id)
  const part: GeminiPart = { functionCall: { name: block.name, args: block.arguments, ...idForGemini(id) } }
  if (signature !== undefined) part.thoughtSignature = signature
  return part
}

/**
 * Gemini pairs a result with its call by the tool's name, which it wants on the result: it is the
 * name of the call with the result's id earlier in the conversation (OpenAI's results do not say
 * it). A result that answers no call there keeps its own name, or none, and Gemini refuses it as the
 * other providers refuse such a result; gw does not guess. The text goes in `output`, or in `error`
 * when the tool failed, as Google documents. Images in results reach only Gemini 3 (in `parts`), and
 * the model's generation is not known here, so they are named.
 */
function functionResponsePart(call: ChatCall, block: ToolResultBlock, name: string, dropped: Set<string>): GeminiPart {
  const texts = block.content.filter((part): part is TextBlock => part.type === 'text')
  if (texts.length < block.content.length) dropped.add(settingName(call, 'toolResultImage'))
  const text = texts.map((part) => part.text).join('\n')
  return {
    functionResponse: {
      name,
      response: block.isError ? { error: text } : { output: text },
      ...idForGemini(splitCarried(block.callId).id),
    },
  }
}

// ---------------------------------------------------------------------------------------------
// The answer

const STOP_OF_FINISH: Record<GeminiFinishReason, StopReason> = {
  FINISH_REASON_UNSPECIFIED: 'end',
  STOP: 'end',
  OTHER: 'end',
  MAX_TOKENS: 'length',
  SAFETY: 'content_filter',
  RECITATION: 'content_filter',
  LANGUAGE: 'content_filter',
  BLOCKLIST: 'content_filter',
  PROHIBITED_CONTENT: 'content_filter',
  SPII: 'content_filter',
  IMAGE_SAFETY: 'content_filter',
  IMAGE_PROHIBITED_CONTENT: 'content_filter',
  IMAGE_RECITATION: 'content_filter',
  IMAGE_OTHER: 'end',
  NO_IMAGE: 'end',
  // The model failed at function calling; no other format has a word for that, so the turn just ended.
  MALFORMED_FUNCTION_CALL: 'end',
  UNEXPECTED_TOOL_CALL: 'end',
  TOO_MANY_TOOL_CALLS: 'end',
  MISSING_THOUGHT_SIGNATURE: 'end',
}

const FINISH_OF_STOP: Record<StopReason, GeminiFinishReason> = {
  end: 'STOP',
  stop_sequence: 'STOP',
  pause: 'STOP',
  // Gemini's calls are in the parts; its finish reason stays STOP.
  tool_calls: 'STOP',
  length: 'MAX_TOKENS',
  content_filter: 'SAFETY',
  refusal: 'SAFETY',
}

/**
 * Gemini finishes a turn of function calls with STOP; callers of other formats run their tools only
 * when the answer says it called them, so calls decide it. An unknown reason (the enum keeps growing)
 * is a plain end; a prompt blocked before any answer is filtered content.
 */
function stopOf(response: Record<string, unknown>, candidate: unknown, calledTools: boolean): StopReason | undefined {
  const finishReason = isRecord(candidate) ? candidate.finishReason : undefined
  if (finishReason === undefined || finishReason === null)
    return !candidate && isRecord(response.promptFeedback) && isString(response.promptFeedback.blockReason)
      ? 'content_filter'
      : undefined
  const reason = lookup(STOP_OF_FINISH, finishReason) ?? 'end'
  return calledTools && reason === 'end' ? 'tool_calls' : reason
}

const COUNT_FIELDS = [
  'promptTokenCount',
  'candidatesTokenCount',
  'thoughtsTokenCount',
  'cachedContentTokenCount',
  'toolUsePromptTokenCount',
] as const

/**
 * `promptTokenCount` counts the cached tokens too, as the canonical prompt count does; the results of
 * Google's own tools fed back to the model are billed as input. Gemini counts thinking apart from the
 * answer, where every other format counts it as output. Undefined when there are no counts (Vertex's
 * stream chunks carry only the traffic type until the last).
 */
export function usageOfGemini(usage: unknown): Usage | undefined {
  if (!isRecord(usage) || !COUNT_FIELDS.some((field) => finiteNumber(usage[field]) !== undefined)) return undefined
  const count = (field: (typeof COUNT_FIELDS)[number]): number => asTokenCount(usage[field])
  return {
    promptTokens: count('promptTokenCount') + count('toolUsePromptTokenCount'),
    completionTokens: count('candidatesTokenCount') + count('thoughtsTokenCount'),
    cacheReadTokens: count('cachedContentTokenCount'),
    cacheWriteTokens: 0,
  }
}

/** Gemini leaves out the counts that are zero; the thinking is not told apart from the answer here. */
function geminiUsage(usage: Usage): GeminiUsageMetadata {
  return {
    promptTokenCount: usage.promptTokens,
    candidatesTokenCount: usage.completionTokens,
    totalTokenCount: usage.promptTokens + usage.completionTokens,
    ...(usage.cacheReadTokens > 0 ? { cachedContentTokenCount: usage.cacheReadTokens } : {}),
  }
}

/** Only the first candidate is read: the other formats have one answer. */
function readAnswer(body: unknown): Answer {
  const response = isRecord(body) ? body : {}
  const id = isString(response.responseId) ? response.responseId : ''
  const candidate = firstCandidate(response)
  const content: Block[] = []
  let calls = 0
  for (const part of partsOf(candidate?.content)) {
    const block = answered(isRecord(part) ? modelBlock(part, () => madeUpCallId(id, calls)) : undefined)
    if (block?.type === 'tool_call') calls++
    if (block) content.push(block)
  }
  return {
    id,
    model: isString(response.modelVersion) ? response.modelVersion : '',
    content,
    stop: stopOf(response, candidate, calls > 0),
    usage: usageOfGemini(response.usageMetadata),
  }
}

/**
 * A call keeps its id, which a Gemini caller sends back on its result. The signatures on thinking that
 * reaches a Gemini caller are another provider's (Gemini's own answers pass through untouched), which
 * Gemini would refuse if the caller ever sent them there, so the thinking goes without them.
 */
function answerPart(block: Block, dropped: Set<string>): GeminiPart[] {
  switch (block.type) {
    case 'text':
      return block.text === '' ? [] : [{ text: block.text }]
    case 'thinking':
      return block.text === '' ? [] : [{ text: block.text, thought: true }]
    case 'tool_call':
      return [
        {
          functionCall: { name: block.name, args: block.arguments, id: block.id },
          ...(block.signature === undefined ? {} : { thoughtSignature: block.signature }),
        },
      ]
    case 'redacted_thinking':
      dropped.add('redacted_thinking')
      return []
    default:
      return []
  }
}

function response(
  answer: { id: string; model: string },
  parts: GeminiPart[],
  end?: { stop: StopReason | undefined; usage: Usage | undefined },
): GeminiGenerateContentResponse {
  const candidate: GeminiCandidate = { content: { role: 'model', parts }, index: 0 }
  if (end) candidate.finishReason = end.stop ? FINISH_OF_STOP[end.stop] : 'STOP'
  return {
    candidates: [candidate],
    ...(end?.usage ? { usageMetadata: geminiUsage(end.usage) } : {}),
    modelVersion: answer.model,
    responseId: answer.id,
  }
}

function writeAnswer(answer: Answer): { body: GeminiGenerateContentResponse; dropped: string[] } {
  const dropped = new Set<string>()
  const parts = answer.content.flatMap((block) => answerPart(block, dropped))
  return { body: response(answer, parts, answer), dropped: [...dropped] }
}

// ---------------------------------------------------------------------------------------------
// The stream

/**
 * Each event is a whole response holding only the new parts. Calls arrive whole, so each is one
 * tool_call delta with all its arguments; usage is cumulative (Vertex's is complete only at the end).
 * Gemini sends no last event: the stream just ends after the chunk with the finish reason, so that
 * chunk ends the answer. A chunk carrying `error` yields nothing: the relay reports the failure.
 */
function streamReader(): StreamReader {
  let started = false
  let id = ''
  let calls = 0
  return {
    push(event) {
      const chunk = eventPayload(event)
      if (!isRecord(chunk) || chunk.error !== undefined) return []
      const out: Delta[] = []
      if (!started) {
        started = true
        id = isString(chunk.responseId) ? chunk.responseId : ''
        out.push({ type: 'start', id, model: isString(chunk.modelVersion) ? chunk.modelVersion : '' })
      }
      const candidate = firstCandidate(chunk)
      for (const part of partsOf(candidate?.content)) {
        const block = answered(isRecord(part) ? modelBlock(part, () => madeUpCallId(id, calls)) : undefined)
        if (block?.type === 'tool_call') out.push(toolCallDelta(block, calls++))
        else if (block) out.push(...contentDeltas(block))
      }
      const usage = usageOfGemini(chunk.usageMetadata)
      if (usage) out.push({ type: 'usage', usage })
      const reason = stopOf(chunk, candidate, calls > 0)
      if (reason !== undefined) out.push({ type: 'stop', reason }, { type: 'end' })
      return out
    },
  }
}

const toolCallDelta = (block: ToolCallBlock, call: number): Delta => ({
  type: 'tool_call',
  call,
  id: block.id,
  name: block.name,
  arguments: JSON.stringify(block.arguments),
  ...(block.signature === undefined ? {} : { signature: block.signature }),
})

function contentDeltas(block: Block): Delta[] {
  if (block.type === 'text') return [{ type: 'text', text: block.text }]
  if (block.type !== 'thinking') return []
  const out: Delta[] = block.text === '' ? [] : [{ type: 'thinking', text: block.text }]
  if (block.signature !== undefined) out.push({ type: 'thinking_signature', signature: block.signature })
  return out
}

interface OpenCall {
  call: number
  id: string
  name: string
  arguments: string
  signature?: string
}

/**
 * Deltas as Gemini's chunks, `data:` lines only (Google's SDK drops any event with an `event:` line):
 * text and thinking as they come, each call whole once its arguments are (when the next call or other
 * content starts, or at the end), and the finish reason with the usage on the last chunk, which waits
 * for the provider's end because usage may come after the stop reason. Google's SDK keeps a streamed
 * turn in a chat's history only when every chunk has a part, so a last chunk with nothing else to
 * carry has an empty text part, as Gemini's own last chunks often do.
 */
function streamWriter(): StreamWriter {
  const answer = { id: '', model: '' }
  let open: OpenCall | undefined
  let usage: Usage | undefined
  let stop: StopReason | undefined
  let stopped = false
  let done = false
  const dropped = new Set<string>()

  const chunk = (parts: GeminiPart[], end?: Parameters<typeof response>[2]): SseEvent => ({
    data: JSON.stringify(response(answer, parts, end)),
  })
  const closeCall = (): GeminiPart[] => {
    if (!open) return []
    const text = open.arguments.trim()
    const args = text === '' ? {} : parseArguments(text)
    if (!args) dropped.add('functionCall.args')
    const part = answerPart(
      { type: 'tool_call', id: open.id, name: open.name, arguments: args ?? {}, signature: open.signature },
      dropped,
    )
    open = undefined
    return part
  }
  const send = (parts: GeminiPart[]): SseEvent[] => (parts.length > 0 ? [chunk(parts)] : [])
  const end = (): SseEvent[] => {
    done = true
    const parts = closeCall()
    return [chunk(parts.length > 0 ? parts : [{ text: '' }], { stop, usage })]
  }

  return {
    push(change) {
      if (done) return []
      switch (change.type) {
        case 'start':
          answer.id = change.id
          answer.model = change.model
          usage = change.usage ?? usage
          return []
        case 'text':
        case 'thinking':
          return change.text === ''
            ? []
            : send([...closeCall(), ...answerPart({ type: change.type, text: change.text }, dropped)])
        case 'redacted_thinking':
          dropped.add('redacted_thinking')
          return []
        case 'tool_call': {
          const out = send(closeCall())
          open = { call: change.call, id: change.id, name: change.name, arguments: change.arguments }
          if (change.signature !== undefined) open.signature = change.signature
          return out
        }
        case 'tool_arguments':
          // A piece of a call already sent cannot be added to it: Gemini's calls are whole.
          if (open?.call === change.call) open.arguments += change.fragment
          else if (change.fragment !== '') dropped.add('functionCall.args')
          return []
        case 'usage':
          usage = change.usage
          return []
        case 'stop':
          stop = change.reason
          stopped = true
          return []
        case 'end':
          return end()
        default:
          // A thinking signature is another provider's here (see answerPart).
          return []
      }
    },
    // Everything is sent at the end; without it, only a stop reason already seen justifies one.
    finish: () => (done || !stopped ? [] : end()),
    dropped: () => [...dropped],
  }
}

export const gemini: CallerFormat & ProviderFormat = {
  readRequest,
  writeRequest,
  readAnswer,
  writeAnswer,
  streamReader,
  streamWriter,
}
