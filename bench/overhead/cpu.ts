/**
 * Where the CPU went while an arm ran at the fixed rate: for each thread of the processes involved (the
 * arm's server and its children, the fake provider, this client), the time it ran and the time it
 * waited, runnable, for a core (the kernel's /proc/<pid>/task/<tid>/schedstat). On a machine with few
 * cores those waits lengthen the tail when the bench's processes all want a core at once.
 */
import { readdirSync, readFileSync } from 'node:fs'

/** Which of the watched processes a thread belongs to. */
export type Role = 'server' | 'provider' | 'client'

export interface ThreadTime {
  role: Role
  /** The thread's name (`comm`); threads of one role with the same name are summed. */
  thread: string
  cpuMs: number
  waitMs: number
}

export interface CpuUse {
  seconds: number
  threads: ThreadTime[]
}

/** Reads a small /proc file, or nothing if the process or thread has gone meanwhile. */
function readProc(path: string): string | undefined {
  try {
    return readFileSync(path, 'utf8')
  } catch {
    return undefined
  }
}

/** The process and every process below it (nginx's workers are children of the pid the suite started). */
function processTree(root: number): number[] {
  const parentOf = new Map<number, number>()
  for (const entry of readdirSync('/proc')) {
    const stat = /^\d+$/.test(entry) ? readProc(`/proc/${entry}/stat`) : undefined
    // The parent pid is the second field after the name, which is in parentheses and may hold spaces.
    if (stat) parentOf.set(Number(entry), Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]))
  }
  const tree = [root]
  for (let i = 0; i < tree.length; i++) for (const [pid, parent] of parentOf) if (parent === tree[i]) tree.push(pid)
  return tree
}

type Sample = Map<string, ThreadTime>

/** The arm's server (with its children) and the provider, by pid; the client is this process. */
export interface Watched {
  server: number
  /** Absent when the provider is the server (the direct arm). */
  provider?: number
}

function sample(watched: Watched): Sample {
  const out: Sample = new Map()
  // This process's own children are the servers, so the client is the one process without its tree.
  const roles: Array<[Role, number[]]> = [
    ['server', processTree(watched.server)],
    ['client', [process.pid]],
  ]
  if (watched.provider !== undefined) roles.push(['provider', processTree(watched.provider)])
  for (const [role, pids] of roles) {
    for (const pid of pids) {
      const tids = readProc(`/proc/${pid}/stat`) === undefined ? [] : readdirSync(`/proc/${pid}/task`)
      for (const tid of tids) {
        const name = readProc(`/proc/${pid}/task/${tid}/comm`)?.trim()
        const [ranNs, waitedNs] = (readProc(`/proc/${pid}/task/${tid}/schedstat`) ?? '').split(' ').map(Number)
        if (name === undefined || ranNs === undefined || waitedNs === undefined) continue
        out.set(`${pid}/${tid}`, { role, thread: name, cpuMs: ranNs / 1e6, waitMs: waitedNs / 1e6 })
      }
    }
  }
  return out
}

/** Started when the measured part begins; `stop()` answers what each thread used since. */
export class CpuWatch {
  private readonly before: Sample
  private readonly started = performance.now()

  constructor(private readonly watched: Watched) {
    this.before = sample(watched)
  }

  stop(): CpuUse {
    const after = sample(this.watched)
    const summed = new Map<string, ThreadTime>()
    for (const [key, now] of after) {
      const then = this.before.get(key)
      const group = `${now.role}/${now.thread}`
      const total = summed.get(group) ?? { role: now.role, thread: now.thread, cpuMs: 0, waitMs: 0 }
      total.cpuMs += now.cpuMs - (then?.cpuMs ?? 0)
      total.waitMs += now.waitMs - (then?.waitMs ?? 0)
      summed.set(group, total)
    }
    return { seconds: (performance.now() - this.started) / 1000, threads: [...summed.values()] }
  }
}

/** Two stretches of watching as one: times summed by role and thread. */
export function addUse(a: CpuUse | undefined, b: CpuUse): CpuUse {
  if (!a) return b
  const threads = new Map(a.threads.map((t) => [`${t.role}/${t.thread}`, { ...t }]))
  for (const t of b.threads) {
    const total = threads.get(`${t.role}/${t.thread}`)
    if (total) {
      total.cpuMs += t.cpuMs
      total.waitMs += t.waitMs
    } else threads.set(`${t.role}/${t.thread}`, { ...t })
  }
  return { seconds: a.seconds + b.seconds, threads: [...threads.values()] }
}

/** A role's totals over all its threads. */
export function roleTotal(use: CpuUse, role: Role): { cpuMs: number; waitMs: number } {
  let cpuMs = 0
  let waitMs = 0
  for (const t of use.threads) {
    if (t.role !== role) continue
    cpuMs += t.cpuMs
    waitMs += t.waitMs
  }
  return { cpuMs, waitMs }
}
