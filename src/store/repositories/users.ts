import { eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface User {
  id: string
  email: string
  passwordHash: string | null
  createdAt: Date
}

/** Emails are compared case-insensitively; they are stored in the form people type, lower-cased. */
export const normalizeEmail = (email: string): string => email.trim().toLowerCase()

export const usersRepository = ({ orm, tables: { users } }: Database) => ({
  async create(user: User): Promise<void> {
    await orm.insert(users).values({ ...user, email: normalizeEmail(user.email) })
  },
  async get(id: string): Promise<User | undefined> {
    const [row] = await orm.select().from(users).where(eq(users.id, id)).limit(1)
    return row
  },
  async findByEmail(email: string): Promise<User | undefined> {
    const [row] = await orm
      .select()
      .from(users)
      .where(eq(users.email, normalizeEmail(email)))
      .limit(1)
    return row
  },
  async setPasswordHash(id: string, passwordHash: string): Promise<void> {
    await orm.update(users).set({ passwordHash }).where(eq(users.id, id))
  },
})
