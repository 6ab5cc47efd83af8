import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ROUTE_CATALOGUE } from '../src/auth/catalogue'
import { BUILT_IN_ROLE_PERMISSIONS, MEMBER_PERMISSIONS, type Permission } from '../src/auth/permissions'
import { createHarness, type Harness, type Org } from './support/harness'

/** A concrete path for a catalogue route: the caller's own organisation for `{id}`, a made-up value elsewhere. */
const concretePath = (path: string, orgId: string): string =>
  path.replace('{id}', orgId).replace(/\{(\w+)\}/g, (_, name: string) => `${name}-123`)

let h: Harness
let org: Org
let memberSession: string
let adminSession: string

beforeAll(async () => {
  h = await createHarness()
  org = await h.org('enterprise')
  memberSession = (await h.member(org.orgId, 'member')).sessionToken
  adminSession = (await h.member(org.orgId, 'admin')).sessionToken
})
afterAll(() => h.close())

const DELETE_ORG = '/v1/organization/delete'

async function statusesFor(
  token: string | undefined,
  skip: readonly string[] = [],
): Promise<Array<{ route: string; permission: Permission; status: number }>> {
  return Promise.all(
    ROUTE_CATALOGUE.filter(([, path]) => !skip.includes(path)).map(async ([method, path, permission]) => {
      const response = await h.request(method, concretePath(path, org.orgId), { token, body: method === 'GET' ? undefined : {} })
      return { route: `${method} ${path}`, permission, status: response.status }
    }),
  )
}

const denied = (status: number) => status === 401 || status === 403

describe('the permission matrix over the whole route catalogue', () => {
  test('the catalogue holds the 223 routes of spec 4.6, each once', () => {
    expect(ROUTE_CATALOGUE.length).toBe(223)
    expect(new Set(ROUTE_CATALOGUE.map(([m, p]) => `${m} ${p}`)).size).toBe(223)
  })

  test('no credentials: 401 on every route', async () => {
    const wrong = (await statusesFor(undefined)).filter((r) => r.status !== 401)
    expect(wrong).toEqual([])
  })

  const memberCases = [
    ['a Member API key', () => org.apiKey],
    ['a Member session', () => memberSession],
  ] as const
  for (const [who, token] of memberCases) {
    test(`${who}: 403 exactly outside the Member permissions, never 401/403 inside`, async () => {
      const results = await statusesFor(token())
      const wrong = results.filter((r) => MEMBER_PERMISSIONS.includes(r.permission) === denied(r.status) || r.status === 401)
      expect(wrong).toEqual([])
      expect(results.filter((r) => r.status === 403).length).toBeGreaterThan(100)
    })
  }

  test('an Admin session: 403 exactly on the ownership routes', async () => {
    const results = await statusesFor(adminSession)
    const wrong = results.filter((r) => BUILT_IN_ROLE_PERMISSIONS.admin.includes(r.permission) === denied(r.status))
    expect(wrong).toEqual([])
    expect(results.filter((r) => r.status === 403).map((r) => r.permission)).toEqual(
      ROUTE_CATALOGUE.filter(([, , p]) => p === 'ownership').map(() => 'ownership'),
    )
  })

  test('an Owner session: never 401 or 403', async () => {
    // Deleting the organisation would end the run: it is checked on an organisation of its own.
    const wrong = (await statusesFor(org.ownerSession, [DELETE_ORG])).filter((r) => denied(r.status))
    expect(wrong).toEqual([])
    const doomed = await h.org('enterprise')
    expect(denied((await h.request('DELETE', DELETE_ORG, { token: doomed.ownerSession })).status)).toBe(false)
  })

  test('a route without a handler yet answers 501 not_implemented once authorised', async () => {
    const response = await h.request('PUT', '/v1/value/rate', { token: org.ownerSession, body: {} })
    expect(response.status).toBe(501)
    expect(await response.json()).toEqual({
      data: null,
      error: { code: 'not_implemented', message: 'PUT /v1/value/rate is not implemented yet' },
    })
  })

  test('a 403 names the missing permission', async () => {
    const response = await h.request('GET', `/v1/organization/${org.orgId}/audit`, { token: memberSession })
    expect(response.status).toBe(403)
    const body = (await response.json()) as { error: { code: string; message: string } }
    expect(body.error.code).toBe('forbidden')
    expect(body.error.message).toContain('audit.read')
  })
})
