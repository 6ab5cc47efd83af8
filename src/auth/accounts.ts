import { badRequest } from '../errors'
import type { Repositories } from '../store/store'
import { emailProblem } from '../util/email'

/**
 * The user with this email, created (without a password) when there is none yet; `now` is the clock.
 * Every person is made here, whichever door they came in by, so no address a browser would refuse at
 * sign-in is ever stored.
 */
export async function userForEmail(
  repos: Pick<Repositories, 'users'>,
  email: string,
  now: () => number = Date.now,
): Promise<string> {
  const problem = emailProblem(email)
  if (problem) throw badRequest(`email: ${problem}`)
  const existing = await repos.users.findByEmail(email)
  if (existing) return existing.id
  const id = crypto.randomUUID()
  await repos.users.create({ id, email, passwordHash: null, createdAt: new Date(now()) })
  return id
}
