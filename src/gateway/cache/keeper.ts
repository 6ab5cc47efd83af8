/**
 * Collects what a stream sent its caller, for the response cache, up to a bound: a stream longer than
 * the cache keeps is let go at once (and not kept), never buffered to its end.
 */
export class StreamKeeper {
  private chunks: Uint8Array[] | undefined = []
  private bytes = 0

  constructor(private readonly maxBytes: number) {}

  readonly keep = (chunk: Uint8Array): void => {
    if (!this.chunks) return
    this.bytes += chunk.byteLength
    if (this.bytes > this.maxBytes) this.chunks = undefined
    else this.chunks.push(chunk)
  }

  /** The whole stream as text, or undefined when it outgrew the bound. */
  text(): string | undefined {
    if (!this.chunks) return undefined
    return Buffer.concat(this.chunks).toString('utf8')
  }
}
