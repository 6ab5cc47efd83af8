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
  // Bun's own SHA-256 answers text without the general hasher's lookup of the algorithm by name.
  return encoding ? Bun.SHA256.hash(data, encoding) : Bun.CryptoHasher.hash('sha256', data)
}

export function hmacSha256(key: Input, data: Input): Buffer
export function hmacSha256(key: Input, data: Input, encoding: Bun.DigestEncoding): string
export function hmacSha256(key: Input, data: Input, encoding?: Bun.DigestEncoding): Buffer | string {
  const hasher = new Bun.CryptoHasher('sha256', key).update(data)
  return encoding ? hasher.digest(encoding) : hasher.digest()
}

/**
 * HMAC-SHA256 under one key for many messages (a signing key used all day): the key's inner and outer
 * states are made once, and each message's hasher starts from a copy of them.
 */
export function hmacSha256Keyed(key: Input): (data: Input) => string {
  const keyed = new Bun.CryptoHasher('sha256', key)
  return (data) => keyed.copy().update(data).digest('hex')
}

/** CRC-32 (IEEE, zlib's), as AWS's event streams check their frames with. */
export const crc32 = (data: Uint8Array): number => Bun.hash.crc32(data)

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
