import type { Server } from 'bun'
import type { App } from '../app'

export interface ServeOptions {
  hostname: string
  port: number
  idleTimeoutSeconds?: number
  maxRequestBodySize?: number
}

/**
 * Serves the app with Bun (the one runtime adapter). Elysia hands handlers `server` from `app.server`,
 * which only its own `listen` sets; setting it here gives the gateway the peer address and the
 * per-request idle-timeout control while the server stays ours to configure.
 */
export function serve(app: App, options: ServeOptions): Server<undefined> {
  const server = Bun.serve({
    hostname: options.hostname,
    port: options.port,
    idleTimeout: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    fetch: app.fetch,
  })
  app.server = server
  return server
}
