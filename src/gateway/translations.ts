import type { WireFormat } from './providers/provider'
import type { SseEvent } from './sse'

export interface StreamTranslator {
  push(event: SseEvent): SseEvent[]
  finish(): SseEvent[]
}
export interface Translation {
  request(body: Record<string, unknown>): { request: Record<string, unknown>; dropped: string[] }
  response(body: unknown): unknown
  stream(callerAskedForUsage: boolean): StreamTranslator
}
const TRANSLATIONS: Partial<Record<`${WireFormat}->${WireFormat}`, Translation>> = {}
export const translationBetween = (caller: WireFormat, provider: WireFormat): Translation | undefined =>
  caller === provider ? undefined : TRANSLATIONS[`${caller}->${provider}`]
