import { sha256 } from '../../../util/digest'
import { asRecord, parseJson } from '../provider'

/** Mistral's rule for a tool call's id: nine letters and digits, which its own calls have. */
const NINE_ALPHANUMERIC = /^[a-zA-Z0-9]{9}$/
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'

/** The same id in, the same nine characters out: a call and the result that answers it stay paired. */
function nineCharacterId(id: string): string {
  if (NINE_ALPHANUMERIC.test(id)) return id
  const digest = sha256(id)
  let out = ''
  for (let i = 0; i < 9; i++) out += ALPHABET[(digest[i] as number) % ALPHABET.length]
  return out
}

/**
 * A conversation for a server that takes only nine-character tool call ids (Mistral refuses any other
 * with a 400): the ids other providers gave (`call_…`, `toolu_…`, a Gemini call's with its signature)
 * are each replaced by one derived from it. Untouched when no id needs it, so a body that needs nothing
 * goes as it came.
 */
export function withNineCharacterToolCallIds(body: string | Uint8Array | undefined): string | undefined {
  const text = typeof body === 'string' ? body : body === undefined ? undefined : new TextDecoder().decode(body)
  if (text === undefined || !text.includes('"tool_call')) return undefined
  const request = asRecord(parseJson(text))
  if (!request || !Array.isArray(request.messages)) return undefined
  let changed = false
  const renamed = (id: unknown) => {
    if (typeof id !== 'string') return id
    const next = nineCharacterId(id)
    changed ||= next !== id
    return next
  }
  const messages = request.messages.map((entry) => {
    const message = asRecord(entry)
    if (!message) return entry
    if (typeof message.tool_call_id === 'string') return { ...message, tool_call_id: renamed(message.tool_call_id) }
    if (!Array.isArray(message.tool_calls)) return entry
    const calls = message.tool_calls.map((call) => {
      const record = asRecord(call)
      return record && typeof record.id === 'string' ? { ...record, id: renamed(record.id) } : call
    })
    return { ...message, tool_calls: calls }
  })
  return changed ? JSON.stringify({ ...request, messages }) : undefined
}
