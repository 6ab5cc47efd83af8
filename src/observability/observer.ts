import type { CallFacts } from '../gateway/call'
import type { StreamOutcome } from '../gateway/steps/relay'
import { equalInConstantTime } from '../util/digest'

/**
 * What the gateway tells an observer of each call it settles. When metrics are off there is no
 * observer at all, so the call's path does no work for them. This file holds no metrics library:
 * prom-client is loaded (metrics.ts) only when the operator configures metrics.
 */
export interface CallObserver {
  settled(facts: CallFacts, outcome: StreamOutcome, costNano: number | undefined, endedAt: number): void
}

/** The error code that leads a failed call's record (`rate_limited: ...`), when it has one. */
export function errorCodeOf(outcome: Pick<StreamOutcome, 'error'>): string | undefined {
  const colon = outcome.error?.indexOf(':') ?? -1
  return colon > 0 ? outcome.error?.slice(0, colon) : undefined
}

/** The text a scrape answers. */
export interface MetricsExposition {
  readonly contentType: string
  render(): Promise<string>
}

export async function scrape(metrics: MetricsExposition): Promise<Response> {
  return new Response(await metrics.render(), { headers: { 'content-type': metrics.contentType } })
}

/**
 * `/metrics` on the main port: only with the operator's token. Without one configured it is not there
 * at all (404), so it is never public by accident.
 */
export async function metricsAnswer(
  metrics: MetricsExposition | undefined,
  token: string | undefined,
  authorization: string | null,
): Promise<Response> {
  if (!metrics || !token) return new Response('Not Found', { status: 404 })
  if (!authorization || !equalInConstantTime(authorization, `Bearer ${token}`))
    return new Response('Unauthorized', { status: 401, headers: { 'www-authenticate': 'Bearer' } })
  return scrape(metrics)
}

/** The separate listener (GW_METRICS_ADDR): `GET /metrics` and nothing else. */
export function serveMetrics(metrics: MetricsExposition, hostname: string, port: number): ReturnType<typeof Bun.serve> {
  return Bun.serve({
    hostname,
    port,
    fetch: (request) => {
      if (new URL(request.url).pathname !== '/metrics') return new Response('Not Found', { status: 404 })
      if (request.method !== 'GET' && request.method !== 'HEAD')
        return new Response('Method Not Allowed', { status: 405, headers: { allow: 'GET' } })
      return scrape(metrics)
    },
  })
}
