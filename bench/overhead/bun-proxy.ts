/**
 * The floor for any gateway written for Bun: a reverse proxy of a few lines that forwards the body and
 * hands back the upstream's answer as it comes (streams included), doing nothing else. Set beside gw,
 * it tells what of gw's figures is the runtime's and what is gw's own work.
 *
 *   BUN_PROXY_PORT=9001 UPSTREAM=http://127.0.0.1:9000 bun bench/overhead/bun-proxy.ts
 */
const port = Number(process.env.BUN_PROXY_PORT ?? 0)
const upstream = process.env.UPSTREAM ?? ''
if (!Number.isInteger(port) || !upstream.startsWith('http')) throw new Error('BUN_PROXY_PORT and UPSTREAM are required')

Bun.serve({
  hostname: '127.0.0.1',
  port,
  // As gw serves (a compiled program is otherwise in development mode); it measured the same either way.
  development: false,
  async fetch(request) {
    const url = new URL(request.url)
    const answer = await fetch(`${upstream}${url.pathname}`, {
      method: request.method,
      headers: { 'content-type': 'application/json', authorization: request.headers.get('authorization') ?? '' },
      body: request.method === 'POST' ? await request.text() : undefined,
    })
    return new Response(answer.body, {
      status: answer.status,
      headers: { 'content-type': answer.headers.get('content-type') ?? '' },
    })
  },
})

export {}
