import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHarness, type Harness, type Org } from './support/harness'

let h: Harness
let org: Org
beforeAll(async () => {
  h = await createHarness()
  org = await h.org('growth')
})
afterAll(() => h.close())

type FilterView = { id: string; name: string; filter: unknown }
const data = async <T>(response: Response) => ((await response.json()) as { data: T }).data
const byModel = { request: { model: { equals: 'gpt-4o' } } }

describe('saved filters', () => {
  test('saved through either route, changed through either, listed, deleted', async () => {
    const first = await data<FilterView>(
      await h.request('POST', '/v1/filter', { token: org.ownerSession, body: { name: 'gpt-4o', filter: byModel } }),
    )
    const second = await h.request('POST', `/v1/organization/${org.orgId}/create_filter`, {
      token: org.ownerSession,
      body: { name: 'everything', filter: 'all' },
    })
    expect(second.status).toBe(201)
    expect(
      (await h.request('POST', '/v1/filter', { token: org.ownerSession, body: { name: 'gpt-4o', filter: 'all' } })).status,
    ).toBe(409)

    const renamed = await data<FilterView>(
      await h.request('PATCH', `/v1/filter/${first.id}`, { token: org.ownerSession, body: { name: '4o only' } }),
    )
    expect(renamed).toMatchObject({ name: '4o only', filter: byModel })
    // Renamed to a name another filter holds: 409, and neither changes.
    const clash = await h.request('PATCH', `/v1/filter/${first.id}`, { token: org.ownerSession, body: { name: 'everything' } })
    expect(clash.status).toBe(409)
    const refiltered = await h.request('POST', `/v1/organization/${org.orgId}/update_filter`, {
      token: org.ownerSession,
      body: { filterId: first.id, filter: 'all' },
    })
    expect((await data<FilterView>(refiltered)).filter).toBe('all')

    const listed = await data<FilterView[]>(await h.request('GET', '/v1/filter', { token: org.apiKey }))
    expect(listed.map((f) => f.name)).toEqual(['4o only', 'everything'])
    expect((await h.request('DELETE', `/v1/filter/${first.id}`, { token: org.ownerSession })).status).toBe(200)
    expect((await h.request('DELETE', `/v1/filter/${first.id}`, { token: org.ownerSession })).status).toBe(404)
  })

  test('bad input is refused; a Member cannot save; another organisation cannot touch them', async () => {
    for (const filter of [42, ['a'], null, 'some']) {
      expect((await h.request('POST', '/v1/filter', { token: org.ownerSession, body: { name: 'bad', filter } })).status).toBe(400)
    }
    expect((await h.request('POST', '/v1/filter', { token: org.apiKey, body: { name: 'x', filter: 'all' } })).status).toBe(403)
    const saved = await data<FilterView>(
      await h.request('POST', '/v1/filter', { token: org.ownerSession, body: { name: 'mine', filter: 'all' } }),
    )
    const other = await h.org('growth')
    expect(
      (await h.request('PATCH', `/v1/filter/${saved.id}`, { token: other.ownerSession, body: { name: 'theirs' } })).status,
    ).toBe(404)
    expect((await h.request('DELETE', `/v1/filter/${saved.id}`, { token: other.ownerSession })).status).toBe(404)
  })
})

describe('hidden properties', () => {
  test('hide, list (traffic.read), restore; names are case-insensitive', async () => {
    expect((await h.request('POST', '/v1/property/hide', { token: org.ownerSession, body: { key: 'Customer' } })).status).toBe(
      200,
    )
    const hidden = await data<Array<{ key: string }>>(await h.request('POST', '/v1/property/hidden/query', { token: org.apiKey }))
    expect(hidden.map((p) => p.key)).toEqual(['customer'])
    expect((await h.request('POST', '/v1/property/hide', { token: org.apiKey, body: { key: 'x' } })).status).toBe(403)
    expect((await h.request('POST', '/v1/property/restore', { token: org.ownerSession, body: { key: 'customer' } })).status).toBe(
      200,
    )
    expect((await h.request('POST', '/v1/property/restore', { token: org.ownerSession, body: { key: 'customer' } })).status).toBe(
      404,
    )
    expect(await data<unknown[]>(await h.request('POST', '/v1/property/hidden/query', { token: org.apiKey }))).toEqual([])
  })
})
