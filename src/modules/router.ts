import { Elysia } from 'elysia'
import { ApiError } from '../errors'
import type { Authz } from '../http/authz'
import { ROUTE_CATALOGUE, routeKey, toRouterPath } from './catalogue'

interface RegisteredRoute {
  method: string
  path: string
  hooks?: { detail?: Record<string, unknown> }
}

/**
 * Checks the implemented routes against the catalogue: a handler must declare exactly the permission
 * the catalogue gives its route, and a permission-gated route must be in the catalogue. A mismatch is
 * a programming error, so it stops start-up (and with it every test run) instead of shipping.
 */
export function checkAgainstCatalogue(routes: readonly RegisteredRoute[]): void {
  const catalogue = new Map(ROUTE_CATALOGUE.map(([m, p, perm]) => [routeKey(m, toRouterPath(p)), perm]))
  for (const route of routes) {
    const declared = route.hooks?.detail?.['x-permission']
    if (declared === undefined) continue
    const key = routeKey(route.method, route.path)
    const expected = catalogue.get(key)
    if (expected === undefined) throw new Error(`${key} declares a permission but is not in the route catalogue`)
    if (declared !== expected) throw new Error(`${key} declares ${String(declared)}; the catalogue says ${expected}`)
  }
}

const notImplemented = (method: string, path: string) => (): never => {
  throw new ApiError('not_implemented', `${method} ${path} is not implemented yet`)
}

/**
 * Registers, with its permission, every catalogue route that no module implements: it authenticates
 * and authorises like a real route, then answers 501 `not_implemented`.
 */
export function catalogueStubs(authz: Authz, implemented: readonly RegisteredRoute[]) {
  const done = new Set(implemented.map((r) => routeKey(r.method, r.path)))
  const missing = ROUTE_CATALOGUE.filter(([m, p]) => !done.has(routeKey(m, toRouterPath(p))))
  const stubs = new Elysia({ name: 'catalogue-stubs' }).use(authz)
  for (const [method, path, permission] of missing) {
    stubs.route(method, toRouterPath(path), notImplemented(method, path), { permission })
  }
  return stubs
}
