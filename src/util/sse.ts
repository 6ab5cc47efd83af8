/**
 * Server-sent events as providers stream them: parsed incrementally from bytes as they arrive (never
 * a whole stream buffered), and written back out frame by frame.
 */
export interface SseEvent {
  /** The `event:` field; absent for OpenAI-style streams, which send data only. */
  event?: string
  /** The `data:` lines joined with "\n" (usually one JSON document, or OpenAI's `[DONE]`). */
  data: string
}

const encoder = new TextEncoder()

export function encodeSse(event: SseEvent): Uint8Array {
  const head = event.event === undefined ? '' : `event: ${event.event}\n`
  const body = event.data
    .split('\n')
    .map((line) => `data: ${line}\n`)
    .join('')
  return encoder.encode(`${head}${body}\n`)
}

/** Feed it bytes; it returns the events completed by them. Comments and `id:`/`retry:` lines are ignored. */
export class SseParser {
  private readonly decoder = new TextDecoder()
  private buffer = ''
  private event: string | undefined
  private data: string[] = []

  push(chunk: Uint8Array): SseEvent[] {
    this.buffer += this.decoder.decode(chunk, { stream: true })
    return this.drain()
  }

  /** The events left when the stream ends without a final blank line. */
  end(): SseEvent[] {
    this.buffer += this.decoder.decode()
    const events = this.drain()
    if (this.buffer.length > 0) this.line(this.buffer)
    this.buffer = ''
    const last = this.dispatch()
    return last ? [...events, last] : events
  }

  private drain(): SseEvent[] {
    const events: SseEvent[] = []
    let newline = this.buffer.search(/\r\n|\r|\n/)
    while (newline !== -1) {
      const line = this.buffer.slice(0, newline)
      const width = this.buffer.startsWith('\r\n', newline) ? 2 : 1
      // A lone "\r" at the end of the buffer may be the first half of "\r\n": wait for the next chunk.
      if (this.buffer[newline] === '\r' && newline + 1 === this.buffer.length) break
      this.buffer = this.buffer.slice(newline + width)
      if (line === '') {
        const event = this.dispatch()
        if (event) events.push(event)
      } else {
        this.line(line)
      }
      newline = this.buffer.search(/\r\n|\r|\n/)
    }
    return events
  }

  private line(line: string): void {
    if (line.startsWith(':')) return
    const colon = line.indexOf(':')
    const field = colon === -1 ? line : line.slice(0, colon)
    let value = colon === -1 ? '' : line.slice(colon + 1)
    if (value.startsWith(' ')) value = value.slice(1)
    if (field === 'event') this.event = value
    else if (field === 'data') this.data.push(value)
  }

  private dispatch(): SseEvent | undefined {
    const event =
      this.data.length > 0
        ? { ...(this.event === undefined ? {} : { event: this.event }), data: this.data.join('\n') }
        : undefined
    this.event = undefined
    this.data = []
    return event
  }
}
