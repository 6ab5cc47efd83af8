/**
 * Child processes of the suite: every one is tracked, its pid appended to a file run.sh reads in its
 * trap, and all are sent SIGTERM when the suite exits however it exits, so no server outlives a run.
 */
import { appendFileSync, closeSync, mkdtempSync, openSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Subprocess } from 'bun'

const children = new Set<Subprocess>()
let pidFile: string | undefined

/** Call once at start: from then on an exit, SIGINT or SIGTERM takes the children down too. */
export function trackChildren(pidFilePath: string): void {
  pidFile = pidFilePath
  // SIGTERM, not SIGKILL: nginx's master must stay alive long enough to take its workers with it.
  process.on('exit', () => {
    for (const child of children) child.kill('SIGTERM')
  })
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.on(signal, () => void stopAll().finally(() => process.exit(130)))
}

export interface StartOptions {
  env: Record<string, string | undefined>
  /** Standard output and error both go here, for the post-mortem of a failed run. */
  logPath: string
}

export function start(command: string[], options: StartOptions): Subprocess {
  const fd = openSync(options.logPath, 'a')
  try {
    const child = Bun.spawn(command, { env: options.env, stdin: 'ignore', stdout: fd, stderr: fd })
    children.add(child)
    if (pidFile) appendFileSync(pidFile, `${child.pid}\n`)
    return child
  } finally {
    closeSync(fd)
  }
}

/**
 * Stops every child still running and reaps it, so none is left behind as an orphan; then drops the
 * pid file, so run.sh's trap never signals a pid the system has since given to someone else.
 */
export async function stopAll(): Promise<void> {
  await Promise.all([...children].map((child) => stop(child)))
  if (pidFile) rmSync(pidFile, { force: true })
}

/** Sends `signal`, waits for the exit (SIGKILL after `graceMs`) and answers the exit code. */
export async function stop(child: Subprocess, signal: NodeJS.Signals = 'SIGTERM', graceMs = 30_000): Promise<number | null> {
  child.kill(signal)
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs)
  const code = await child.exited
  clearTimeout(timer)
  children.delete(child)
  return code
}

/** A port nothing listens on right now; the tiny race until the server binds it is harmless on loopback. */
export function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = listener
  listener.stop(true)
  return port
}

/** Polls `url` until `ready` accepts an answer; throws after `timeoutMs` naming the log to read. */
export async function waitForHttp(
  url: string,
  ready: (response: Response) => boolean,
  timeoutMs: number,
  logPath: string,
): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    try {
      const response = await fetch(url)
      await response.arrayBuffer()
      if (ready(response)) return
    } catch {
      // Not listening yet.
    }
    await Bun.sleep(20)
  }
  throw new Error(`${url} was not ready within ${timeoutMs} ms; see ${logPath}`)
}

/** Runs a command to completion and answers its standard output; a failure throws with its stderr. */
export async function run(command: string[], env?: Record<string, string | undefined>): Promise<string> {
  const child = Bun.spawn(command, { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  children.add(child)
  const [stdout, stderr, code] = await Promise.all([
    new Response(child.stdout).text(),
    new Response(child.stderr).text(),
    child.exited,
  ])
  children.delete(child)
  if (code !== 0) throw new Error(`${command.join(' ')} exited ${code}: ${stderr}`)
  return stdout
}

/**
 * Runs a script of its own (not the suite) in a scratch directory: however `main` ends, its children
 * are stopped and the directory removed (BENCH_KEEP=1 keeps it); a failure is printed under `tag` and
 * sets the exit code.
 */
export async function runInScratch(tag: string, main: (workDir: string) => Promise<void>): Promise<never> {
  const workDir = mkdtempSync(join(tmpdir(), `gw-bench-${tag}.`))
  trackChildren(join(workDir, 'pids'))
  try {
    await main(workDir)
  } catch (error) {
    console.error(`[${tag}] failed:`, error instanceof Error ? error.message : error)
    process.exitCode = 1
  } finally {
    await stopAll()
    if (process.env.BENCH_KEEP === '1') console.log(`[${tag}] kept ${workDir}`)
    else rmSync(workDir, { recursive: true, force: true })
  }
  process.exit()
}
