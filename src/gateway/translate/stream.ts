import type { SseEvent } from '../../util/sse'

/**
 * Turns one provider's stream into the caller's format, event by event, keeping only the little
 * state the target format needs (open content blocks, tool-call indices, the stop reason so far).
 */
export interface StreamTranslator {
  /** The caller's events for one provider event; often none, sometimes several. */
  push(event: SseEvent): SseEvent[]
  /**
   * What must still go out once the provider's stream has ended cleanly. It never invents a stop:
   * when the provider said nothing about how the answer ended, it returns [].
   */
  finish(): SseEvent[]
  /** What the provider sent that the caller's format cannot carry, named for the translation warning. */
  dropped(): string[]
}

/** The JSON document an event carries, or undefined when it carries none (`[DONE]`, a broken frame). */
export function eventPayload(event: SseEvent): unknown {
  try {
    return JSON.parse(event.data)
  } catch {
    return undefined
  }
}
