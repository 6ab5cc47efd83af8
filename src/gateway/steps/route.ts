import { badRequest } from '../../errors'
import type { ValueOrPromise } from '../../util/value-or-promise'
import { asRecord, type WireFamily } from '../providers/provider'
import type { Translation } from '../translate/pairs'
import type { ReadCall } from './read-call'

/**
 * Where the call goes in the provider's API: its own path when the formats agree, else the format's
 * chat path; only a conversation (chat, messages, generateContent) is translated.
 */
export function upstreamPathFor(
  path: string,
  provider: string,
  family: WireFamily,
  translation: Translation | undefined,
  conversation: boolean,
): string {
  if (!translation) {
    if (!family.paths.includes(path)) {
      throw badRequest(
        `${path} is not served by provider ${provider}; it serves ${family.paths.join(', ') || 'no path as it is'}`,
      )
    }
    return path
  }
  if (!conversation) {
    throw badRequest(
      `${path} cannot be translated for provider ${provider}; only a conversation (/v1/chat/completions, /v1/messages, Gemini's generateContent) can`,
    )
  }
  return family.chatPath
}

/** Formats that carry the model in the body; Gemini's and Bedrock's carry it in the URL. */
const MODEL_IN_BODY: ReadonlySet<string> = new Set(['openai', 'anthropic'])

/** The body the provider is sent, and what making it decided. */
export interface OutgoingBody {
  payload: string | Uint8Array
  /** A multipart body's own content type (its boundary); JSON bodies go as application/json. */
  contentType?: string
  /** What could not be carried over to the provider's format, named for the Gw-Translation-Warning header. */
  translationWarning?: string
  /** Whether the caller itself asked for a usage chunk in its stream (gw may ask for one the caller did not). */
  callerAskedForUsage: boolean
  /** The output bound the provider will hold the call to, for the cost estimate. */
  maxOutputTokens?: number
}

/**
 * The body in the provider's format, with the model as the provider names it and a usage chunk asked
 * for in streams. A body that needs no change is sent as the caller wrote it: serialising a long
 * prompt again would cost time for nothing.
 */
export function outgoingBody(
  call: ReadCall,
  family: WireFamily,
  model: string,
  translation: Translation | undefined,
): ValueOrPromise<OutgoingBody> {
  if (call.multipart) return outgoingMultipart(call.multipart, call, model)
  const { body, fields } = call
  let upstream: Record<string, unknown> = fields.model === model || !MODEL_IN_BODY.has(family.format) ? body : { ...body, model }
  let translationWarning: string | undefined
  // A translation may set the provider's required output bound; the caller's own is checked already.
  let translatedMax: number | undefined
  if (translation) {
    // The provider's format puts the model in the body, or (Gemini, Bedrock) leaves it to the URL.
    const translated = translation.request(upstream, { model, stream: fields.stream })
    upstream = translated.request
    translatedMax = translated.maxTokens
    if (translated.dropped.length > 0) translationWarning = `dropped: ${translated.dropped.join(', ')}`
  }
  const usageRequest = family.requestUsageInStream(upstream)
  upstream = usageRequest.body
  return {
    payload: upstream === body ? call.payload : JSON.stringify(upstream),
    translationWarning,
    // Translated, the caller's own stream_options say whether it wants OpenAI's usage chunk.
    callerAskedForUsage: translation ? asRecord(body.stream_options)?.include_usage === true : usageRequest.callerAskedForUsage,
    maxOutputTokens: fields.maxOutputTokens ?? translatedMax,
  }
}

/**
 * A multipart body goes as it came; only a model the provider names otherwise (`openai/whisper-1`)
 * makes gw write the form again, with a boundary of its own.
 */
async function outgoingMultipart(
  multipart: NonNullable<ReadCall['multipart']>,
  call: ReadCall,
  model: string,
): Promise<OutgoingBody> {
  if (call.fields.model === model)
    return { payload: call.payload, contentType: multipart.contentType, callerAskedForUsage: false }
  multipart.form.set('model', model)
  // The cast is between two declarations of the web FormData (undici's, which formData() is typed with, and the DOM's).
  const rewritten = new Response(multipart.form as unknown as ConstructorParameters<typeof Response>[0])
  // Read before the body: Bun forgets a FormData body's content type (and its boundary) once it is read.
  const contentType = rewritten.headers.get('content-type')
  if (!contentType) throw new Error('a rewritten form has no content type')
  return { payload: new Uint8Array(await rewritten.arrayBuffer()), contentType, callerAskedForUsage: false }
}
