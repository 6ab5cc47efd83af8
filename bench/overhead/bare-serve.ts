/**
 * The floor for a cold start: a `Bun.serve` that answers the health check and nothing else, compiled
 * into an executable as gw is (`bun build --compile`) and started the same way, so gw's start-up is
 * compared with what the runtime alone takes on the same machine in the same run.
 *
 *   GW_HOST=127.0.0.1 GW_PORT=9002 ./bare-serve
 */
const port = Number(process.env.GW_PORT ?? 0)
if (!Number.isInteger(port) || port <= 0) throw new Error('GW_PORT is required')

Bun.serve({
  hostname: process.env.GW_HOST ?? '127.0.0.1',
  port,
  development: false,
  fetch: (request) =>
    new URL(request.url).pathname === '/healthcheck'
      ? Response.json({ status: 'ok' })
      : new Response('not found', { status: 404 }),
})

export {}
