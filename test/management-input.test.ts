import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

type Envelope = { data: unknown; error: { code: string; message: string } | null }

for (const dialect of DIALECTS) {
  describe(`management input gw cannot take, on ${dialect}`, () => {
    let h: Harness
    let org: Org
    let snapshot: () => Promise<string>
    beforeAll(async () => {
      h = await createHarness({ dialect })
      org = await h.org('enterprise')
      // Everything stored that a refused call could have touched.
      snapshot = async () =>
        JSON.stringify(
          await Promise.all(
            ['teams', 'roles', 'saved_filters', 'api_keys', 'organization_settings'].map((table) =>
              h.db.query(`SELECT * FROM ${table} ORDER BY 1`),
            ),
          ),
        )
    })
    afterAll(() => h.close())

    const send = (method: string, path: string, body?: unknown) =>
      h.request(method, path, { token: org.ownerSession, body: body === undefined ? undefined : JSON.stringify(body) })

    const refused = async (response: Response) => {
      expect(response.status).toBe(400)
      return ((await response.json()) as Envelope).error?.message ?? ''
    }

    test('a NUL in a body, a path parameter or a query is a 400 naming where, and nothing is stored', async () => {
      const before = await snapshot()
      expect(await refused(await send('POST', '/v1/team', { name: 'a\u0000b' }))).toContain('the body at "name" holds a NUL')
      expect(await refused(await send('POST', '/v1/team', { 'na\u0000me': 'x' }))).toContain('field name')
      expect(await refused(await send('DELETE', '/v1/team/%00'))).toContain('the path or the query holds a NUL')
      expect(await refused(await send('GET', `/v1/organization/${org.orgId}/audit?action=a%00b`))).toContain('query')
      expect(await snapshot()).toBe(before)
    })

    test('an unpaired surrogate, which a JSON column cannot hold, is a 400 too', async () => {
      const before = await snapshot()
      const filter = { request: { model: { equals: '\ud800' } } }
      expect(await refused(await send('POST', '/v1/filter', { name: 'v', filter }))).toContain('unpaired surrogate')
      expect(await refused(await send('POST', '/v1/organization/update_onboarding', { step: 'x\udfff' }))).toContain(
        'the body at "step"',
      )
      expect(await snapshot()).toBe(before)
    })

    test('a body that is not an object, or nests deeper than 64 levels, is refused at once', async () => {
      for (const body of ['"text"', '[]', '42', 'null']) {
        const response = await h.request('POST', '/v1/team', { token: org.ownerSession, body })
        expect(await refused(response)).toBe('the request body must be a JSON object')
      }
      const started = performance.now()
      const deep = `{"name":${'['.repeat(10_000)}${']'.repeat(10_000)}}`
      const response = await h.request('POST', '/v1/team', { token: org.ownerSession, body: deep })
      expect(await refused(response)).toBe('the body is nested deeper than 64 levels')
      // Described by its schema, this body took seconds; refused here it is immediate (a generous bound).
      expect(performance.now() - started).toBeLessThan(2_000)
    })

    test('an update with nothing to change is a 400 saying what it takes, never a 500', async () => {
      const key = ((await (await send('POST', '/v1/api-keys', { name: 'k' })).json()) as { data: { id: string } }).data
      const role = (
        (await (await send('POST', `/v1/organization/${org.orgId}/roles`, { name: 'r', permissions: [] })).json()) as {
          data: { id: string }
        }
      ).data
      const filter = (
        (await (
          await send('POST', '/v1/filter', { name: 'f', filter: { request: { model: { equals: 'gpt-4o' } } } })
        ).json()) as { data: { id: string } }
      ).data
      const providerKey = (
        (await (
          await send('POST', '/v1/api-keys/provider-key', { provider: 'openai', name: 'p', secret: 'sk-0123456789abcdef' })
        ).json()) as { data: { id: string } }
      ).data
      const before = await snapshot()
      for (const [path, fields] of [
        [`/v1/api-keys/${key.id}`, 'name, expiresAt'],
        [`/v1/organization/${org.orgId}/roles/${role.id}`, 'name, permissions'],
        [`/v1/filter/${filter.id}`, 'name, filter'],
        [`/v1/api-keys/provider-key/${providerKey.id}`, 'name, secret, baseUrl, weight'],
      ] as const) {
        expect(await refused(await send('PATCH', path, {}))).toBe(`nothing to change: send at least one of ${fields}`)
      }
      expect(await snapshot()).toBe(before)
    })
  })
}
