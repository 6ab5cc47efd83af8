import { Elysia } from 'elysia'
import { catalogueOf, ROUTE_CATALOGUE, routeKey, toRouterPath } from '../auth/catalogue'
import { ApiError } from '../errors'
import { type Authz, CATALOGUED } from '../http/authz'
import { ErrorEnvelope } from '../http/schema'

interface RegisteredRoute {
  method: string
  path: string
  hooks?: { detail?: Record<string, unknown> }
}

/**
 * Checks the implemented routes against the catalogue, and writes each catalogued route's permission
 * into its OpenAPI detail (the document is built from the routes when first asked for). A route the
 * catalogue holds must take its permission from it, and a route that says it does must be there. A
 * mismatch is a programming error, so it stops start-up (and with it every test run) instead of shipping.
 */
export function checkAgainstCatalogue(routes: readonly RegisteredRoute[]): void {
  for (const route of routes) {
    const key = routeKey(route.method, route.path)
    const permission = catalogueOf(route.method, route.path)
    const detail = route.hooks?.detail
    if (detail?.[CATALOGUED] !== true) {
      if (permission !== undefined) throw new Error(`${key} is in the route catalogue but is not registered as catalogued`)
      continue
    }
    if (permission === undefined) throw new Error(`${key} is registered as catalogued but is not in the route catalogue`)
    delete detail[CATALOGUED]
    detail['x-permission'] = permission
  }
}

const notImplemented = (method: string, path: string) => (): never => {
  throw new ApiError('not_implemented', `${method} ${path} is not implemented yet`)
}

/**
 * Registers every catalogue route that no module implements: it authenticates and authorises like a
 * real route, then answers 501 `not_implemented`.
 */
export function catalogueStubs(authz: Authz, implemented: readonly RegisteredRoute[]) {
  const done = new Set(implemented.map((r) => routeKey(r.method, r.path)))
  const missing = ROUTE_CATALOGUE.filter(([m, p]) => !done.has(routeKey(m, toRouterPath(p))))
  const stubs = new Elysia({ name: 'catalogue-stubs' }).use(authz)
  for (const [method, path] of missing) {
    stubs.route(method, toRouterPath(path), notImplemented(method, path), {
      catalogued: true,
      response: { 501: ErrorEnvelope },
      detail: { summary: 'Not implemented yet: answers 501 not_implemented after the permission check' },
    })
  }
  return stubs
}
