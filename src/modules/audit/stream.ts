/**
 * Text pulled one chunk at a time into a byte stream: the source is asked for its next chunk only
 * when the client has taken the last one, so a slow reader holds back the database reads instead of
 * piling pages up in memory.
 *
 * A failure once the first byte is out can no longer be an error status. It is handed to `onError`
 * (which logs it) and the stream is errored, on which Bun resets the connection instead of sending
 * the last chunk of the chunked encoding: the caller sees a failed download, never a file that ends
 * cleanly but early.
 */
export function textStream(source: AsyncGenerator<string>, onError: (error: unknown) => void): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder()
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        const next = await source.next()
        if (next.done) controller.close()
        else controller.enqueue(encoder.encode(next.value))
      } catch (error) {
        onError(error)
        controller.error(error)
      }
    },
    // The client went away: stop reading pages it will never get.
    async cancel() {
      await source.return(undefined)
    },
  })
}
