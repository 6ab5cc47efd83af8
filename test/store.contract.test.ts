import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { randomUUID } from 'node:crypto'
import { auditEntry } from '../src/audit/entry'
import { migrate } from '../src/store/migrate'
import type { Store } from '../src/store/store'
import { DIALECTS, openTestDatabase, type TestDatabase } from './support/harness'
import { requestRecord } from './support/records'

/** The same contract for every store implementation: SQLite always, Postgres whenever it is reachable (always in CI). */
for (const dialect of DIALECTS) {
  describe(`store contract on ${dialect}`, () => {
    let t: TestDatabase
    let store: Store
    const now = new Date('2026-01-01T00:00:00Z')

    beforeAll(async () => {
      t = await openTestDatabase(dialect)
      store = t.store
    })
    afterAll(() => t.close())

    const newOrg = async (tier: 'free' | 'enterprise' = 'free') => {
      const id = randomUUID()
      await store.organizations.create({ id, name: `org ${id}`, tier, creditBalanceNano: 0, createdAt: now })
      return id
    }
    const newUser = async (email = `${randomUUID()}@example.test`) => {
      const id = randomUUID()
      await store.users.create({ id, email, passwordHash: null, createdAt: now })
      return id
    }

    test('migrations are recorded and a second run applies nothing', async () => {
      expect(await migrate(t.db, t.db.migrations)).toEqual([])
      const rows = await t.db.query<{ tag: string }>('SELECT tag FROM gw_migrations ORDER BY tag')
      expect(rows.map((r) => r.tag)).toEqual(t.db.migrations.map((m) => m.tag))
    })

    test('organizations: created with a tier, read back with dates and integers intact', async () => {
      const id = await newOrg('enterprise')
      expect(await store.organizations.get(id)).toEqual({
        id,
        name: `org ${id}`,
        tier: 'enterprise',
        teamVisibility: 'all',
        creditBalanceNano: 0,
        createdAt: now,
      })
      await store.organizations.setTier(id, 'growth')
      expect((await store.organizations.get(id))?.tier).toBe('growth')
      expect(await store.organizations.get(randomUUID())).toBeUndefined()
    })

    test('request records: every field round-trips, a missing value stays NULL (not the text "null")', async () => {
      const orgId = await newOrg()
      const full = requestRecord({
        id: randomUUID(),
        orgId,
        apiKeyId: 'k',
        userId: 'u',
        sessionId: 's',
        properties: { customer: 'acme' },
        gatewayMode: 'translated',
        translationWarning: 'dropped: x',
        timeToFirstTokenMs: 12,
        costNote: 'n',
        estimatedCostNano: 9_000_000_000_123,
        error: 'e',
        country: 'DE',
        createdAt: new Date('2026-03-04T05:06:07.089Z'),
      })
      const bare = requestRecord({ id: randomUUID(), orgId, latencyMs: null, costNano: null, totalTokens: null, ptb: false })
      await store.transaction((tx) => tx.requests.insertMany([full, bare]))
      expect(await store.requests.get(orgId, full.id)).toEqual(full)
      expect(await store.requests.get(orgId, bare.id)).toEqual(bare)
      const nulls = await t.db.query<{ n: number }>('SELECT count(*) AS n FROM requests WHERE id = $1 AND properties IS NULL', [
        bare.id,
      ])
      expect(Number(nulls[0]?.n)).toBe(1)
    })

    test('credits: concurrent additions lose nothing, and large nano-USD amounts stay exact', async () => {
      const id = await newOrg()
      await Promise.all(Array.from({ length: 50 }, () => store.organizations.addCredits(id, 1_000_000_007)))
      expect((await store.organizations.get(id))?.creditBalanceNano).toBe(50_000_000_350)
      expect(await store.organizations.addCredits(id, -50_000_000_350)).toBe(0)
      expect(await store.organizations.addCredits(id, 9_000_000_000_000_000)).toBe(9_000_000_000_000_000)
    })

    test('users: email is unique whatever its case', async () => {
      await newUser('Someone@Example.test')
      expect((await store.users.findByEmail('someone@example.TEST'))?.email).toBe('someone@example.test')
      await expect(newUser('SOMEONE@example.test')).rejects.toThrow()
    })

    test('memberships: one per person and organisation; the owner is found', async () => {
      const orgId = await newOrg()
      const owner = await newUser()
      const member = await newUser()
      await store.memberships.add({ orgId, userId: owner, role: 'owner', createdAt: now })
      await store.memberships.add({ orgId, userId: member, role: 'member', createdAt: now })
      await expect(store.memberships.add({ orgId, userId: member, role: 'admin', createdAt: now })).rejects.toThrow()
      expect((await store.memberships.ownerOf(orgId))?.userId).toBe(owner)
      expect((await store.memberships.get(orgId, member))?.role).toBe('member')
      expect((await store.memberships.listForUser(member)).map((m) => m.orgId)).toEqual([orgId])
    })

    test('foreign keys are enforced', async () => {
      await expect(
        store.memberships.add({ orgId: randomUUID(), userId: randomUUID(), role: 'member', createdAt: now }),
      ).rejects.toThrow()
    })

    test('custom roles are found only within their organisation; permissions round-trip as a list', async () => {
      const orgId = await newOrg('enterprise')
      const other = await newOrg('enterprise')
      const id = randomUUID()
      await store.roles.create({
        id,
        orgId,
        name: 'analyst',
        permissions: ['traffic.read', 'reports.read'],
        archivedAt: null,
        createdAt: now,
      })
      expect((await store.roles.get(orgId, id))?.permissions).toEqual(['traffic.read', 'reports.read'])
      expect(await store.roles.get(other, id)).toBeUndefined()
    })

    test('sessions and API keys: stored, revoked, scopes kept as a list', async () => {
      const orgId = await newOrg()
      const userId = await newUser()
      const sessionId = randomUUID().slice(0, 12)
      await store.sessions.create({
        id: sessionId,
        userId,
        orgId,
        secretHash: 'h',
        createdAt: now,
        expiresAt: now,
        revokedAt: null,
      })
      await store.sessions.revoke(sessionId, now)
      expect((await store.sessions.get(sessionId))?.revokedAt).toEqual(now)

      const keyId = randomUUID().slice(0, 12)
      await store.apiKeys.create({
        id: keyId,
        orgId,
        name: 'ci',
        prefix: `gw-sk-${keyId}`,
        secretHash: 'h',
        scopes: ['gateway', 'traffic.read'],
        providerKeyId: null,
        createdByUserId: userId,
        createdAt: now,
        expiresAt: null,
        revokedAt: null,
        lastUsedAt: null,
      })
      expect((await store.apiKeys.get(keyId))?.scopes).toEqual(['gateway', 'traffic.read'])
      await store.apiKeys.revoke(keyId, now)
      expect((await store.apiKeys.get(keyId))?.revokedAt).toEqual(now)
    })

    test('audit entries are appended and listed newest first, per organisation', async () => {
      const orgId = await newOrg()
      const other = await newOrg()
      const actor = { kind: 'system' as const, id: null, orgId }
      await store.audit.append({ ...auditEntry(actor, 'first', null), createdAt: new Date(1000) })
      await store.audit.append({ ...auditEntry(actor, 'second', 'x:1', { detail: { n: 1 } }), createdAt: new Date(2000) })
      await store.audit.append(auditEntry({ ...actor, orgId: other }, 'elsewhere', null))
      const entries = await store.audit.listForOrg(orgId)
      expect(entries.map((e) => e.action)).toEqual(['second', 'first'])
      expect(entries[0]?.detail).toEqual({ n: 1 })
    })

    test('a transaction that fails leaves nothing behind', async () => {
      const id = randomUUID()
      await expect(
        store.transaction(async (tx) => {
          await tx.organizations.create({ id, name: 'doomed', tier: 'free', creditBalanceNano: 0, createdAt: now })
          throw new Error('boom')
        }),
      ).rejects.toThrow('boom')
      expect(await store.organizations.get(id)).toBeUndefined()
    })

    test('concurrent transactions each commit whole', async () => {
      const ids = Array.from({ length: 10 }, () => randomUUID())
      await Promise.all(
        ids.map((id) =>
          store.transaction(async (tx) => {
            await tx.organizations.create({ id, name: 'a', tier: 'free', creditBalanceNano: 0, createdAt: now })
            await tx.organizations.addCredits(id, 5)
          }),
        ),
      )
      const balances = await Promise.all(ids.map(async (id) => (await store.organizations.get(id))?.creditBalanceNano))
      expect(balances).toEqual(ids.map(() => 5))
    })
  })
}
