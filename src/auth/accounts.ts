import { randomUUID } from 'node:crypto'
import type { Repositories } from '../store/store'

/** The user with this email, created (without a password) when there is none yet; `now` is the clock. */
export async function userForEmail(
  repos: Pick<Repositories, 'users'>,
  email: string,
  now: () => number = Date.now,
): Promise<string> {
  const existing = await repos.users.findByEmail(email)
  if (existing) return existing.id
  const id = randomUUID()
  await repos.users.create({ id, email, passwordHash: null, createdAt: new Date(now()) })
  return id
}
