/**
 * `size` bytes from the runtime's cryptographically secure generator (Web Crypto's, which needs no
 * module: node:crypto's `randomBytes` costs every start the module's evaluation), as a Buffer for its
 * encodings. At most 65,536 bytes, Web Crypto's limit for one draw.
 */
export function randomBytes(size: number): Buffer {
  const bytes = crypto.getRandomValues(new Uint8Array(size))
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
}
