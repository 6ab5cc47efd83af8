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
    /**
     * Inserts unless another instance was first; either way the stored row is the one to use. A plain
     * statement too: a first start makes its credential key before it listens.
     */
    async insertIfAbsent(key: ServerKey): Promise<ServerKey> {
      // SQLite keeps the time as milliseconds (the schema's `timestamp_ms`); Postgres reads the text as its column's timestamp.
      const createdAt = db.dialect === 'sqlite' ? key.createdAt.getTime() : key.createdAt.toISOString()
      await db.execute('INSERT INTO server_keys (name, sealed, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING', [
        key.name,
        key.sealed,
        createdAt,
      ])
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
