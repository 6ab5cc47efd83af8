/** Each side of a call is kept up to this many bytes in the request log; the rest is cut and flagged. */
export const BODY_CAPTURE_BYTES = 64 * 1024

/**
 * Keeps a body, never more than the bound: a whole text as it is (the common case, no copy), or the
 * chunks of a stream as they pass.
 */
export class BodyCapture {
  private whole: string | undefined
  private readonly chunks: Uint8Array[] = []
  private size = 0
  truncated = false

  constructor(private readonly limit = BODY_CAPTURE_BYTES) {}

  /** About the memory held, for the request log's budget (a text's length stands for its bytes). */
  get bytes(): number {
    return this.size
  }

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

  /**
   * Sets the whole body at once: kept as text when it surely fits (3 bytes a character at most).
   * Otherwise only the head that can be kept is encoded: a character is a byte at least, so `limit`
   * characters hold at least `limit` bytes, and a 20 MB prompt is not copied whole to keep 64 KB.
   */
  set(text: string): void {
    if (this.size === 0 && text.length * 3 <= this.limit) {
      this.whole = text
      this.size += text.length
      return
    }
    const head = text.length > this.limit ? text.slice(0, this.limit) : text
    if (head.length < text.length) this.truncated = true
    this.append(new TextEncoder().encode(head))
  }

  text(): string {
    if (this.whole !== undefined) return this.whole
    // A cut may fall inside a multi-byte character; the decoder replaces the broken tail.
    return new TextDecoder().decode(Buffer.concat(this.chunks))
  }

  static of(text: string, limit = BODY_CAPTURE_BYTES): BodyCapture {
    const capture = new BodyCapture(limit)
    capture.set(text)
    return capture
  }
}
