import type { Subprocess } from 'bun'

/**
 * A redis-server of the test's own on a free loopback port, with nothing persisted, so a test can
 * kill it and start it again on the same port. The shared Redis other suites use is never touched.
 */
export interface OwnRedis {
  url: string
  port: number
  /** SIGKILL, as a crash or an OOM kill would: no goodbye to the clients. */
  kill(): Promise<void>
  /** SIGSTOP: the server keeps its connections open and answers nothing, as a stalled or partitioned one does. */
  pause(): void
  /** SIGCONT: it answers again, what it was sent in the meantime included. */
  resume(): void
  /** A fresh, empty server on the same port. */
  restart(): Promise<void>
  /** Whether the server is up (not killed since it last started). */
  readonly running: boolean
  stop(): Promise<void>
}

function freePort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } })
  const { port } = listener
  listener.stop(true)
  return port
}

/** Whether something accepts connections on a loopback port. */
export async function accepts(port: number): Promise<boolean> {
  try {
    const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {} } })
    socket.end()
    return true
  } catch {
    return false
  }
}

export async function startOwnRedis(): Promise<OwnRedis> {
  const port = freePort()
  let child: Subprocess | undefined
  const start = async () => {
    child = Bun.spawn(['redis-server', '--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdout: 'ignore',
      stderr: 'ignore',
    })
    for (let i = 0; i < 250; i++) {
      if (await accepts(port)) return
      await Bun.sleep(20)
    }
    throw new Error(`redis-server did not listen on port ${port} within 5 s`)
  }
  const kill = async () => {
    child?.kill('SIGKILL')
    await child?.exited
  }
  await start()
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    kill,
    pause: () => child?.kill('SIGSTOP'),
    resume: () => child?.kill('SIGCONT'),
    restart: start,
    stop: kill,
    get running() {
      return child?.exitCode === null && !child.killed
    },
  }
}

/** Waits for `condition`, polling; throws with `what` after `timeoutMs`. */
export async function eventually(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 5_000): Promise<void> {
  const deadline = performance.now() + timeoutMs
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`)
    await Bun.sleep(10)
  }
}
