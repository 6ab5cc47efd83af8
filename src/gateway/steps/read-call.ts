import { ApiError, badRequest } from '../../errors'
import { asRecord, parseJson } from '../providers/provider'

/** The fields of a call's body that gw itself reads; the rest is the provider's business. */
export interface CallFields {
  model: string
  stream: boolean
  /** The most output tokens the caller allows (`max_tokens` and its newer names), for the cost estimate. */
  maxOutputTokens?: number
}

/** Model ids are short (the longest Hugging Face paths run to about 100 characters). */
export const MODEL_MAX_LENGTH = 256
/** C0 and C1 control characters, DEL included: no model is named with them, and no store or header holds all of them. */
function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  }
  return false
}
const OUTPUT_TOKEN_FIELDS = ['max_tokens', 'max_completion_tokens', 'max_output_tokens'] as const

/** A wrong field is the caller's mistake, named: OpenAI's error object carries the field as `param`. */
const invalidField = (field: string, message: string) =>
  new ApiError('bad_request', `"${field}" ${message}`, { details: { param: field } })

/** The value as the caller wrote it, cut short: an error message quotes it, never a megabyte of it. */
export const quoted = (value: unknown): string => {
  const text = JSON.stringify(value) ?? String(value)
  return text.length > 80 ? `${text.slice(0, 80)}...` : text
}

/**
 * Checks and reads the fields gw acts on. A wrong type is a 400 naming the field: `stream: "yes"` was
 * once served as a non-streaming call, and a model name no header or store can hold once stalled the
 * request log. `null` stands for absent, as the providers' own APIs take it.
 */
export function readCallFields(body: Record<string, unknown>): CallFields {
  const { model, stream } = body
  if (typeof model !== 'string' || model.length === 0)
    throw invalidField('model', `is required and must be a non-empty string; got ${quoted(model)}`)
  if (model.length > MODEL_MAX_LENGTH)
    throw invalidField('model', `is longer than ${MODEL_MAX_LENGTH} characters: ${quoted(model)}`)
  if (hasControlCharacter(model)) throw invalidField('model', `contains control characters: ${quoted(model)}`)
  if (!model.isWellFormed()) throw invalidField('model', `holds an unpaired surrogate, so it is no text: ${quoted(model)}`)
  if (stream !== undefined && stream !== null && typeof stream !== 'boolean')
    throw invalidField('stream', `must be true or false; got ${quoted(stream)}`)
  let maxOutputTokens: number | undefined
  for (const field of OUTPUT_TOKEN_FIELDS) {
    const value = body[field]
    if (value === undefined || value === null) continue
    if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0)
      throw invalidField(field, `must be a non-negative integer; got ${quoted(value)}`)
    maxOutputTokens ??= value
  }
  return { model, stream: stream === true, maxOutputTokens }
}

export interface ReadCall {
  body: Record<string, unknown>
  /** The body as it goes on: the caller's text (or its text with a default filled in), or a multipart's bytes. */
  payload: string | Uint8Array
  /** A multipart call's form, its content type with the boundary the bytes use. */
  multipart?: { form: Awaited<ReturnType<Response['formData']>>; contentType: string }
  fields: CallFields
}

/**
 * A JSON call's body, which must be an object, and the fields gw reads from it. A path whose model is
 * optional at its provider gets the provider's default, so the call is recorded and priced under it.
 */
export function readJsonCall(bodyText: string, defaultModel?: string): ReadCall {
  const parsed = asRecord(parseJson(bodyText))
  if (!parsed) throw badRequest('the request body must be a JSON object')
  const defaulted = defaultModel !== undefined && (parsed.model === undefined || parsed.model === null)
  const body = defaulted ? { ...parsed, model: defaultModel } : parsed
  return { body, payload: defaulted ? JSON.stringify(body) : bodyText, fields: readCallFields(body) }
}

/**
 * A call in Google's format: the model and whether to stream are in the path
 * (`/v1beta/models/{model}:streamGenerateContent`), the body is the content and its settings, and goes
 * on as it came when the provider speaks the format too.
 */
export function readGeminiCall(bodyText: string, path: string): ReadCall {
  const { model, method } = geminiMethod(path)
  if (method !== 'generateContent' && method !== 'streamGenerateContent')
    throw new ApiError('not_found', `${quoted(path)}: gw serves models/{model}:generateContent and :streamGenerateContent`)
  const body = asRecord(parseJson(bodyText))
  if (!body) throw badRequest('the request body must be a JSON object')
  const fields = readCallFields({ model, stream: method === 'streamGenerateContent' })
  const max = asRecord(body.generationConfig)?.maxOutputTokens
  if (max === undefined || max === null) return { body, payload: bodyText, fields }
  if (typeof max !== 'number' || !Number.isSafeInteger(max) || max < 0)
    throw invalidField('generationConfig.maxOutputTokens', `must be a non-negative integer; got ${quoted(max)}`)
  return { body, payload: bodyText, fields: { ...fields, maxOutputTokens: max } }
}

/**
 * The model and the method of a path in Google's form, `/v1beta/models/{model}:{method}`: the model may
 * hold slashes (a provider named before it), the method follows its last colon, and either may come
 * percent-encoded.
 */
function geminiMethod(path: string): { model: string; method: string } {
  const rest = /^\/(?:v1|v1beta)\/models\/(.+)$/.exec(path)?.[1] ?? ''
  let decoded: string
  try {
    decoded = decodeURIComponent(rest)
  } catch {
    throw invalidField('model', `is not a well-encoded path segment: ${quoted(rest)}`)
  }
  const colon = decoded.lastIndexOf(':')
  return colon <= 0 ? { model: decoded, method: '' } : { model: decoded.slice(0, colon), method: decoded.slice(colon + 1) }
}

/**
 * A multipart call (an audio upload): its `model` field is read from the form; the bytes go on to the
 * provider exactly as they came, boundary and all, and are never taken for JSON.
 */
export async function readMultipartCall(bytes: Uint8Array, contentType: string | null): Promise<ReadCall> {
  if (!contentType?.toLowerCase().startsWith('multipart/form-data'))
    throw badRequest('this path takes a multipart/form-data body (a file and its fields)')
  const form = await new Response(bytes, { headers: { 'content-type': contentType } }).formData().catch(() => {
    throw badRequest('the multipart/form-data body could not be read')
  })
  const model = form.get('model')
  return {
    body: {},
    payload: bytes,
    multipart: { form, contentType },
    fields: readCallFields({ model: typeof model === 'string' ? model : undefined }),
  }
}
