import { serve } from '../../src/serve'
import type { Harness } from './harness'

/** Serves a harness's app on a loopback port, as `gw serve` does (dispatch paths included), for clients that speak HTTP (the SDKs). */
export function serveHarness(
  h: Harness,
  options: { idleTimeoutSeconds?: number; maxRequestBodySize?: number } = {},
): { url: string; stop(): Promise<void> } {
  const server = serve(h.app, h.services, {
    hostname: '127.0.0.1',
    port: 0,
    idleTimeoutSeconds: options.idleTimeoutSeconds,
    maxRequestBodySize: options.maxRequestBodySize,
    log: h.deps.log,
  })
  return { url: `http://127.0.0.1:${server.port}`, stop: () => server.stop(true) }
}
