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

    test('an object whose toString is no function, where text belongs, is a 400 naming the field, never a 500', async () => {
      const before = await snapshot()
      const unprintable = { toString: 'x' }
      expect(await refused(await send('POST', '/v1/team', { name: unprintable }))).toContain('invalid body at "name"')
      expect(await refused(await send('POST', '/v1/filter', { name: unprintable, filter: 'all' }))).toContain('"name"')
      const login = await h.request('POST', '/v1/auth/login', { body: JSON.stringify({ email: unprintable, password: 'x' }) })
      expect(await refused(login)).toContain('"email"')
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
        [
          `/v1/api-keys/provider-key/${providerKey.id}`,
          'name, secret, baseUrl, weight, or a setting of the key (region, accessKeyId, apiVersion, project, location, models)',
        ],
      ] as const) {
        expect(await refused(await send('PATCH', path, {}))).toBe(`nothing to change: send at least one of ${fields}`)
      }
      expect(await snapshot()).toBe(before)
    })

    test('every list route refuses a page that is not a whole number in range with a 400 naming it, never a 500', async () => {
      // The list routes are found by their schemas: a whole-number limit (a budget's limit is an amount), an offset or a cursor.
      type Field = { type?: string; anyOf?: Field[] }
      type Fields = { properties?: Record<string, Field | undefined>; required?: string[] }
      // Elysia reads a whole number from text too: it holds the integer as one branch of an anyOf.
      const whole = (field: Field | undefined): boolean => field?.type === 'integer' || (field?.anyOf ?? []).some(whole)
      const pages = (schema: Fields | undefined) =>
        whole(schema?.properties?.limit) || schema?.properties?.offset !== undefined || schema?.properties?.cursor !== undefined
      const paged = h.app.routes.flatMap((route) => {
        const hooks = route.hooks as { query?: Fields; body?: Fields }
        const where = pages(hooks.query) ? 'query' : pages(hooks.body) ? 'body' : undefined
        if (!where) return []
        const schema = (where === 'query' ? hooks.query : hooks.body) as Fields
        const names = ['limit', 'offset'].filter((name) => schema.properties?.[name] !== undefined)
        // Fields the body needs besides the page (a property name) get a plain word.
        const base = Object.fromEntries((schema.required ?? []).map((name) => [name, 'x']))
        return [{ method: route.method, path: route.path.replace(':id', org.orgId), where, names, base }]
      })
      expect(paged.map((r) => `${r.method} ${r.path.replace(org.orgId, ':id')}`)).toEqual(
        expect.arrayContaining([
          'GET /v1/organization/:id/audit',
          'GET /v1/budget/breaches',
          'POST /v1/request/query',
          'POST /v1/session/query',
          'POST /v1/metrics/propertyAggregation',
          'POST /v1/mcp/tool-calls',
          'POST /v1/security/pii/recent',
        ]),
      )
      const wrong: string[] = []
      for (const route of paged)
        for (const name of route.names)
          for (const value of ['1.5', '0.5', '-1', '1e308', '99999999999999999999', 'abc', 'Infinity', '']) {
            const response =
              route.where === 'query'
                ? await send(route.method, `${route.path}?${name}=${value}`)
                : await send(route.method, route.path, { ...route.base, [name]: Number(value) || value })
            const message = response.status === 400 ? ((await response.json()) as Envelope).error?.message : undefined
            if (!message?.includes(`${name} must be a whole number from`))
              wrong.push(`${route.method} ${route.path} ${name}=${value}: ${response.status} ${message ?? ''}`)
          }
      expect(wrong).toEqual([])
    })

    test('a forged cursor is a 400 on every route that pages by cursor, never a query the database refuses', async () => {
      type Fields = { properties?: Record<string, unknown> }
      const byCursor = h.app.routes.flatMap((route) => {
        const hooks = route.hooks as { query?: Fields; body?: Fields }
        const where = hooks.query?.properties?.cursor ? 'query' : hooks.body?.properties?.cursor ? 'body' : undefined
        return where ? [{ method: route.method, path: route.path.replace(':id', org.orgId), where }] : []
      })
      expect(byCursor.length).toBeGreaterThanOrEqual(4)
      const forged = [
        '[99999999999999999999,"x"]',
        '[8640000000000001,"x","desc"]',
        '[1,"a\\u0000b","desc"]',
        '[1,"a\\u0000b"]',
        '[-1,"x"]',
        '{}',
        'not json',
      ].map((text) => Buffer.from(text).toString('base64url'))
      const wrong: string[] = []
      for (const route of byCursor)
        for (const cursor of forged) {
          const response =
            route.where === 'query'
              ? await send(route.method, `${route.path}?cursor=${cursor}`)
              : await send(route.method, route.path, { cursor })
          const message = response.status === 400 ? ((await response.json()) as Envelope).error?.message : undefined
          if (!message?.startsWith('cursor is not one this API gave out'))
            wrong.push(`${route.method} ${route.path} cursor=${cursor}: ${response.status} ${message ?? ''}`)
        }
      expect(wrong).toEqual([])
    })
  })
}
