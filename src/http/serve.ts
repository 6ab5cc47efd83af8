import type { Server } from 'bun'
import type { App, Services } from '../app'
import { DISPATCH_PATHS } from '../gateway/http'

export interface ServeOptions {
  hostname: string
  port: number
  idleTimeoutSeconds?: number
  maxRequestBodySize?: number
}

/**
 * Serves the app with Bun (the one runtime adapter). The provider-style POST paths go straight from
 * Bun's router to the gateway's own handler; everything else goes to the Elysia app. Elysia hands
 * handlers `server` from `app.server`, which only its own `listen` sets; setting it here gives them the
 * peer address and the per-request idle-timeout control while the server stays ours to configure.
 */
export function serve(app: App, services: Pick<Services, 'dispatch'>, options: ServeOptions): Server<undefined> {
  const routes = Object.fromEntries(
    DISPATCH_PATHS.map((path) => {
      const handle = services.dispatch(path)
      return [path, { POST: (request: Request, server: Server<undefined>) => handle(request, server) }]
    }),
  )
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    idleTimeout: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    routes,
    fetch: app.fetch,
  })
  app.server = server
  return server
}
