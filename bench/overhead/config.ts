/**
 * The suite's knobs, all from the environment; the defaults are the minimums the overhead targets ask for, sized
 * so a whole run stays within about five minutes on two cores.
 */

export function integer(name: string, fallback: number, min = 1): number {
  const raw = process.env[name]
  if (raw === undefined || raw === '') return fallback
  const value = Number(raw)
  if (!Number.isInteger(value) || value < min) throw new Error(`${name} must be an integer >= ${min}, got "${raw}"`)
  return value
}

export interface Settings {
  /** Where the run keeps its data directories, configs and logs (run.sh makes one and removes it). */
  workDir: string
  /** The repository root: dist/gw is taken from there and the results file written under it. */
  repoRoot: string
  fakeLatencyMs: number
  warmupSeconds: number
  sequential: { requests: number; warmup: number; block: number }
  saturation: { connections: number; threads: number; seconds: number; warmupSeconds: number }
  /** `seconds` and `warmupSeconds` are per round; the arms take turns, `rounds` times. */
  fixedRate: { rps: number; seconds: number; rounds: number; warmupSeconds: number }
  coldStart: { runs: number }
  burst: { requests: number; concurrency: number }
  nginxWorkers: number
}

export function loadSettings(repoRoot: string): Settings {
  const workDir = process.env.BENCH_WORK_DIR
  if (!workDir) throw new Error('BENCH_WORK_DIR must name a scratch directory (run.sh sets it)')
  return {
    workDir,
    repoRoot,
    fakeLatencyMs: integer('FAKE_LATENCY_MS', 0, 0),
    // Every arm under load this long before anything is timed, so the JIT has compiled what is timed.
    warmupSeconds: integer('WARMUP_SECONDS', 8, 0),
    sequential: {
      requests: integer('SEQ_REQUESTS', 2_000),
      warmup: integer('SEQ_WARMUP', 200, 0),
      // Arms take turns in blocks of this many requests, so a noisy minute hurts them all alike.
      block: integer('SEQ_BLOCK', 100),
    },
    saturation: {
      connections: integer('SAT_CONNECTIONS', 64),
      threads: integer('SAT_THREADS', 2),
      seconds: integer('SAT_SECONDS', 10),
      warmupSeconds: integer('SAT_WARMUP_SECONDS', 2, 0),
    },
    fixedRate: {
      rps: integer('RATE_RPS', 1_000),
      seconds: integer('RATE_SECONDS', 4),
      rounds: integer('RATE_ROUNDS', 3),
      warmupSeconds: integer('RATE_WARMUP_SECONDS', 1, 0),
    },
    coldStart: { runs: integer('COLD_RUNS', 10) },
    burst: { requests: integer('BURST_REQUESTS', 10_000), concurrency: integer('BURST_CONCURRENCY', 64) },
    // One worker by default: gw, Portkey and the fake provider each serve from one event loop too.
    nginxWorkers: integer('NGINX_WORKERS', 1),
  }
}
