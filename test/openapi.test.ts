import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Elysia, t } from 'elysia'
import { ROUTE_CATALOGUE, toRouterPath } from '../src/auth/catalogue'
import { DISPATCH_ROUTES } from '../src/gateway/dispatch-routes'
import { answer } from '../src/http/answer'
import { errorMapper } from '../src/http/error-mapper'
import { Ok } from '../src/http/schema'
import { silentLogger } from '../src/log'
import { createHarness, type Harness } from './support/harness'

let h: Harness
beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

type Operation = {
  'x-permission'?: string
  security?: unknown[]
  requestBody?: unknown
  responses?: Record<string, { content?: Record<string, { schema?: unknown }> }>
}

describe('GET /openapi/json', () => {
  test('lists every catalogue route with its permission', async () => {
    const response = await h.request('GET', '/openapi/json')
    expect(response.status).toBe(200)
    const doc = (await response.json()) as { paths: Record<string, Record<string, Operation>> }
    const missing = ROUTE_CATALOGUE.filter(([method, path, permission]) => {
      const openapiPath = toRouterPath(path).replace(/:(\w+)/g, '{$1}')
      return doc.paths[openapiPath]?.[method.toLowerCase()]?.['x-permission'] !== permission
    })
    expect(missing).toEqual([])
  })

  test('documents the request body and the answer of every traffic route', async () => {
    const doc = (await (await h.request('GET', '/openapi/json')).json()) as { paths: Record<string, Record<string, Operation>> }
    const traffic = ROUTE_CATALOGUE.filter(([, , p]) => p === 'traffic.read' || p === 'traffic.annotate')
    const undocumented = traffic.flatMap(([method, path]) => {
      const operation = doc.paths[toRouterPath(path).replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()]
      const answers = Object.values(operation?.responses ?? {}).filter((r) => r.content?.['application/json']?.schema)
      // The assets route takes no body (its parameters are in the path).
      const needsBody = !path.includes('/assets/')
      return answers.length === 0 || (needsBody && !operation?.requestBody) ? [`${method} ${path}`] : []
    })
    expect(undocumented).toEqual([])
  })

  test('gives every route a response schema, and every catalogue route its permission', async () => {
    const doc = (await (await h.request('GET', '/openapi/json')).json()) as { paths: Record<string, Record<string, Operation>> }
    const openapiPath = (path: string) => toRouterPath(path).replace(/:(\w+)/g, '{$1}')
    const answered = (operation: Operation | undefined) =>
      Object.values(operation?.responses ?? {}).some((r) => Object.values(r.content ?? {}).some((c) => c.schema !== undefined))
    const catalogue = ROUTE_CATALOGUE.flatMap(([method, path, permission]) => {
      const operation = doc.paths[openapiPath(path)]?.[method.toLowerCase()]
      const problems = [
        ...(answered(operation) ? [] : ['no response schema']),
        ...(operation?.['x-permission'] === permission ? [] : [`x-permission ${operation?.['x-permission']}`]),
      ]
      return problems.length > 0 ? [`${method} ${path}: ${problems.join(', ')}`] : []
    })
    expect(catalogue).toEqual([])
    const dispatch = Object.entries(DISPATCH_ROUTES).flatMap(([path, route]) => {
      const operation = doc.paths[path]?.post as (Operation & Record<string, unknown>) | undefined
      const documented =
        answered(operation) && operation?.['x-scope'] === 'gateway' && operation?.['x-wire-format'] === route.format
      return documented ? [] : [path]
    })
    expect(dispatch).toEqual([])
    // The rest (gw's own routes, sign-in, the health check, the gateway's information routes) as well.
    const unanswered = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).flatMap(([method, operation]) => (answered(operation) ? [] : [`${method} ${path}`])),
    )
    expect(unanswered).toEqual([])
  })

  test('documents the success of every built route: a 2xx with a schema, not only its errors', async () => {
    const doc = (await (await h.request('GET', '/openapi/json')).json()) as { paths: Record<string, Record<string, Operation>> }
    const schemaOf = (response: { content?: Record<string, { schema?: unknown }> } | undefined) =>
      Object.values(response?.content ?? {}).some((c) => c.schema !== undefined)
    const operations = Object.entries(doc.paths).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({ name: `${method.toUpperCase()} ${path}`, operation })),
    )
    // A catalogue route without a handler yet answers only its 501 stub: it has no success to document.
    const stub = (operation: Operation) => Object.keys(operation.responses ?? {}).join() === '501'
    const built = operations.filter(({ operation }) => !stub(operation))
    const undocumented = built
      .filter(({ operation }) => !Object.entries(operation.responses ?? {}).some(([s, r]) => /^2\d\d$/.test(s) && schemaOf(r)))
      .map(({ name }) => name)
    expect(undocumented).toEqual([])
    // Not vacuous: the document holds the routes, most of them built.
    expect(built.length).toBeGreaterThan(200)
    expect(built.map(({ name }) => name)).toContain('POST /v1/request/{requestId}/assets/{assetId}')
  })

  test("a route that answers other than its schema says so as our own 500, never as the caller's 422", async () => {
    const app = new Elysia()
      .use(errorMapper(silentLogger))
      .get('/drifted', () => answer({ count: 'many' as unknown as number }), { response: Ok(t.Object({ count: t.Number() })) })
    const response = await app.handle(new Request('http://localhost/drifted'))
    expect(response.status).toBe(500)
    expect(((await response.json()) as { error: { code: string } }).error.code).toBe('internal_error')
  })

  test('serves no viewer that would load scripts from a CDN', async () => {
    expect((await h.request('GET', '/openapi')).status).toBe(404)
  })
})
