import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ROUTE_CATALOGUE, toRouterPath } from '../src/auth/catalogue'
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

  test('serves no viewer that would load scripts from a CDN', async () => {
    expect((await h.request('GET', '/openapi')).status).toBe(404)
  })
})
