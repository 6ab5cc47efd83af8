import type { Server } from 'bun'
import type { App } from './app'
import consolePage from './console/index.html'
import { answerFailure } from './error-answers'
import { DISPATCH_PATHS, PROVIDER_APIS } from './gateway/dispatch-routes'
import type { Logger } from './log'
import type { Serving } from './serving'

/**
 * The console, bundled by Bun from its HTML entry (its script and style become hashed assets that Bun
 * serves beside it, from inside the executable); `/` leads to it.
 */
const CONSOLE_ROUTES = {
  '/': Response.redirect('/console', 302),
  '/console': consolePage,
}

export interface ServeOptions {
  hostname: string
  port: number
  idleTimeoutSeconds?: number
  maxRequestBodySize?: number
  log: Logger
}

/**
 * The management API's Elysia app, or how to build it. `gw serve` hands the builder: the app and the
 * route modules it imports (about 225 routes, their models) are the larger part of start-up, and the
 * health check and the gateway's paths answer without them. The first request for anything else builds
 * it and waits for it, as do those that arrive meanwhile.
 */
export type ManagementApp = App | (() => Promise<App>)

type Handler = (request: Request, server: Server<undefined>) => Response | Promise<Response>

/** Elysia hands handlers `server` from `app.server`, which only its own `listen` sets; gw's server is set there. */
function managementHandler(builder: () => Promise<App>, log: Logger): Handler {
  let app: App | undefined
  let building: Promise<App> | undefined
  return (request, server) => {
    if (app) return app.fetch(request)
    building ??= builder().then(
      (built) => {
        built.server = server
        app = built
        return built
      },
      (error: unknown) => {
        // A programming error (the route catalogue's check, say): every management request fails alike.
        log.error('the management API could not be built', { error: String(error) })
        building = undefined
        throw error
      },
    )
    return building.then((built) => built.fetch(request))
  }
}

/**
 * Serves gw with Bun (the one runtime adapter). The provider-style POST paths go straight from Bun's
 * router to the gateway's own handler, and the health check to the health service; everything else goes
 * to the management API's Elysia app.
 *
 * Both handlers answer their own errors; the server's `error` is the net under them. Development mode
 * is off whatever NODE_ENV says: in it Bun answers an uncaught error with an HTML page that shows the
 * error's message and our source to the caller.
 */
export function serve(
  app: ManagementApp,
  services: Pick<Serving, 'dispatch' | 'providerApi' | 'health'>,
  options: ServeOptions,
): Server<undefined> {
  const routes: Record<string, Partial<Record<'GET' | 'POST' | 'DELETE', Handler>>> = {
    '/healthcheck': {
      GET: async () => {
        const { httpStatus, report } = await services.health.answer()
        return Response.json(report, { status: httpStatus })
      },
    },
  }
  for (const path of DISPATCH_PATHS) routes[path] = { POST: services.dispatch(path) }
  for (const api of PROVIDER_APIS) routes[api.path] = { ...routes[api.path], [api.method]: services.providerApi(api) }
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    idleTimeout: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    development: false,
    routes: { ...routes, ...CONSOLE_ROUTES },
    fetch: typeof app === 'function' ? managementHandler(app, options.log) : app.fetch,
    // The request is not known here: the answer takes the management API's shape.
    error: (error) => answerFailure(options.log, 'management', error),
  })
  if (typeof app !== 'function') app.server = server
  return server
}
