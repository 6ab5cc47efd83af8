import { eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface ServerKey {
  name: string
  sealed: string
  createdAt: Date
}

export const serverKeysRepository = ({ orm, tables: { serverKeys } }: Database) => ({
  async get(name: string): Promise<ServerKey | undefined> {
    const [row] = await orm.select().from(serverKeys).where(eq(serverKeys.name, name)).limit(1)
    return row
  },
  /** Inserts unless another instance was first; either way the stored row is the one to use. */
  async insertIfAbsent(key: ServerKey): Promise<ServerKey> {
    await orm.insert(serverKeys).values(key).onConflictDoNothing()
    return (await this.get(key.name)) ?? key
  },
  async list(): Promise<ServerKey[]> {
    return orm.select().from(serverKeys)
  },
  async reseal(name: string, sealed: string): Promise<void> {
    await orm.update(serverKeys).set({ sealed }).where(eq(serverKeys.name, name))
  },
})
