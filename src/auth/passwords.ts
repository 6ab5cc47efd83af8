/** Password hashing, argon2id through Bun's built-in implementation (the only Bun API in auth/). */
export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, { algorithm: 'argon2id' })

// Verified against when the email is unknown, so a wrong email costs as long as a wrong password.
// Made on first use: hashing at start-up would cost every CLI call and the cold start an argon2 run.
let decoyHash: Promise<string> | undefined

export async function verifyPassword(password: string, hash: string | null): Promise<boolean> {
  if (hash !== null) return Bun.password.verify(password, hash)
  decoyHash ??= hashPassword('decoy password that matches nothing')
  await Bun.password.verify(password, await decoyHash)
  return false
}

export const MIN_PASSWORD_LENGTH = 12
