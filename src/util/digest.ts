/**
 * SHA-256 and HMAC-SHA256, synchronously, from Bun's native hasher. node:crypto would give the same
 * bytes, but evaluating it (with the stream classes its Hash and Hmac are built on) adds about 1.5 ms
 * to every start of the executable, and serving hashes as it goes (a credential's HMAC when it is
 * verified, Bedrock's signatures). Bun-only: one of the few seams the Deno port puts behind `#runtime`.
 */
type Input = string | Uint8Array

export function sha256(data: Input): Buffer
export function sha256(data: Input, encoding: Bun.DigestEncoding): string
export function sha256(data: Input, encoding?: Bun.DigestEncoding): Buffer | string {
  return encoding ? Bun.CryptoHasher.hash('sha256', data, encoding) : Bun.CryptoHasher.hash('sha256', data)
}

export function hmacSha256(key: Input, data: Input): Buffer
export function hmacSha256(key: Input, data: Input, encoding: Bun.DigestEncoding): string
export function hmacSha256(key: Input, data: Input, encoding?: Bun.DigestEncoding): Buffer | string {
  const hasher = new Bun.CryptoHasher('sha256', key).update(data)
  return encoding ? hasher.digest(encoding) : hasher.digest()
}

/**
 * Whether two strings are the same, in a time that depends on their length only (what
 * `timingSafeEqual` gives bytes): for a secret presented against the expected one, where returning at
 * the first difference would tell a caller how much of a guess was right.
 */
export function equalInConstantTime(presented: string, expected: string): boolean {
  if (presented.length !== expected.length) return false
  let difference = 0
  for (let i = 0; i < presented.length; i++) difference |= presented.charCodeAt(i) ^ expected.charCodeAt(i)
  return difference === 0
}
