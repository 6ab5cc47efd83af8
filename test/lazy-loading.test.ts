import { expect, test } from 'bun:test'
import { join } from 'node:path'

/**
 * Start-up evaluates only what serving needs: these packages weigh on every start (the MCP SDK's zod
 * schemas about 13 ms, Stripe's library a few)
 * and are loaded when the first call that uses them arrives, or when the configuration asks for them
 * (Postgres, Redis, metrics, tracing). Checked in a fresh process: this one has loaded them for other
 * tests.
 */
const LOADED_ON_USE = [
  '@modelcontextprotocol/sdk',
  'stripe',
  'ioredis',
  'postgres',
  'prom-client',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/exporter-trace-otlp-http',
]

/** The modules a fresh process has evaluated after importing `files` (paths from the repository's root). */
async function loadedBy(...files: string[]): Promise<string[]> {
  const root = join(import.meta.dir, '..')
  const probe = `${files.map((file) => `await import('${file}')`).join('\n')}
    console.log(JSON.stringify(Object.keys(require.cache)))`
  const child = Bun.spawn([process.execPath, '-e', probe], { cwd: root, stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  expect(err).toBe('')
  expect(code).toBe(0)
  const loaded = JSON.parse(out) as string[]
  expect(loaded.length).toBeGreaterThan(100)
  return loaded
}

const packagesIn = (loaded: string[], names: readonly string[]) =>
  names.filter((name) => loaded.some((path) => path.includes(`/node_modules/${name}/`)))

test('building the app and its server loads none of the packages kept for first use', async () => {
  expect(packagesIn(await loadedBy('./src/app.ts', './src/serve.ts'), LOADED_ON_USE)).toEqual([])
})

test('what `gw serve` starts with (runtime, serving, server) loads no Elysia and no model of the management API: the app brings them on first use', async () => {
  const loaded = await loadedBy('./src/runtime.ts', './src/serving.ts', './src/serve.ts')
  expect(packagesIn(loaded, ['elysia', ...LOADED_ON_USE])).toEqual([])
  expect(loaded.filter((path) => /\/src\/modules\/[^/]+\/model\.ts$/.test(path))).toEqual([])
})

/**
 * node:crypto costs every start of the executable about 1.5 ms to evaluate (its Hash and Hmac are
 * built on Node's stream classes), and serving needs it for none of what it does at start-up or on
 * most calls: the executable's start-up chunks must not import it. Read from a build split as
 * scripts/build.ts splits the executable's; only what the entry imports statically is evaluated at start.
 */
test('the executable evaluates no node:crypto at start-up: only chunks loaded on first use import it', async () => {
  const root = join(import.meta.dir, '..')
  const built = await Bun.build({
    entrypoints: [join(root, 'src/main.ts'), join(root, 'src/gateway/request-log/writer.worker.ts')],
    target: 'bun',
    format: 'esm',
    splitting: true,
  })
  expect(built.success).toBe(true)
  const chunks = new Map<string, string>()
  for (const output of built.outputs)
    if (output.path.endsWith('.js')) chunks.set(output.path.replace(/^.*\//, ''), await output.text())
  // `import ... from "x"` and `import "x"`, not `import("x")`: a dynamic import waits for first use.
  const staticImports = (code: string) =>
    [...code.matchAll(/(?:^|[;\n])\s*import\s*(?:[\w$*{}\s,]+from\s*)?["']([^"']+)["']/g)].map((m) => m[1] as string)
  const reached = new Set<string>()
  const builtins = new Set<string>()
  const visit = (name: string) => {
    if (reached.has(name)) return
    reached.add(name)
    for (const target of staticImports(chunks.get(name) ?? '')) {
      if (target.startsWith('./')) visit(target.slice(2))
      else builtins.add(target.replace(/^node:/, ''))
    }
  }
  visit('main.js')
  expect(reached.size).toBeGreaterThan(1)
  expect(builtins.has('fs')).toBe(true)
  expect([...builtins].filter((name) => name === 'crypto')).toEqual([])
  // The check reads what it should: some chunk loaded on first use does import it.
  expect(
    [...chunks].some(([name, code]) => !reached.has(name) && staticImports(code).some((m) => /^(node:)?crypto$/.test(m))),
  ).toBe(true)
})
