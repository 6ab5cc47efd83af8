/** Password hashing, argon2id through Bun's built-in implementation (the only Bun API in auth/). */
export const hashPassword = (password: string): Promise<string> => Bun.password.hash(password, { algorithm: 'argon2id' })

// Verified against when the email is unknown, so a wrong email costs as long as a wrong password.
const DECOY_HASH = await hashPassword('decoy password that matches nothing')

export const verifyPassword = (password: string, hash: string | null): Promise<boolean> =>
  hash === null ? Bun.password.verify(password, DECOY_HASH).then(() => false) : Bun.password.verify(password, hash)

export const MIN_PASSWORD_LENGTH = 12
