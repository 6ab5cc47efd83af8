import { VERSION } from '../../version'

export type ComponentState = 'ok' | 'degraded' | 'down' | 'not_configured'

export interface HealthReport {
  status: 'ok' | 'degraded' | 'down'
  version: string
  uptimeSeconds: number
  components: Record<string, ComponentState>
}

/** A component is checked by a probe that resolves when healthy; `required` ones take the server down with them. */
export interface HealthProbe {
  name: string
  required: boolean
  check(): Promise<ComponentState>
}

const PROBE_TIMEOUT_MS = 2_000

async function run(probe: HealthProbe): Promise<ComponentState> {
  let timer: ReturnType<typeof setTimeout> | undefined
  const timeout = new Promise<ComponentState>((resolve) => {
    timer = setTimeout(() => resolve('down'), PROBE_TIMEOUT_MS)
  })
  try {
    return await Promise.race([probe.check().catch((): ComponentState => 'down'), timeout])
  } finally {
    clearTimeout(timer)
  }
}

export class HealthService {
  private readonly startedAt = Date.now()

  constructor(private readonly probes: readonly HealthProbe[]) {}

  async report(): Promise<HealthReport> {
    const states = await Promise.all(this.probes.map(run))
    const components: Record<string, ComponentState> = {}
    let status: HealthReport['status'] = 'ok'
    this.probes.forEach((probe, i) => {
      const state = states[i] ?? 'down'
      components[probe.name] = state
      if (state === 'down' && probe.required) status = 'down'
      else if ((state === 'down' || state === 'degraded') && status === 'ok') status = 'degraded'
    })
    return { status, version: VERSION, uptimeSeconds: Math.floor((Date.now() - this.startedAt) / 1000), components }
  }
}
