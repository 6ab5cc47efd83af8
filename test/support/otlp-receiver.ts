/**
 * An OpenTelemetry collector's OTLP/HTTP trace endpoint on loopback: it takes what an exporter posts to
 * `/v1/traces` (JSON, as the OTLP/JSON encoding writes it) and keeps each span, its attributes
 * decoded, for tests to read.
 */

export interface ReceivedSpan {
  traceId: string
  spanId: string
  /** Absent for a trace's root. */
  parentSpanId?: string
  name: string
  /** OTLP's numbering: 1 internal, 2 server, 3 client. */
  kind: number
  /** OTLP's numbering: 0 unset, 1 ok, 2 error. */
  status: { code: number; message?: string }
  attributes: Record<string, unknown>
  resource: Record<string, unknown>
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3 } as const
export const STATUS_ERROR = 2

interface AnyValue {
  stringValue?: string
  boolValue?: boolean
  intValue?: number | string
  doubleValue?: number
  arrayValue?: { values?: AnyValue[] }
}
interface KeyValue {
  key: string
  value: AnyValue
}
interface OtlpSpan {
  traceId: string
  spanId: string
  parentSpanId?: string
  name: string
  kind: number
  status?: { code?: number; message?: string }
  attributes?: KeyValue[]
}
interface OtlpTraces {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] }
    scopeSpans?: Array<{ spans?: OtlpSpan[] }>
  }>
}

function decoded(value: AnyValue): unknown {
  if (value.stringValue !== undefined) return value.stringValue
  if (value.boolValue !== undefined) return value.boolValue
  if (value.intValue !== undefined) return Number(value.intValue)
  if (value.doubleValue !== undefined) return value.doubleValue
  if (value.arrayValue !== undefined) return (value.arrayValue.values ?? []).map(decoded)
  return undefined
}

const attributesOf = (pairs: KeyValue[] | undefined): Record<string, unknown> =>
  Object.fromEntries((pairs ?? []).map((pair) => [pair.key, decoded(pair.value)]))

export interface OtlpReceiver {
  /** The collector's base URL, as OTEL_EXPORTER_OTLP_ENDPOINT names it. */
  endpoint: string
  spans: ReceivedSpan[]
  /** How many export requests came. */
  exports: number
  /** Waits until a span matching `match` has come, and answers it. */
  span(match: (span: ReceivedSpan) => boolean, timeoutMs?: number): Promise<ReceivedSpan>
  stop(): Promise<void>
}

export function startOtlpReceiver(): OtlpReceiver {
  const receiver: OtlpReceiver = {
    endpoint: '',
    stop: async () => undefined,
    spans: [],
    exports: 0,
    async span(match, timeoutMs = 5_000) {
      const until = Date.now() + timeoutMs
      for (;;) {
        const found = receiver.spans.find(match)
        if (found) return found
        if (Date.now() > until) throw new Error(`no such span came within ${timeoutMs} ms`)
        await Bun.sleep(20)
      }
    },
  }
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(request) {
      if (new URL(request.url).pathname !== '/v1/traces' || request.method !== 'POST')
        return new Response('not found', { status: 404 })
      if (!request.headers.get('content-type')?.includes('application/json'))
        return new Response('this receiver takes OTLP/JSON', { status: 415 })
      const body = (await request.json()) as OtlpTraces
      receiver.exports += 1
      for (const resourceSpans of body.resourceSpans ?? []) {
        const resource = attributesOf(resourceSpans.resource?.attributes)
        for (const scope of resourceSpans.scopeSpans ?? [])
          for (const span of scope.spans ?? [])
            receiver.spans.push({
              traceId: span.traceId,
              spanId: span.spanId,
              ...(span.parentSpanId ? { parentSpanId: span.parentSpanId } : {}),
              name: span.name,
              kind: span.kind,
              status: { code: span.status?.code ?? 0, ...(span.status?.message ? { message: span.status.message } : {}) },
              attributes: attributesOf(span.attributes),
              resource,
            })
      }
      return Response.json({ partialSuccess: {} })
    },
  })
  receiver.endpoint = `http://127.0.0.1:${server.port}`
  receiver.stop = () => server.stop(true)
  return receiver
}
