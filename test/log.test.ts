import { expect, test } from 'bun:test'
import { join } from 'node:path'

/**
 * gw's log lines go to stderr's descriptor directly (src/log.ts), not through `process.stderr`, whose
 * stream costs a start about 2 ms to build: each line must still arrive whole and in order, one JSON
 * object per line, a line longer than a pipe holds at once included, with stdout left to the CLI.
 */
test('log lines reach stderr whole and in order, one JSON object a line', async () => {
  const logModule = join(import.meta.dir, '..', 'src', 'log.ts')
  const script = `
    const { createLogger } = await import(${JSON.stringify(logModule)})
    const log = createLogger('info')
    log.debug('not at this level')
    log.info('first', { n: 1 })
    log.warn('long', { text: 'x'.repeat(300_000) })
    log.error('last', { quote: 'a "quoted" line\\nwith a newline' })
    console.log('stdout is the CLI answer')
  `
  const child = Bun.spawn([process.execPath, '-e', script], { stdout: 'pipe', stderr: 'pipe' })
  const [out, err, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  expect(code).toBe(0)
  expect(out).toBe('stdout is the CLI answer\n')
  const lines = err.split('\n')
  expect(lines.pop()).toBe('')
  const entries = lines.map((line) => JSON.parse(line) as { level: string; message: string; text?: string; quote?: string })
  expect(entries.map((entry) => [entry.level, entry.message])).toEqual([
    ['info', 'first'],
    ['warn', 'long'],
    ['error', 'last'],
  ])
  expect(entries[1]?.text).toHaveLength(300_000)
  expect(entries[2]?.quote).toBe('a "quoted" line\nwith a newline')
})
