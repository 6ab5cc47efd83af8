import type { Server } from 'bun'
import type { App, Services } from './app'
import consolePage from './console/index.html'
import { answerFailure } from './error-answers'
import { DISPATCH_PATHS, PROVIDER_APIS } from './gateway/dispatch-routes'
import type { Logger } from './log'

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
 * Serves the app with Bun (the one runtime adapter). The provider-style POST paths go straight from
 * Bun's router to the gateway's own handler; everything else goes to the Elysia app. Elysia hands
 * handlers `server` from `app.server`, which only its own `listen` sets; setting it here gives them the
 * peer address and the per-request idle-timeout control while the server stays ours to configure.
 *
 * Both handlers answer their own errors; the server's `error` is the net under them. Development mode
 * is off whatever NODE_ENV says: in it Bun answers an uncaught error with an HTML page that shows the
 * error's message and our source to the caller.
 */
export function serve(app: App, services: Pick<Services, 'dispatch' | 'providerApi'>, options: ServeOptions): Server<undefined> {
  type Handler = (request: Request, server: Server<undefined>) => Promise<Response>
  const routes: Record<string, Partial<Record<'GET' | 'POST' | 'DELETE', Handler>>> = {}
  for (const path of DISPATCH_PATHS) routes[path] = { POST: services.dispatch(path) }
  for (const api of PROVIDER_APIS) routes[api.path] = { ...routes[api.path], [api.method]: services.providerApi(api) }
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    idleTimeout: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    development: false,
    routes: { ...routes, ...CONSOLE_ROUTES },
    fetch: app.fetch,
    // The request is not known here: the answer takes the management API's shape.
    error: (error) => answerFailure(options.log, 'management', error),
  })
  app.server = server
  return server
}
