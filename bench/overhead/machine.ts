/** The facts a reader needs to weigh the figures: hardware, kernel and every program's version. */
import { readFileSync } from 'node:fs'
import { cpus, loadavg, release, totalmem } from 'node:os'
import { join } from 'node:path'
import { portkeyDir } from './arms'
import { gwBinary } from './gw'

/** What the machine is and how busy it was: enough for a run that starts only gw and Bun's own servers. */
export interface HostFacts {
  cpu: string
  cores: number
  memoryGiB: number
  kernel: string
  debian: string
  bun: string
  loadAtStart: string
  /** Share of all cores busy during one second before the run started anything: other people's work. */
  busyBeforeStart: number
}

export interface MachineFacts extends HostFacts {
  node: string
  nginx: string
  wrk: string
  portkey: string
  honoNodeServer: string
  gw: string
}

/** First line a program prints about itself, from stdout or stderr (nginx -v and wrk -v differ). */
function firstLine(command: string[]): string {
  const result = Bun.spawnSync(command, { stdout: 'pipe', stderr: 'pipe' })
  const text = `${result.stdout.toString()}\n${result.stderr.toString()}`.trim()
  return text.split('\n')[0]?.trim() ?? 'unknown'
}

const packageVersion = (dir: string) =>
  (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string }).version

export const formatLoad = () =>
  loadavg()
    .map((n) => n.toFixed(2))
    .join(' / ')

/** Busy and total jiffies over all cores, from the first line of /proc/stat. */
function cpuTimes(): { busy: number; total: number } {
  const fields = (readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '').trim().split(/\s+/).slice(1).map(Number)
  const total = fields.reduce((sum, n) => sum + n, 0)
  // Fields 4 and 5 are idle and iowait.
  return { busy: total - (fields[3] ?? 0) - (fields[4] ?? 0), total }
}

async function busyShare(ms: number): Promise<number> {
  const before = cpuTimes()
  await Bun.sleep(ms)
  const after = cpuTimes()
  return (after.busy - before.busy) / Math.max(1, after.total - before.total)
}

export async function hostFacts(): Promise<HostFacts> {
  return {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: totalmem() / 1024 ** 3,
    kernel: release(),
    debian: readFileSync('/etc/debian_version', 'utf8').trim(),
    bun: Bun.version,
    loadAtStart: formatLoad(),
    busyBeforeStart: await busyShare(1_000),
  }
}

/** The line `ab.ts` prints before it starts anything. */
export const describeHost = (f: HostFacts): string =>
  `${f.cpu}, ${f.cores} cores, ${f.memoryGiB.toFixed(1)} GiB; Linux ${f.kernel}, Debian ${f.debian}; Bun ${f.bun}; load ${f.loadAtStart}; ${(f.busyBeforeStart * 100).toFixed(0)} % of the cores busy the second before`

export async function machineFacts(repoRoot: string): Promise<MachineFacts> {
  const host = await hostFacts()
  return {
    ...host,
    node: firstLine(['node', '--version']),
    nginx: firstLine(['nginx', '-v']).replace('nginx version: ', ''),
    wrk: firstLine(['wrk', '-v']).replace(/ Copyright.*/, ''),
    portkey: packageVersion(portkeyDir),
    honoNodeServer: packageVersion(join(import.meta.dir, 'node_modules', '@hono', 'node-server')),
    gw: firstLine([gwBinary(repoRoot), '--version']),
  }
}
