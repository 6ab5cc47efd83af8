import { Database as SqliteClient } from 'bun:sqlite'
import { afterEach, beforeEach, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { openDatabase } from '../src/store/database'
import { migrate } from '../src/store/migrate'
import { createStore, type Store } from '../src/store/store'

/**
 * The server shares its SQLite file with the request log's writer thread, whose transactions hold the
 * write lock for up to tens of ms under load. A write of the server's that meets one must wait on a
 * timer, with the event loop free: SQLite's own busy handler would sleep the whole server.
 */
let dir: string
let other: SqliteClient

/** The store as the server opens it, and beside it another connection to the same file. */
async function openStore(lockWaitMs?: number): Promise<{ store: Store; close(): Promise<void> }> {
  const db = await openDatabase({ database: { kind: 'sqlite', path: join(dir, 'gw.db') } }, { lockWaitMs })
  await migrate(db)
  other = new SqliteClient(join(dir, 'gw.db'))
  return { store: createStore(db), close: () => db.close() }
}

const org = (id: string) => ({ id, name: id, tier: 'free' as const, creditBalanceNano: 0, createdAt: new Date() })

/** Holds the write lock from another connection, as the writer thread's transaction does, for `ms`. */
function holdLock(ms: number): Promise<void> {
  other.run('BEGIN IMMEDIATE')
  return new Promise((resolve) =>
    setTimeout(() => {
      other.run('COMMIT')
      resolve()
    }, ms),
  )
}

/** Counts event-loop turns while `work` runs: a blocked loop counts none. */
async function loopTurnsDuring(work: Promise<unknown>): Promise<number> {
  let turns = 0
  const ticker = setInterval(() => {
    turns += 1
  }, 5)
  try {
    await work
  } finally {
    clearInterval(ticker)
  }
  return turns
}

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'gw-locks-'))
})
afterEach(() => {
  other?.close()
  rmSync(dir, { recursive: true, force: true })
})

describe('SQLite writes under another connection’s lock', () => {
  test('a repository write waits for the lock with the event loop free, then lands', async () => {
    const { store, close } = await openStore()
    const released = holdLock(150)
    const started = performance.now()
    const turns = await loopTurnsDuring(store.organizations.create(org('org-a')))
    await released
    expect(performance.now() - started).toBeGreaterThanOrEqual(140)
    expect(turns).toBeGreaterThanOrEqual(10)
    expect((await store.organizations.get('org-a'))?.name).toBe('org-a')
    await close()
  })

  test('a transaction waits for the lock the same way', async () => {
    const { store, close } = await openStore()
    const released = holdLock(150)
    const turns = await loopTurnsDuring(store.transaction((tx) => tx.organizations.create(org('org-b'))))
    await released
    expect(turns).toBeGreaterThanOrEqual(10)
    expect(await store.organizations.get('org-b')).toBeDefined()
    await close()
  })

  test('a lock held longer than the wait fails the write with the busy error, and nothing is written', async () => {
    const { store, close } = await openStore(100)
    const released = holdLock(400)
    const write = store.organizations.create(org('org-c'))
    await expect(write).rejects.toMatchObject({ code: 'SQLITE_BUSY' })
    await released
    expect(await store.organizations.get('org-c')).toBeUndefined()
    await close()
  })

  test('reads do not wait for a writer (WAL)', async () => {
    const { store, close } = await openStore()
    await store.organizations.create(org('org-d'))
    const released = holdLock(300)
    const started = performance.now()
    expect(await store.organizations.get('org-d')).toBeDefined()
    expect(performance.now() - started).toBeLessThan(100)
    await released
    await close()
  })
})
