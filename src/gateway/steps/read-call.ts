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
const invalidField = (field: string, message: string) => new ApiError('bad_request', `"${field}" ${message}`, { param: field })

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

/** The call's body, which must be a JSON object, and the fields gw reads from it. */
export function readCall(bodyText: string): { body: Record<string, unknown>; fields: CallFields } {
  const body = asRecord(parseJson(bodyText))
  if (!body) throw badRequest('the request body must be a JSON object')
  return { body, fields: readCallFields(body) }
}
