import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHarness, type Harness, type Org } from './support/harness'

let clock = Date.now()
let h: Harness
let org: Org
let admin: { userId: string; sessionToken: string }

beforeAll(async () => {
  h = await createHarness({ now: () => clock })
  org = await h.org('enterprise')
  admin = await h.member(org.orgId, 'admin')
})
afterAll(() => h.close())

const path = (action: string) => `/v1/organization/${org.orgId}/${action}`
const me = (token: string) => h.request('GET', path('permissions/me'), { token })
const errorOf = async (response: Response) => ((await response.json()) as { error: { message: string } }).error.message
let counter = 0
const email = () => `new${++counter}@example.test`

async function invite(role = 'member', token = org.ownerSession) {
  const response = await h.request('POST', path('add_member'), { token, body: { email: email(), role } })
  expect(response.status).toBe(201)
  return ((await response.json()) as { data: { userId: string; role: string; inviteToken: string } }).data
}

async function accept(token: string, password = 'a long enough password') {
  return h.request('POST', '/v1/auth/accept-invite', { body: { token, password } })
}

describe('add_member and the invite', () => {
  test('a new person gets a one-time invite; accepting it sets the password and opens a session with the role', async () => {
    const invited = await invite('admin', admin.sessionToken)
    expect(invited.inviteToken).toStartWith('gw-inv-')
    const accepted = await accept(invited.inviteToken)
    expect(accepted.status).toBe(200)
    const session = ((await accepted.json()) as { data: { sessionToken: string; orgId: string } }).data
    expect(session.orgId).toBe(org.orgId)
    expect(((await (await me(session.sessionToken)).json()) as { data: { role: string } }).data.role).toBe('admin')
    // Used once, never again.
    expect((await accept(invited.inviteToken)).status).toBe(401)
  })

  test('an invite is not a bearer credential, and it expires', async () => {
    const invited = await invite()
    expect((await me(invited.inviteToken)).status).toBe(401)
    clock += 8 * 24 * 3600 * 1000
    expect((await accept(invited.inviteToken)).status).toBe(401)
  })

  test('bad input: 400 and nothing changed', async () => {
    const before = (await h.store.org(org.orgId).memberships.list()).length
    for (const body of [
      { email: 'not-an-email', role: 'member' },
      { email: email(), role: 'owner' },
      { email: email(), role: 'superuser' },
    ]) {
      expect((await h.request('POST', path('add_member'), { token: org.ownerSession, body })).status).toBe(400)
    }
    expect((await accept('gw-inv-nope', 'a long enough password')).status).toBe(401)
    expect((await accept((await invite()).inviteToken, 'short')).status).toBe(400)
    expect((await h.store.org(org.orgId).memberships.list()).length).toBe(before + 1)
  })

  test("an address a browser's email field refuses is 400 naming it, and nobody is stored; one it takes is added", async () => {
    const people = async () => (await h.db.query<{ n: number }>('SELECT count(*) AS n FROM users'))[0]?.n
    const before = { people: await people(), members: (await h.store.org(org.orgId).memberships.list()).length }
    for (const address of [
      'not an email',
      'a@b@example.test',
      'a@-example.test',
      'é@example.test',
      `${'a'.repeat(65)}@example.test`,
    ]) {
      const response = await h.request('POST', path('add_member'), {
        token: org.ownerSession,
        body: { email: address, role: 'member' },
      })
      expect(response.status).toBe(400)
      expect(await errorOf(response)).toContain('invalid body at "email": email must be an email address')
    }
    expect({ people: await people(), members: (await h.store.org(org.orgId).memberships.list()).length }).toEqual(before)
    // What the browser takes, gw takes: no dot in the domain, a quote and a bang before the @.
    for (const address of ['admin@localhost', "o'brien!ops@example.test"]) {
      const response = await h.request('POST', path('add_member'), {
        token: org.ownerSession,
        body: { email: address, role: 'member' },
      })
      expect(response.status).toBe(201)
    }
  })

  test('someone already a member: 409', async () => {
    const user = await h.store.users.get(admin.userId)
    const response = await h.request('POST', path('add_member'), {
      token: org.ownerSession,
      body: { email: user?.email, role: 'member' },
    })
    expect(response.status).toBe(409)
  })

  test('a Member cannot add members (403); another organisation cannot either (404)', async () => {
    const member = await h.member(org.orgId, 'member')
    expect(
      (await h.request('POST', path('add_member'), { token: member.sessionToken, body: { email: email(), role: 'member' } }))
        .status,
    ).toBe(403)
    const other = await h.org('enterprise')
    expect(
      (await h.request('POST', path('add_member'), { token: other.ownerSession, body: { email: email(), role: 'member' } }))
        .status,
    ).toBe(404)
  })
})

describe('update_member and the invariants', () => {
  test('a role change is in force on the next request', async () => {
    const person = await h.member(org.orgId, 'member')
    expect(((await (await me(person.sessionToken)).json()) as { data: { role: string } }).data.role).toBe('member')
    const changed = await h.request('POST', path('update_member'), {
      token: admin.sessionToken,
      body: { userId: person.userId, role: 'admin' },
    })
    expect(changed.status).toBe(200)
    expect(((await (await me(person.sessionToken)).json()) as { data: { role: string } }).data.role).toBe('admin')
  })

  test('nobody changes their own role', async () => {
    const response = await h.request('POST', path('update_member'), {
      token: admin.sessionToken,
      body: { userId: admin.userId, role: 'member' },
    })
    expect(response.status).toBe(403)
    expect(await errorOf(response)).toContain('themselves')
  })

  test('no one demotes the Owner, and no one is made Owner except by transfer', async () => {
    const demote = await h.request('POST', path('update_member'), {
      token: admin.sessionToken,
      body: { userId: org.ownerId, role: 'member' },
    })
    expect(demote.status).toBe(403)
    const person = await h.member(org.orgId, 'member')
    const promote = await h.request('POST', path('update_member'), {
      token: admin.sessionToken,
      body: { userId: person.userId, role: 'owner' },
    })
    expect(promote.status).toBe(400)
    expect(await errorOf(promote)).toContain('only by transfer')
    expect((await h.store.org(org.orgId).memberships.owner())?.userId).toBe(org.ownerId)
  })
})

describe('remove_member', () => {
  test("the member's sessions end at once", async () => {
    const person = await h.member(org.orgId, 'member')
    expect((await me(person.sessionToken)).status).toBe(200)
    const removed = await h.request('DELETE', path('remove_member'), {
      token: admin.sessionToken,
      body: { userId: person.userId },
    })
    expect(removed.status).toBe(200)
    expect((await me(person.sessionToken)).status).toBe(401)
  })

  test('the Owner cannot be removed; an unknown member is 404', async () => {
    expect(
      (await h.request('DELETE', path('remove_member'), { token: admin.sessionToken, body: { userId: org.ownerId } })).status,
    ).toBe(403)
    expect(
      (await h.request('DELETE', path('remove_member'), { token: admin.sessionToken, body: { userId: 'nobody' } })).status,
    ).toBe(404)
    expect(await h.store.org(org.orgId).memberships.get(org.ownerId)).toBeDefined()
  })
})

describe('the member list', () => {
  test('every member with email and role, the Owner first; any role reads it, another organisation does not', async () => {
    const fresh = await h.org('enterprise')
    const member = await h.member(fresh.orgId, 'member')
    const list = (token: string, orgId = fresh.orgId) => h.request('GET', `/v1/organization/${orgId}/members`, { token })
    const asMember = await list(member.sessionToken)
    expect(asMember.status).toBe(200)
    const { data } = (await asMember.json()) as { data: Array<{ userId: string; email: string; role: string; joinedAt: string }> }
    expect(data.map((row) => [row.userId, row.role])).toEqual([
      [fresh.ownerId, 'owner'],
      [member.userId, 'member'],
    ])
    expect(data[0]?.email).toMatch(/@example\.test$/)
    expect(Number.isNaN(Date.parse(data[0]?.joinedAt ?? ''))).toBe(false)
    expect((await list(org.ownerSession)).status).toBe(404)
    expect((await h.request('GET', `/v1/organization/${fresh.orgId}/members`)).status).toBe(401)
  })
})
