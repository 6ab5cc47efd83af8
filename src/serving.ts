/**
 * What `gw serve` builds before it listens: the gateway's path (authentication, limits, budgets, prices,
 * the directory a call reads), the health check, and the jobs the server runs (retention, webhook
 * deliveries). The management API's services are built over these by `services.ts`, which `gw serve`
 * imports with the management app on its first request: start-up evaluates none of the modules'
 * services and models.
 */
import { Authenticator } from './auth/authenticator'
import { CredentialHasher } from './auth/credentials'
import type { InvalidationBus } from './auth/invalidation'
import { CredentialIssuer } from './auth/issuer'
import type { Vault } from './auth/vault'
import { CallSettings } from './directory/call-settings'
import { Chains } from './directory/chains'
import { OrgConnections } from './directory/connections'
import { Deliverer, type DelivererOptions, type DeliveryObserver } from './egress/deliverer'
import { EgressPolicy } from './egress/policy'
import type { ServiceUrls } from './egress/services'
import { MemoryResponseCache } from './gateway/cache/memory'
import type { ResponseCache } from './gateway/cache/store'
import type { DispatchPath, ProviderApi } from './gateway/dispatch-routes'
import { dispatchHandler, providerApiHandler } from './gateway/entry'
import { Gateway, type GatewayConfig } from './gateway/gateway'
import type { MetaStore } from './gateway/meta/store'
import type { RequestLog } from './gateway/request-log/request-log'
import { type KeyHealth, MemoryKeyHealth } from './gateway/routing/key-health'
import { AccessPolicies } from './governance/policies'
import { RateLimiter } from './limits/limiter'
import type { LimiterStore } from './limits/store'
import type { Logger } from './log'
import { HealthService } from './modules/health/service'
import { RetentionJob, type RetentionJobOptions } from './modules/organization/retention'
import { RateLimitRulesService } from './modules/rate-limits/service'
import type { TxtResolver } from './modules/sso/service'
import { PriceBook } from './money/price-book'
import type { CallObserver, MetricsExposition } from './observability/observer'
import type { Tracing } from './observability/tracing'
import { MemorySpendStore, type SpendStore } from './spend/counters'
import { BudgetEnforcer } from './spend/enforcer'
import { BudgetNotices } from './spend/notices'
import { SpendPolicies } from './spend/policy'
import { RecordRetention } from './spend/retention'
import type { Store } from './store/store'
import type { HealthProbe } from './util/health-probe'
import { BodyBudget } from './util/read-body'

export interface AppDeps {
  store: Store
  /** Seals and opens stored secrets under the server secret: one for the process, its key made once. */
  vault: Vault
  /** The key credential hashes are made with (see auth/secret-rotation.ts). */
  credentialKey: string
  log: Logger
  probes: readonly HealthProbe[]
  gateway: GatewayConfig
  /** Calls' metadata shared with other instances (Redis); absent for a single instance, whose lookup reads its request log. */
  meta?: MetaStore
  requestLog: RequestLog
  limiterStore: LimiterStore
  /** Where budgets count spend and holds; in process when absent. */
  spendStore?: SpendStore
  /** Which provider keys are cooling down; in process when absent, on Redis to share it between instances. */
  keyHealth?: KeyHealth
  /** Answers kept for identical calls (the response cache); in process, 64 MiB, when absent. */
  responseCache?: ResponseCache
  invalidations: InvalidationBus
  /** DNS TXT lookups for SSO domain checks; the system resolver when absent. */
  txtResolver?: TxtResolver
  /** The Users feature (per-user traffic views); a deployment may switch it off. On when absent. */
  usersFeature?: boolean
  globalRateLimit: { requests: number; windowSeconds: number }
  /** GW_REQUEST_RETENTION_DAYS: request records are kept at most this many days; forever when absent. */
  requestRetentionDays?: number
  /** How the retention job paces itself; tests and the soak bench change it. */
  retentionJob?: RetentionJobOptions
  /** GW_MAX_BODY_BYTES: the largest body of a gateway call; 32 MiB when absent. */
  maxBodyBytes?: number
  now?: () => number
  /** Where outgoing calls may go (GW_EGRESS, GW_EGRESS_ALLOW_HOSTS); public https:// destinations only when absent. */
  egress?: EgressPolicy
  /** Where the integrations' services are; Slack's and Stripe's own when absent. */
  integrations?: ServiceUrls
  /** Prometheus metrics, when configured (GW_METRICS_ADDR or GW_METRICS_TOKEN): told of every settled call and delivery attempt. */
  metrics?: CallObserver & DeliveryObserver & MetricsExposition
  /** GW_METRICS_TOKEN: `/metrics` on the main port answers only with it; absent, that path is not there. */
  metricsToken?: string
  /** OpenTelemetry traces, when an OTLP endpoint is configured: a span for each call and relayed tool call. */
  tracing?: Tracing
  /** How the webhook deliverer paces itself; tests shorten its waits. */
  delivery?: Pick<DelivererOptions, 'schedule' | 'attemptTimeoutMs' | 'pollMs' | 'batch' | 'outboxCap'>
}

const DEFAULT_MAX_BODY_BYTES = 32 * 1024 * 1024
const DEFAULT_CACHE_BYTES = 64 * 1024 * 1024
/** Bodies held at once, in maximum-size bodies: room for a few of the largest, and for thousands of usual ones. */
const BODIES_IN_FLIGHT = 4

/** What serving needs, built once from the dependencies; `shared` is what the management services are built with too. */
export function createServing(deps: AppDeps) {
  const hasher = new CredentialHasher(deps.credentialKey)
  const authenticator = new Authenticator({ store: deps.store, hasher, invalidations: deps.invalidations, now: deps.now })
  const rateLimitRules = new RateLimitRulesService(deps.store, deps.now)
  const limiter = new RateLimiter(deps.limiterStore, deps.globalRateLimit, rateLimitRules)
  const keyHealth = deps.keyHealth ?? new MemoryKeyHealth(deps.now)
  const recordRetention = new RecordRetention(deps.store, deps.requestRetentionDays)
  // What calls read per call, below the gateway; the modules that change it write through it.
  const directory = {
    connections: new OrgConnections(deps.store, deps.vault, deps.now),
    chains: new Chains(deps.store, deps.now),
    callSettings: new CallSettings(deps.store, deps.now),
  }
  const prices = new PriceBook(deps.store, deps.now)
  const spendPolicies = new SpendPolicies(deps.store, deps.now)
  const budgets = new BudgetEnforcer({
    store: deps.store,
    counters: deps.spendStore ?? new MemorySpendStore(),
    policies: spendPolicies,
    notices: new BudgetNotices({ store: deps.store, log: deps.log, now: deps.now }),
    log: deps.log,
    now: deps.now,
  })
  const egress = deps.egress ?? new EgressPolicy({ enabled: true })
  const serviceUrls = deps.integrations ?? { slackApiUrl: 'https://slack.com/api', stripeApiUrl: 'https://api.stripe.com' }
  const deliverer = new Deliverer({
    ...deps.delivery,
    store: deps.store,
    vault: deps.vault,
    egress,
    urls: serviceUrls,
    log: deps.log,
    now: deps.now,
    observer: deps.metrics,
  })
  const maxBodyBytes = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const bodyLimits = { maxBodyBytes, budget: new BodyBudget(BODIES_IN_FLIGHT * maxBodyBytes) }
  const accessPolicies = new AccessPolicies(deps.store, deps.invalidations, deps.now)
  const gateway = new Gateway({
    config: deps.gateway,
    store: deps.store,
    limiter,
    budgets,
    prices,
    orgKeys: directory.connections,
    orgSettings: directory.callSettings,
    meta: deps.meta,
    requestLog: deps.requestLog,
    chains: directory.chains,
    access: accessPolicies,
    keyHealth,
    cache: deps.responseCache ?? new MemoryResponseCache({ maxBytes: DEFAULT_CACHE_BYTES }),
    egress,
    log: deps.log,
    observer: deps.metrics,
    tracing: deps.tracing,
    now: deps.now,
  })
  return {
    authenticator,
    /** What calls read per call (connections, chains, call settings), each held briefly and forgotten on change. */
    directory,
    /** The organisations' compiled access rules: the gateway, MCP and A2A ask them; the governance module changes them. */
    accessPolicies,
    /** Deletes what the organisations' retention lets go; `gw serve` starts it and stops it on shutdown. */
    retention: new RetentionJob(
      { store: deps.store, retention: recordRetention, log: deps.log, now: deps.now },
      deps.retentionJob,
    ),
    health: new HealthService(deps.probes, deps.requestLog, deps.now),
    rateLimitRules,
    /** What a call costs: the organisation's own prices over the built-in table. */
    prices,
    /** Which provider keys (and operator endpoints, `operatorKeyId`) are cooling down; `pickKey` chooses with it. */
    keyHealth,
    /** Sends the webhook outbox; `gw serve` starts it and stops it on shutdown. */
    deliverer,
    gateway,
    /** The HTTP entry of each dispatch path: `gw serve` routes to it directly, the app through Elysia. */
    dispatch: (path: DispatchPath) => dispatchHandler(authenticator, gateway, path, deps.log, bodyLimits),
    /** The HTTP entry of a provider API (files, batches), routed as the dispatch paths are. */
    providerApi: (api: ProviderApi) => providerApiHandler(authenticator, gateway, api, deps.log, bodyLimits),
    shared: {
      hasher,
      issuer: new CredentialIssuer(hasher, deps.now),
      vault: deps.vault,
      limiter,
      budgets,
      spendPolicies,
      recordRetention,
      egress,
      serviceUrls,
      maxBodyBytes,
    },
  }
}

export type Serving = ReturnType<typeof createServing>
