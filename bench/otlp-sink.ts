// A module, not a script: its names stay its own.
export {}

/**
 * A collector stand-in for benchmarks: takes OTLP/HTTP trace exports on loopback and counts them, so
 * gw's exporter has somewhere to send at full rate without a real collector's own cost in the way.
 *
 *   bun bench/otlp-sink.ts <port>     (prints the exports and spans it took when stopped)
 */
const port = Number(process.argv[2] ?? 4318)
let exports = 0
let spans = 0
const SPAN_ID = /"spanId"/g

const server = Bun.serve({
  hostname: '127.0.0.1',
  port,
  async fetch(request) {
    const body = await request.text()
    exports += 1
    spans += body.match(SPAN_ID)?.length ?? 0
    return Response.json({ partialSuccess: {} })
  },
})
console.error(`otlp sink on http://127.0.0.1:${server.port}`)
for (const signal of ['SIGTERM', 'SIGINT'] as const)
  process.on(signal, () => {
    console.log(JSON.stringify({ exports, spans }))
    process.exit(0)
  })
