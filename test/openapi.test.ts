import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { ROUTE_CATALOGUE, toRouterPath } from '../src/modules/catalogue'
import { createHarness, type Harness } from './support/harness'

let h: Harness
beforeAll(async () => {
  h = await createHarness()
})
afterAll(() => h.close())

type Operation = { 'x-permission'?: string; security?: unknown[] }

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

  test('serves no viewer that would load scripts from a CDN', async () => {
    expect((await h.request('GET', '/openapi')).status).toBe(404)
  })
})
