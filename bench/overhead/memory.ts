/** Scenario (d)'s instrument: a process's resident memory, VmRSS from /proc/<pid>/status. */
import { readFileSync } from 'node:fs'

export function rssMiB(pid: number): number {
  const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!match) throw new Error(`no VmRSS for pid ${pid}`)
  return Number(match[1]) / 1024
}

/** Samples a process's RSS every `intervalMs` until stopped; `stop()` answers the highest seen. */
export class RssPeak {
  private peak = 0
  private readonly timer: ReturnType<typeof setInterval>

  constructor(
    private readonly pid: number,
    intervalMs = 50,
  ) {
    this.sample()
    this.timer = setInterval(() => this.sample(), intervalMs)
  }

  private sample(): void {
    this.peak = Math.max(this.peak, rssMiB(this.pid))
  }

  stop(): number {
    clearInterval(this.timer)
    this.sample()
    return this.peak
  }
}
