import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { fromWire, ThreadedLogWriter, toWire } from '../src/gateway/log-writer'
import type { WritableEntry } from '../src/gateway/request-log'
import { DIALECTS, openTestDatabase, type TestDatabase } from './support/harness'
import { requestRecord } from './support/records'

const entry = (id: string, orgId: string, content: string): WritableEntry => ({
  record: requestRecord({ id, orgId, ptb: true, costNano: 2_000_000 }),
  bodies: {
    request: JSON.stringify({ messages: [{ role: 'user', content }] }),
    response: '{"ok":true}',
    truncated: false,
    policy: { store: true, redact: true },
  },
})

describe('an entry on its way to the writer thread', () => {
  test('arrives as it was sent, bodies or not, through a structured clone', () => {
    const withBodies = entry('e1', 'org', 'hello')
    const withProperties: WritableEntry = {
      record: requestRecord({ id: 'e2', orgId: 'org', properties: { team: 'a' }, userId: 'u', costNano: null }),
    }
    for (const sent of [withBodies, withProperties]) expect(fromWire(structuredClone(toWire(sent)))).toEqual(sent)
  })
})

for (const dialect of DIALECTS) {
  describe(`the request log's writer thread on ${dialect}`, () => {
    let t: TestDatabase
    let writer: ThreadedLogWriter
    let orgId: string

    beforeAll(async () => {
      t = await openTestDatabase(dialect)
      orgId = crypto.randomUUID()
      await t.store.organizations.create({
        id: orgId,
        name: 'o',
        tier: 'free',
        creditBalanceNano: 10_000_000,
        createdAt: new Date(),
      })
      writer = new ThreadedLogWriter(t.location)
      await writer.start()
    })
    afterAll(async () => {
      await writer.close()
      await t.close()
    })

    test('writes a batch on its own connection: records, redacted bodies, flags, and the charges', async () => {
      const balances = await writer.write([entry('w1', orgId, 'mail me at ann@example.com'), entry('w2', orgId, 'hello')])
      expect(balances?.get(orgId)).toBe(6_000_000)
      expect((await t.store.requests.getMany(orgId, ['w1', 'w2'])).map((r) => r.id).sort()).toEqual(['w1', 'w2'])
      const body = await t.store.requestBodies.get(orgId, 'w1')
      expect(body?.requestBody).toContain('[redacted:email]')
      expect(body).toMatchObject({
        orgId,
        responseBody: '{"ok":true}',
        truncated: false,
        createdAt: new Date(Date.UTC(2026, 0, 1)),
      })
      const flags = await t.db.query<{ category: string }>('SELECT category FROM request_flags WHERE request_id = $1', ['w1'])
      expect(flags.map((f) => f.category)).toEqual(['email'])
    })

    test('a batch that cannot be written is refused whole, with the reason, and the thread goes on', async () => {
      await expect(writer.write([entry('w3', orgId, 'x'), entry('w1', orgId, 'a duplicate id')])).rejects.toThrow()
      expect(await t.store.requests.getMany(orgId, ['w3'])).toEqual([])
      expect((await t.store.organizations.get(orgId))?.creditBalanceNano).toBe(6_000_000)
      await writer.write([entry('w3', orgId, 'x')])
      expect((await t.store.requests.getMany(orgId, ['w3'])).length).toBe(1)
    })
  })
}

describe('a writer thread that cannot open its database', () => {
  test('fails the batch with the reason, and the next batch tries a new thread', async () => {
    const writer = new ThreadedLogWriter({ kind: 'sqlite', path: '/dev/null/gw.db' })
    const batch = [entry('x1', 'org', 'hi')]
    await expect(writer.write(batch)).rejects.toThrow()
    await expect(writer.write(batch)).rejects.toThrow()
    await writer.close()
  })
})
