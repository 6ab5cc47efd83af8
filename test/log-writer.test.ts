import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import type { WritableEntry } from '../src/gateway/request-log/request-log'
import { batchText, entriesOf, ThreadedLogWriter, writeEntries } from '../src/gateway/request-log/writer'
import { FUZZ_SEEDS } from './support/fuzz-seeds'
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
  test('arrives as it was sent, bodies or not, through the text of its batch', () => {
    const withBodies = entry('e1', 'org', 'hello \ud800 "quoted"\n')
    const withProperties: WritableEntry = {
      record: requestRecord({
        id: 'e2',
        orgId: 'org',
        properties: { team: 'a' },
        userId: 'u',
        costNano: null,
        attempts: [{ provider: 'openai', model: 'gpt-4o', httpStatus: 429, error: 'slow down', latencyMs: 3.5 }],
        createdAt: new Date(Date.UTC(2026, 10, 27, 1, 2, 3, 456)),
      }),
    }
    expect(entriesOf(batchText([withBodies, withProperties]))).toEqual([withBodies, withProperties])
  })

  test('every body arrives exactly, whatever its text (lone surrogates, quotes, empty) and whichever entries have bodies', () => {
    // Any UTF-16 code unit, a lone surrogate included: a body is sent as text, never re-encoded.
    const text = fc.string({ unit: fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)), maxLength: 40 })
    const anEntry = fc.record({
      id: fc.uuid(),
      bodies: fc.option(
        fc.record({
          request: text,
          response: text,
          truncated: fc.boolean(),
          policy: fc.record({ store: fc.boolean(), redact: fc.boolean() }),
        }),
        { nil: undefined },
      ),
    })
    for (const seed of FUZZ_SEEDS)
      fc.assert(
        fc.property(fc.array(anEntry, { maxLength: 8 }), (drawn) => {
          const batch: WritableEntry[] = drawn.map(({ id, bodies }) => ({
            record: requestRecord({ id, orgId: 'org', createdAt: new Date(Date.UTC(2026, 10, 27)) }),
            ...(bodies ? { bodies } : {}),
          }))
          expect(entriesOf(batchText(batch))).toEqual(batch)
        }),
        { numRuns: 200, seed },
      )
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
      const outcome = await writer.write([entry('w1', orgId, 'mail me at ann@example.com'), entry('w2', orgId, 'hello')])
      expect(outcome?.balances.get(orgId)).toBe(6_000_000)
      expect(outcome?.setAside).toEqual([])
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

    test('a record already in the log is neither written nor charged again: a retried batch takes nothing twice', async () => {
      const outcome = await writer.write([entry('w3', orgId, 'x'), entry('w1', orgId, 'the same id again')])
      expect(outcome?.setAside).toEqual([])
      expect((await t.store.requests.getMany(orgId, ['w1', 'w3'])).length).toBe(2)
      expect((await t.store.requestBodies.get(orgId, 'w1'))?.requestBody).toContain('[redacted:email]')
      // w3 alone was charged: 6,000,000 - 2,000,000.
      expect((await t.store.organizations.get(orgId))?.creditBalanceNano).toBe(4_000_000)
    })

    test('a record the database refuses is set aside with the reason; the rest of its batch is written', async () => {
      const refused: WritableEntry = { record: { ...entry('w5', orgId, 'x').record, httpStatus: null as unknown as number } }
      const batch = [entry('w4', orgId, 'a'), refused, entry('w6', orgId, 'b'), entry('w7', orgId, 'c')]
      const outcome = await writer.write(batch)
      expect(outcome?.setAside.map((s) => s.requestId)).toEqual(['w5'])
      expect((await t.store.requests.getMany(orgId, ['w4', 'w5', 'w6', 'w7'])).map((r) => r.id).sort()).toEqual([
        'w4',
        'w6',
        'w7',
      ])
      const [reject] = await t.store.requestRejects.list()
      expect(reject).toMatchObject({ requestId: 'w5', orgId })
      expect(JSON.parse(reject?.record ?? '{}')).toMatchObject({ id: 'w5', httpStatus: null })
      // Tried again (say the answer was lost), nothing changes: the three are in, the fourth aside once.
      expect((await writer.write(batch))?.setAside.map((s) => s.requestId)).toEqual(['w5'])
      expect(await t.store.requestRejects.list()).toHaveLength(1)
      expect((await t.store.organizations.get(orgId))?.creditBalanceNano).toBe(-2_000_000)
    })

    test("a batch of several organisations: each call's event goes to its own organisation's enabled webhooks that take it, and each is charged", async () => {
      const [first, second, bystander] = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()]
      for (const id of [first, second, bystander])
        await t.store.organizations.create({ id, name: id, tier: 'free', creditBalanceNano: 5_000_000, createdAt: new Date() })
      const hook = async (org: string, id: string, events: string[]) =>
        t.store.org(org).webhooks.add({
          id,
          destination: `https://${id}.example.com/hook`,
          events,
          sampleRate: 100,
          propertyFilters: {},
          includeData: false,
          sealedSecret: 'sealed',
          secretPrefix: 'whsec_x',
          createdAt: new Date(),
        })
      const [firstHook, secondHook, disabledHook, budgetsHook, bystanderHook] = Array.from({ length: 5 }, () =>
        crypto.randomUUID(),
      ) as [string, string, string, string, string]
      await hook(first, firstHook, ['request.completed'])
      await hook(second, secondHook, ['request.completed', 'budget.exceeded'])
      await hook(second, disabledHook, ['request.completed'])
      await t.store.deliveries.disable(disabledHook, new Date())
      await hook(second, budgetsHook, ['budget.exceeded'])
      await hook(bystander, bystanderHook, ['request.completed'])

      const calls = [
        entry(crypto.randomUUID(), first, 'a'),
        entry(crypto.randomUUID(), second, 'b'),
        entry(crypto.randomUUID(), second, 'c'),
      ]
      const outcome = await writer.write(calls)
      expect(outcome?.balances.get(first)).toBe(3_000_000)
      expect(outcome?.balances.get(second)).toBe(1_000_000)
      const sent = await t.db.query<{ webhook_id: string; org_id: string }>(
        'SELECT webhook_id, org_id FROM outbox WHERE org_id = $1 OR org_id = $2 OR org_id = $3',
        [first, second, bystander],
      )
      const to = (webhook: string) => sent.filter((row) => row.webhook_id === webhook)
      expect(to(firstHook).map((row) => row.org_id)).toEqual([first])
      expect(to(secondHook).map((row) => row.org_id)).toEqual([second, second])
      expect(sent).toHaveLength(3)
    })

    test('text a column cannot hold (NUL) is stored with U+FFFD in its place, on every dialect', async () => {
      const withNul: WritableEntry = {
        record: {
          ...entry('w8', orgId, 'x').record,
          error: 'provider said a\u0000b',
          model: 'm\u0000',
          downgradedFrom: 'big\u0000',
          attempts: [{ provider: 'openai', model: 'm\u0000', httpStatus: 400, error: 'provider said a\u0000b', latencyMs: 1 }],
        },
        bodies: { request: 'raw\u0000body', response: '', truncated: false, policy: { store: true, redact: false } },
      }
      expect((await writer.write([withNul]))?.setAside).toEqual([])
      const [row] = await t.store.requests.getMany(orgId, ['w8'])
      expect(row).toMatchObject({
        error: 'provider said a\uFFFDb',
        model: 'm\uFFFD',
        downgradedFrom: 'big\uFFFD',
        attempts: [{ provider: 'openai', model: 'm\uFFFD', httpStatus: 400, error: 'provider said a\uFFFDb', latencyMs: 1 }],
      })
      expect((await t.store.requestBodies.get(orgId, 'w8'))?.requestBody).toBe('raw\uFFFDbody')
    })

    const balance = async () => (await t.store.organizations.get(orgId))?.creditBalanceNano ?? 0

    /** A writer paced as given, and how many times it has paused so far. */
    const pacedWriter = (every: number, upTo: number) => {
      let pauses = 0
      const write = writeEntries(t.store, Date.now, { every, upTo, pause: () => void pauses++ })
      return { write, pauses: () => pauses }
    }

    test('a paced batch is written a few records at a time with pauses between, as one batch: records, bodies, charges, nothing twice', async () => {
      const { write, pauses } = pacedWriter(8, 100)
      const ids = Array.from({ length: 20 }, (_, i) => `p${i}`)
      const before = await balance()
      // w1 is in the log already: skipped in whichever part it falls.
      const outcome = await write([
        ...ids.slice(0, 10).map((id) => entry(id, orgId, 'hi')),
        entry('w1', orgId, 'again'),
        ...ids.slice(10).map((id) => entry(id, orgId, 'hi')),
      ])
      expect(pauses()).toBeGreaterThan(0)
      expect(outcome?.setAside).toEqual([])
      expect((await t.store.requests.getMany(orgId, ids)).length).toBe(20)
      expect((await t.store.requestBodies.getMany(orgId, ids)).length).toBe(20)
      expect((await t.store.requestBodies.get(orgId, 'w1'))?.requestBody).toContain('[redacted:email]')
      expect(await balance()).toBe(before - 20 * 2_000_000)
    })

    test('a batch larger than the paced size is written without a pause: a busy log keeps up first', async () => {
      const { write, pauses } = pacedWriter(2, 5)
      const ids = Array.from({ length: 6 }, (_, i) => `q${i}`)
      await write(ids.map((id) => entry(id, orgId, 'hi')))
      expect(pauses()).toBe(0)
      expect((await t.store.requests.getMany(orgId, ids)).length).toBe(6)
    })

    test('through the thread, a batch of many records (paced on SQLite) is written whole, and charged', async () => {
      const ids = Array.from({ length: 30 }, (_, i) => `r${i}`)
      const before = await balance()
      const outcome = await writer.write(ids.map((id) => entry(id, orgId, 'hi')))
      expect(outcome?.balances.get(orgId)).toBe(before - 30 * 2_000_000)
      expect((await t.store.requests.getMany(orgId, ids)).length).toBe(30)
      expect((await t.store.requestBodies.getMany(orgId, ids)).length).toBe(30)
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
