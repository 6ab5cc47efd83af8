import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { type App, createApp } from '../../src/app'
import { type InvalidationBus, LocalInvalidationBus } from '../../src/auth/invalidation'
import { loadCredentialKey } from '../../src/auth/secret-rotation'
import type { Tier } from '../../src/auth/tiers'
import { Vault } from '../../src/auth/vault'
import { type Config, loadConfig } from '../../src/config'
import type { ResponseCache } from '../../src/gateway/cache/store'
import type { GatewayConfig } from '../../src/gateway/gateway'
import type { MetaStore } from '../../src/gateway/meta/store'
import { type LogWriter, RequestLog } from '../../src/gateway/request-log/request-log'
import { writeEntries } from '../../src/gateway/request-log/writer'
import type { KeyHealth } from '../../src/gateway/routing/key-health'
import { type LimiterStore, MemoryLimiterStore } from '../../src/limits/store'
import { type Logger, silentLogger } from '../../src/log'
import type { HealthProbe } from '../../src/modules/health/service'
import type { MetricsSources } from '../../src/observability/metrics'
import { type AppDeps, createServices, type Services } from '../../src/services'
import type { SpendStore } from '../../src/spend/counters'
import { type Database, openDatabase } from '../../src/store/database'
import { migrate } from '../../src/store/migrate'
import { createStore, type Store } from '../../src/store/store'
import { scratchPostgres, serviceUrl } from './services'

export const TEST_SECRET = 'test-secret-test-secret-test-secret-0123'

export type DialectName = 'sqlite' | 'postgres'

/** The dialects this run can reach: SQLite always, Postgres when GW_TEST_DATABASE_URL is set. */
export const DIALECTS: DialectName[] = serviceUrl('GW_TEST_DATABASE_URL') ? ['sqlite', 'postgres'] : ['sqlite']

export interface TestDatabase {
  db: Database
  store: Store
  /** Where it is, as configuration: for another connection to it (the log writer's thread). */
  location: Config['database']
  close(): Promise<void>
}

/** A new, empty database of the dialect (nothing migrated), and how to drop it. */
export async function emptyDatabase(dialect: DialectName): Promise<{ location: Config['database']; drop(): Promise<void> }> {
  if (dialect === 'postgres') {
    const scratch = await scratchPostgres(serviceUrl('GW_TEST_DATABASE_URL') as string)
    return { location: loadConfig({ GW_DATABASE_URL: scratch.url }).database, drop: () => scratch.drop() }
  }
  const dir = mkdtempSync(join(tmpdir(), 'gw-test-'))
  return {
    location: loadConfig({ GW_DATABASE_URL: `sqlite:${join(dir, 'gw.db')}` }).database,
    drop: async () => rmSync(dir, { recursive: true, force: true }),
  }
}

export async function openTestDatabase(dialect: DialectName): Promise<TestDatabase> {
  const { location, drop } = await emptyDatabase(dialect)
  const db = await openDatabase({ database: location })
  await migrate(db)
  return {
    db,
    location,
    store: createStore(db),
    async close() {
      await db.close()
      await drop()
    },
  }
}

export interface Org {
  orgId: string
  ownerId: string
  ownerSession: string
  apiKey: string
}

export interface Harness extends TestDatabase {
  app: App
  services: Services
  /** The shared metadata store (Redis), when the test gave one. */
  meta?: MetaStore
  requestLog: RequestLog
  /** What credential hashes are made with in this harness. */
  credentialKey: string
  /** What the app was built from, to build another over the same stores (a "restart"). */
  deps: AppDeps
  request(
    method: string,
    path: string,
    options?: { token?: string; body?: unknown; headers?: Record<string, string>; signal?: AbortSignal },
  ): Promise<Response>
  org(tier?: Tier): Promise<Org>
  member(orgId: string, role: string): Promise<{ userId: string; sessionToken: string }>
}

let counter = 0

export interface HarnessOptions {
  dialect?: DialectName
  probes?: HealthProbe[]
  now?: () => number
  /** Where the providers are: the fake provider's addresses in gateway tests. */
  providers?: Partial<GatewayConfig['providers']>
  meta?: MetaStore
  upstreamTimeoutMs?: number
  /** GW_COUNTRY_HEADER: the header that carries the caller's country. */
  countryHeader?: string
  limiterStore?: LimiterStore
  /** Where budgets count: in process when absent; Redis to share them between harnesses. */
  spendStore?: SpendStore
  /** Which provider keys are cooling down: in process when absent; Redis to share it between harnesses. */
  keyHealth?: KeyHealth
  /** Where the response cache keeps answers: in process when absent; Redis to share them between harnesses. */
  responseCache?: ResponseCache
  invalidations?: InvalidationBus
  txtResolver?: (name: string) => Promise<string[][]>
  usersFeature?: boolean
  globalRateLimit?: { requests: number; windowSeconds: number }
  log?: Logger
  /** Share another harness's database, as two gw instances behind one load balancer do. */
  database?: TestDatabase
  /** Wraps the request log's writer: a test holds its batches back, as a stalled database would. */
  logWriter?: (write: LogWriter) => LogWriter
  /** GW_MAX_BODY_BYTES. */
  maxBodyBytes?: number
  /** Where outgoing calls may go: tests that receive webhooks on loopback allow it. */
  egress?: AppDeps['egress']
  /** The webhook deliverer's pace. */
  delivery?: AppDeps['delivery']
  /** Where Slack and Stripe are: fakes on loopback. */
  integrations?: AppDeps['integrations']
  /** Builds the metrics (GW_METRICS_*) over this harness's request log and probes; off when absent. */
  metrics?: (sources: MetricsSources) => NonNullable<AppDeps['metrics']>
  /** GW_METRICS_TOKEN. */
  metricsToken?: string
  /** OpenTelemetry traces (OTEL_*); off when absent. */
  tracing?: AppDeps['tracing']
  /** GW_REQUEST_RETENTION_DAYS: records kept forever when absent. */
  requestRetentionDays?: number
  /** The retention job's pace. */
  retentionJob?: AppDeps['retentionJob']
}

/** Nothing listens on the discard port: a provider left unconfigured fails fast. */
const UNREACHABLE = 'http://127.0.0.1:9'

export async function createHarness(options: HarnessOptions = {}): Promise<Harness> {
  const shared = options.database
  const database = shared ?? (await openTestDatabase(options.dialect ?? 'sqlite'))
  const meta = options.meta
  const write = writeEntries(database.store)
  const requestLog = new RequestLog(options.logWriter?.(write) ?? write, silentLogger, {
    flushIntervalMs: 5,
  })
  const vault = new Vault(TEST_SECRET)
  const deps: AppDeps = {
    store: database.store,
    vault,
    credentialKey: await loadCredentialKey(database.store, vault),
    log: options.log ?? silentLogger,
    probes: options.probes ?? [],
    now: options.now,
    meta,
    requestLog,
    limiterStore: options.limiterStore ?? new MemoryLimiterStore(options.now),
    spendStore: options.spendStore,
    keyHealth: options.keyHealth,
    responseCache: options.responseCache,
    invalidations: options.invalidations ?? new LocalInvalidationBus(),
    txtResolver: options.txtResolver,
    usersFeature: options.usersFeature,
    globalRateLimit: options.globalRateLimit ?? { requests: 1_000_000, windowSeconds: 60 },
    maxBodyBytes: options.maxBodyBytes,
    egress: options.egress,
    delivery: options.delivery,
    integrations: options.integrations,
    metrics: options.metrics?.({ requestLog, probes: options.probes ?? [], outbox: database.store.deliveries }),
    metricsToken: options.metricsToken,
    tracing: options.tracing,
    requestRetentionDays: options.requestRetentionDays,
    retentionJob: options.retentionJob,
    gateway: {
      providers: {
        ...options.providers,
        openai: options.providers?.openai ?? { baseUrl: UNREACHABLE },
        anthropic: options.providers?.anthropic ?? { baseUrl: UNREACHABLE },
      },
      metaTtlSeconds: 300,
      upstreamTimeoutMs: options.upstreamTimeoutMs ?? 10_000,
      countryHeader: options.countryHeader,
    },
  }
  const services = createServices(deps)
  const app = createApp(deps, services)
  return {
    ...database,
    async close() {
      await requestLog.drain()
      if (!shared) await database.close()
    },
    app,
    services,
    meta,
    requestLog,
    credentialKey: deps.credentialKey,
    deps,
    request(method, path, { token, body, headers = {}, signal } = {}) {
      const init: RequestInit = { method, headers: { ...headers }, signal }
      const h = init.headers as Record<string, string>
      if (token) h.authorization = `Bearer ${token}`
      if (body !== undefined) {
        h['content-type'] ??= 'application/json'
        init.body = typeof body === 'string' ? body : JSON.stringify(body)
      }
      // Elysia reads the path from a fixed offset of the URL; `http://localhost` is the form it expects in tests.
      return app.handle(new Request(`http://localhost${path}`, init))
    },
    async org(tier = 'free') {
      counter += 1
      const result = await services.organizations.bootstrap({
        orgName: `org ${counter}`,
        email: `owner${counter}@example.test`,
        tier,
      })
      return { orgId: result.orgId, ownerId: result.userId, ownerSession: result.sessionToken, apiKey: result.apiKey }
    },
    async member(orgId, role) {
      counter += 1
      return services.members.add({ orgId, email: `person${counter}@example.test`, role })
    },
  }
}

/** One chat call through the gateway that must succeed, with its record written; answers its Gw-Id. */
export async function loggedChat(h: Harness, token: string, content: string): Promise<string> {
  const response = await h.request('POST', '/v1/chat/completions', {
    token,
    body: { model: 'gpt-4o', messages: [{ role: 'user', content }] },
  })
  if (response.status !== 200) throw new Error(`the call answered ${response.status}: ${await response.text()}`)
  await h.requestLog.flush()
  return response.headers.get('gw-id') as string
}
