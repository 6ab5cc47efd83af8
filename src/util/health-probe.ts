/** How a component of gw is doing, as the health check reports it; `off` is switched off by the operator. */
export const COMPONENT_STATES = ['ok', 'degraded', 'down', 'not_configured', 'off'] as const
export type ComponentState = (typeof COMPONENT_STATES)[number]

/**
 * A component is checked by a probe that resolves when healthy; `required` ones take the server down
 * with them. The composition makes one per dependency (database, Redis); the health module runs them.
 */
export interface HealthProbe {
  name: string
  required: boolean
  check(): Promise<ComponentState>
}
