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
      expect(await migrate(t.db)).toEqual([])
      const rows = await t.db.query<{ tag: string }>('SELECT tag FROM gw_migrations ORDER BY tag')
      expect(rows.map((r) => r.tag)).toEqual([...t.db.migrationTags])
    })

    test('server keys: the first one stored under a name stays, read back whole; an unknown name is undefined', async () => {
      const name = `key-${randomUUID()}`
      const first = { name, sealed: 'sealed-first', createdAt: now }
      expect(await store.serverKeys.insertIfAbsent(first)).toEqual(first)
      const later = { name, sealed: 'sealed-later', createdAt: new Date(now.getTime() + 1_000) }
      expect(await store.serverKeys.insertIfAbsent(later)).toEqual(first)
      expect(await store.serverKeys.get(name)).toEqual(first)
      expect(await store.serverKeys.get(`${name}-unknown`)).toBeUndefined()
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
      const org = store.org(orgId)
      await org.memberships.add({ userId: owner, role: 'owner', createdAt: now })
      await org.memberships.add({ userId: member, role: 'member', createdAt: now })
      await expect(org.memberships.add({ userId: member, role: 'admin', createdAt: now })).rejects.toThrow()
      expect((await org.memberships.owner())?.userId).toBe(owner)
      expect((await org.memberships.get(member))?.role).toBe('member')
      expect((await store.userMemberships.listForUser(member)).map((m) => m.orgId)).toEqual([orgId])
    })

    test('foreign keys are enforced', async () => {
      await expect(
        store.org(randomUUID()).memberships.add({ userId: randomUUID(), role: 'member', createdAt: now }),
      ).rejects.toThrow()
    })

    test('custom roles are found only within their organisation; permissions round-trip as a list', async () => {
      const orgId = await newOrg('enterprise')
      const other = await newOrg('enterprise')
      const id = randomUUID()
      await store.org(orgId).roles.create({
        id,
        name: 'analyst',
        permissions: ['traffic.read', 'reports.read'],
        archivedAt: null,
        createdAt: now,
      })
      expect((await store.org(orgId).roles.get(id))?.permissions).toEqual(['traffic.read', 'reports.read'])
      expect(await store.org(other).roles.get(id)).toBeUndefined()
    })

    test('a row is inserted into the organisation its repository is bound to, whatever the values say', async () => {
      const orgId = await newOrg('enterprise')
      const other = await newOrg('enterprise')
      const id = randomUUID()
      const smuggled = { id, orgId: other, name: 'x', permissions: [], archivedAt: null, createdAt: now }
      await store.org(orgId).roles.create(smuggled)
      expect(await store.org(other).roles.get(id)).toBeUndefined()
      expect((await store.org(orgId).roles.get(id))?.orgId).toBe(orgId)
    })

    test("teams: another organisation's team and its members are reached through nothing bound to this one", async () => {
      const mine = await newOrg()
      const theirs = await newOrg()
      const person = await newUser()
      const teamId = randomUUID()
      const them = store.org(theirs)
      await them.teams.create({ id: teamId, name: 'theirs', createdAt: now })
      expect(await them.teams.addMember(teamId, person)).toBe(true)
      const us = store.org(mine)
      expect(await us.teams.get(teamId)).toBeUndefined()
      expect(await us.teams.members(teamId)).toEqual([])
      expect(await us.teams.isMember(teamId, person)).toBe(false)
      expect(await us.teams.addMember(teamId, await newUser())).toBe(false)
      expect(await us.teams.removeMember(teamId, person)).toBe(false)
      expect(await store.transaction((tx) => tx.org(mine).teams.delete(teamId))).toBe(false)
      expect(await us.teams.rename(teamId, 'ours now')).toBeUndefined()
      expect((await them.teams.get(teamId))?.name).toBe('theirs')
      expect((await them.teams.members(teamId)).map((m) => m.userId)).toEqual([person])
      // Its own organisation deletes it with its members.
      expect(await store.transaction((tx) => tx.org(theirs).teams.delete(teamId))).toBe(true)
      expect(await them.teams.members(teamId)).toEqual([])
    })

    test('sessions and API keys: stored, revoked, scopes kept as a list', async () => {
      const orgId = await newOrg()
      const userId = await newUser()
      const org = store.org(orgId)
      const sessionId = randomUUID().slice(0, 12)
      await org.sessions.create({
        id: sessionId,
        userId,
        secretHash: 'h',
        createdAt: now,
        expiresAt: now,
        revokedAt: null,
      })
      await store.credentials.revokeSession(sessionId, now)
      expect((await store.credentials.session(sessionId))?.revokedAt).toEqual(now)

      const keyId = randomUUID().slice(0, 12)
      await org.apiKeys.create({
        id: keyId,
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
      expect((await store.credentials.apiKey(keyId))?.scopes).toEqual(['gateway', 'traffic.read'])
      await org.apiKeys.update(keyId, { revokedAt: now })
      expect((await store.credentials.apiKey(keyId))?.revokedAt).toEqual(now)
      expect(await store.org(await newOrg()).apiKeys.update(keyId, { name: 'stolen' })).toBeUndefined()
      expect((await org.apiKeys.get(keyId))?.name).toBe('ci')
    })

    test('audit entries are appended and listed newest first, per organisation', async () => {
      const orgId = await newOrg()
      const other = await newOrg()
      const actor = { kind: 'system' as const, id: null, orgId }
      await store
        .org(orgId)
        .audit.append({ ...auditEntry(actor, 'first', null, { at: new Date(1000) }), createdAt: new Date(1000) })
      await store.org(orgId).audit.append({
        ...auditEntry(actor, 'second', 'x:1', { at: new Date(2000), detail: { n: 1 } }),
        createdAt: new Date(2000),
      })
      await store.org(other).audit.append(auditEntry({ ...actor, orgId: other }, 'elsewhere', null, { at: new Date() }))
      const entries = await store.org(orgId).audit.list()
      expect(entries.map((e) => e.action)).toEqual(['second', 'first'])
      expect(entries[0]?.detail).toEqual({ n: 1 })
    })

    test("another request's statement, issued while a transaction waits, is not part of it", async () => {
      const doomed = randomUUID()
      const bystander = randomUUID()
      let opened: () => void = () => undefined
      const open = new Promise<void>((resolve) => {
        opened = resolve
      })
      const transaction = store.transaction(async (tx) => {
        await tx.organizations.create({ id: doomed, name: 'doomed', tier: 'free', creditBalanceNano: 0, createdAt: now })
        opened()
        await Bun.sleep(30)
        throw new Error('rolled back')
      })
      await open
      // Issued while the transaction is open and waiting: it must survive the rollback.
      const outside = store.organizations.create({
        id: bystander,
        name: 'bystander',
        tier: 'free',
        creditBalanceNano: 0,
        createdAt: now,
      })
      await expect(transaction).rejects.toThrow('rolled back')
      await outside
      expect(await store.organizations.get(doomed)).toBeUndefined()
      expect((await store.organizations.get(bystander))?.name).toBe('bystander')
    })

    test("a transaction's work that writes through the store outside it is refused, and nothing commits", async () => {
      const id = randomUUID()
      await expect(
        store.transaction(async (tx) => {
          await tx.organizations.create({ id, name: 'half', tier: 'free', creditBalanceNano: 0, createdAt: now })
          await store.organizations.rename(id, 'outside')
        }),
      ).rejects.toThrow('use the repositories the transaction hands its work')
      expect(await store.organizations.get(id)).toBeUndefined()
    })

    test("the first two transactions at once, on a store that has run none, each refuse their work's statement outside them", async () => {
      const fresh = await openTestDatabase(dialect)
      try {
        const ids = [randomUUID(), randomUUID()]
        const attempts = ids.map((id) =>
          fresh.store.transaction(async (tx) => {
            await tx.organizations.create({ id, name: 'half', tier: 'free', creditBalanceNano: 0, createdAt: now })
            await fresh.store.organizations.rename(id, 'outside')
          }),
        )
        for (const attempt of attempts)
          await expect(attempt).rejects.toThrow('use the repositories the transaction hands its work')
        for (const id of ids) expect(await fresh.store.organizations.get(id)).toBeUndefined()
      } finally {
        await fresh.close()
      }
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
