import { expect, test } from 'bun:test'
import { join } from 'node:path'

/**
 * Start-up evaluates only what serving needs: these packages weigh on every start (the MCP SDK's zod
 * schemas about 13 ms, AWS's event-stream codec with @smithy/core about 5 ms, Stripe's library a few)
 * and are loaded when the first call that uses them arrives, or when the configuration asks for them
 * (Postgres, Redis, metrics, tracing). Checked in a fresh process: this one has loaded them for other
 * tests.
 */
const LOADED_ON_USE = [
  '@modelcontextprotocol/sdk',
  'stripe',
  '@smithy/eventstream-codec',
  '@smithy/core',
  'ioredis',
  'postgres',
  'prom-client',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/exporter-trace-otlp-http',
]

test('building the app and its server loads none of the packages kept for first use', async () => {
  const root = join(import.meta.dir, '..')
  const probe = `
    await import('./src/app.ts')
    await import('./src/serve.ts')
    console.log(JSON.stringify(Object.keys(require.cache)))`
  const child = Bun.spawn([process.execPath, '-e', probe], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  expect(err).toBe('')
  expect(code).toBe(0)
  const loaded = JSON.parse(out) as string[]
  expect(loaded.length).toBeGreaterThan(100)
  const early = LOADED_ON_USE.filter((name) => loaded.some((path) => path.includes(`/node_modules/${name}/`)))
  expect(early).toEqual([])
})
