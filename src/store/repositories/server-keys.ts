import { eq } from 'drizzle-orm'
import type { Database } from '../database'

export interface ServerKey {
  name: string
  sealed: string
  createdAt: Date
}

interface ServerKeyRow {
  name: string
  sealed: string
  /** Milliseconds in SQLite, a Date from Postgres. */
  created_at: number | Date
}

export const serverKeysRepository = (db: Database) => {
  const {
    orm,
    tables: { serverKeys },
  } = db
  return {
    /**
     * Read at every start, before the server listens: a plain statement, so that the start does not
     * wait for the query builder's first, cold, use (6 ms of a 100-ms start on a slow machine).
     */
    async get(name: string): Promise<ServerKey | undefined> {
      const [row] = await db.query<ServerKeyRow>('SELECT name, sealed, created_at FROM server_keys WHERE name = $1', [name])
      return row && { name: row.name, sealed: row.sealed, createdAt: new Date(row.created_at) }
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
  }
}
