import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ROUTE_CATALOGUE, toRouterPath } from '../src/auth/catalogue'
import { READ_ONLY_PERMISSIONS } from '../src/auth/permissions'
import { createHarness, type Harness, type Org } from './support/harness'

let h: Harness
let org: Org
beforeAll(async () => {
  h = await createHarness()
  org = await h.org('enterprise')
})
afterAll(() => h.close())

describe('the audit log covers every write', () => {
  test('each write route of the catalogue with a handler leaves an entry, whatever its outcome', async () => {
    const writes = ROUTE_CATALOGUE.filter(([method, , permission]) => method !== 'GET' && !READ_ONLY_PERMISSIONS.has(permission))
    const missing: string[] = []
    let implemented = 0
    for (const [method, path] of writes) {
      // Deleting the organisation is audited like the rest; it is walked last so the walk can go on.
      if (path === '/v1/organization/delete') continue
      const concrete = path.replace('{id}', org.orgId).replace(/\{(\w+)\}/g, (_, name: string) => `${name}-1`)
      const response = await h.request(method, concrete, { token: org.ownerSession, body: {} })
      if (response.status === 501) continue
      implemented += 1
      const action = `${method} ${toRouterPath(path)}`
      const entries = await h.store.org(org.orgId).audit.query({ action, limit: 1 })
      const entry = entries[0]
      if (!entry || entry.actorId !== org.ownerId || entry.outcome !== (response.status < 400 ? 'success' : 'failure'))
        missing.push(`${action} (${response.status})`)
    }
    const doomed = await h.org('enterprise')
    expect((await h.request('DELETE', '/v1/organization/delete', { token: doomed.ownerSession })).status).toBe(200)
    const [deletion] = await h.store.org(doomed.orgId).audit.query({ action: 'DELETE /v1/organization/delete', limit: 1 })
    if (deletion?.outcome !== 'success') missing.push('DELETE /v1/organization/delete')
    expect(missing).toEqual([])
    // Every write route with a handler so far (rate limits, keys, provider keys, members).
    expect(implemented).toBeGreaterThanOrEqual(14)
  })

  test('a refused write is recorded as a failure, naming who tried', async () => {
    const member = await h.member(org.orgId, 'member')
    expect((await h.request('POST', '/v1/rate-limits', { token: member.sessionToken, body: { quota: 1 } })).status).toBe(403)
    const [entry] = await h.store.org(org.orgId).audit.query({
      action: 'POST /v1/rate-limits',
      actorId: member.userId,
      limit: 1,
    })
    expect(entry).toMatchObject({ outcome: 'failure', principalKind: 'session', detail: { status: 403 } })
  })

  test('reads leave no entry, POST queries of the read permissions included', async () => {
    const before = (await h.store.org(org.orgId).audit.list(10_000)).length
    await h.request('GET', '/v1/api-keys', { token: org.ownerSession })
    await h.request('GET', `/v1/organization/${org.orgId}/audit`, { token: org.ownerSession })
    // Queries that carry their filter in a POST body read all the same.
    await h.request('POST', '/v1/request/query', { token: org.ownerSession, body: {} })
    await h.request('POST', '/v1/metrics/totalRequests', { token: org.apiKey, body: {} })
    expect((await h.store.org(org.orgId).audit.list(10_000)).length).toBe(before)
  })
})
