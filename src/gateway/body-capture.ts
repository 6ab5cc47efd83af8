/** Each side of a call is kept up to this many bytes in the request log; the rest is cut and flagged. */
export const BODY_CAPTURE_BYTES = 64 * 1024

/** Collects the bytes of a body as it streams past, never more than the bound. */
export class BodyCapture {
  private readonly chunks: Uint8Array[] = []
  private size = 0
  truncated = false

  /** The bytes kept (the queue of the request log budgets memory by them). */
  get bytes(): number {
    return this.size
  }

  constructor(private readonly limit = BODY_CAPTURE_BYTES) {}

  append(chunk: Uint8Array): void {
    const room = this.limit - this.size
    if (room <= 0) {
      this.truncated ||= chunk.length > 0
      return
    }
    const kept = chunk.length > room ? chunk.subarray(0, room) : chunk
    if (kept.length < chunk.length) this.truncated = true
    this.chunks.push(kept)
    this.size += kept.length
  }

  text(): string {
    // A cut may fall inside a multi-byte character; the decoder replaces the broken tail.
    return new TextDecoder().decode(Buffer.concat(this.chunks))
  }

  static of(text: string, limit = BODY_CAPTURE_BYTES): BodyCapture {
    const capture = new BodyCapture(limit)
    capture.append(new TextEncoder().encode(text))
    return capture
  }
}

/** What an organisation wants done with stored bodies (its settings decide; the gateway applies it). */
export interface BodyPolicy {
  store: boolean
  redact: boolean
}

export interface BodyPolicySource {
  bodyPolicy(orgId: string): Promise<BodyPolicy>
}
