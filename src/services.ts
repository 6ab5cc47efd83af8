/**
 * The composition root's first half: the services, built from the runtime's dependencies. The gateway
 * and the CLI need only these; `app.ts` lays the management API's routes over them, and `gw serve`
 * imports it only when a request first needs it (serve.ts), so start-up evaluates none of the routes.
 */
import { A2aRelay } from './a2a/relay'
import { Authenticator } from './auth/authenticator'
import { CredentialHasher } from './auth/credentials'
import type { InvalidationBus } from './auth/invalidation'
import { CredentialIssuer } from './auth/issuer'
import { Vault } from './auth/vault'
import { CallSettings } from './directory/call-settings'
import { Chains, DEFAULT_FALLBACK_STATUSES, NEVER_FALLBACK_STATUSES } from './directory/chains'
import { OrgConnections } from './directory/connections'
import { PROVIDER_NAMES } from './directory/providers'
import { Deliverer, type DelivererOptions, type DeliveryObserver } from './egress/deliverer'
import { EgressPolicy } from './egress/policy'
import type { ServiceUrls } from './egress/services'
import { MemoryResponseCache } from './gateway/cache/memory'
import type { ResponseCache } from './gateway/cache/store'
import type { DispatchPath, ProviderApi } from './gateway/dispatch-routes'
import { dispatchHandler, providerApiHandler } from './gateway/entry'
import { Gateway, type GatewayConfig } from './gateway/gateway'
import { GatewayInfo } from './gateway/info'
import type { MetaStore } from './gateway/meta/store'
import { operatorConfigured, resolveModel } from './gateway/providers/registry'
import type { RequestLog } from './gateway/request-log/request-log'
import { type KeyHealth, MemoryKeyHealth } from './gateway/routing/key-health'
import { AccessPolicies } from './governance/policies'
import { RateLimiter } from './limits/limiter'
import type { LimiterStore } from './limits/store'
import type { Logger } from './log'
import { McpGateway } from './mcp/gateway'
import { A2aAgentsService } from './modules/a2a-agents/service'
import { GroupedViews } from './modules/analytics/grouped'
import { AnalyticsService } from './modules/analytics/service'
import { ApiKeysService, McpConnectionsView } from './modules/api-keys/service'
import { AuditService } from './modules/audit/service'
import { AuthService } from './modules/auth/service'
import { BudgetActionViews } from './modules/budgets/actions'
import { BudgetsService } from './modules/budgets/service'
import { FallbackChainsService } from './modules/fallback-chains/service'
import { GovernanceService } from './modules/governance/service'
import { HealthService } from './modules/health/service'
import { IntegrationsService } from './modules/integrations/service'
import { McpServersService } from './modules/mcp-servers/service'
import { MembersService } from './modules/members/service'
import { ModelPricesService } from './modules/model-prices/service'
import { RetentionJob, type RetentionJobOptions } from './modules/organization/retention'
import { OrganizationService } from './modules/organization/service'
import { OrganizationSettingsService } from './modules/organization/settings-service'
import { OwnershipService } from './modules/ownership/service'
import { ProviderKeysService } from './modules/provider-keys/service'
import { ProvidersService } from './modules/providers/service'
import { RateLimitRulesService } from './modules/rate-limits/service'
import { RelayedCallViews } from './modules/relayed-calls/views'
import { RolesService } from './modules/roles/service'
import { SavedViewsService } from './modules/saved-views/service'
import { SecurityViews } from './modules/security/service'
import { SsoService, type TxtResolver } from './modules/sso/service'
import { TeamsService } from './modules/teams/service'
import { ToolRatesService } from './modules/tool-rates/service'
import { AnnotationsService } from './modules/traffic/annotations'
import { GatewayTest } from './modules/traffic/gateway-test'
import { TrafficService } from './modules/traffic/service'
import { WebhooksService } from './modules/webhooks/service'
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
  serverSecret: string
  /** The key credential hashes are made with (see auth/secret-rotation.ts). */
  credentialKey: string
  log: Logger
  probes: readonly HealthProbe[]
  gateway: GatewayConfig
  meta: MetaStore
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

/** The services, built once from the dependencies; the CLI uses them without the HTTP app. */
export function createServices(deps: AppDeps) {
  const hasher = new CredentialHasher(deps.credentialKey)
  const issuer = new CredentialIssuer(hasher, deps.now)
  const authenticator = new Authenticator({ store: deps.store, hasher, invalidations: deps.invalidations, now: deps.now })
  const rateLimitRules = new RateLimitRulesService(deps.store, deps.now)
  const limiter = new RateLimiter(deps.limiterStore, deps.globalRateLimit, rateLimitRules)
  const vault = new Vault(deps.serverSecret)
  const keyHealth = deps.keyHealth ?? new MemoryKeyHealth(deps.now)
  const retention = new RecordRetention(deps.store, deps.requestRetentionDays)
  // What calls read per call, below the gateway; the modules that change it write through it.
  const directory = {
    connections: new OrgConnections(deps.store, vault, deps.now),
    chains: new Chains(deps.store, deps.now),
    callSettings: new CallSettings(deps.store, deps.now),
  }
  const settings = new OrganizationSettingsService(deps.store, retention, directory.callSettings, deps.now)
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
  const providerKeys = new ProviderKeysService(deps.store, vault, egress, directory.connections, deps.now)
  const serviceUrls = deps.integrations ?? { slackApiUrl: 'https://slack.com/api', stripeApiUrl: 'https://api.stripe.com' }
  const deliverer = new Deliverer({
    ...deps.delivery,
    store: deps.store,
    vault,
    egress,
    urls: serviceUrls,
    log: deps.log,
    now: deps.now,
    observer: deps.metrics,
  })
  const maxBodyBytes = deps.maxBodyBytes ?? DEFAULT_MAX_BODY_BYTES
  const bodyLimits = { maxBodyBytes, budget: new BodyBudget(BODIES_IN_FLIGHT * maxBodyBytes) }
  const fallbackChains = new FallbackChainsService(
    deps.store,
    { resolveModel, defaultStatuses: DEFAULT_FALLBACK_STATUSES, neverStatuses: NEVER_FALLBACK_STATUSES },
    directory.chains,
    deps.now,
  )
  const accessPolicies = new AccessPolicies(deps.store, deps.invalidations, deps.now)
  const responseCache = deps.responseCache ?? new MemoryResponseCache({ maxBytes: DEFAULT_CACHE_BYTES })
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
    cache: responseCache,
    egress,
    log: deps.log,
    observer: deps.metrics,
    tracing: deps.tracing,
    now: deps.now,
  })
  return {
    authenticator,
    auth: new AuthService(deps.store, issuer, authenticator, hasher, deps.now),
    organizations: new OrganizationService(deps.store, issuer, deps.now),
    members: new MembersService(deps.store, issuer, authenticator, deps.now),
    roles: new RolesService(deps.store, authenticator, deps.now),
    ownership: new OwnershipService(deps.store, authenticator),
    teams: new TeamsService(deps.store, deps.now),
    savedViews: new SavedViewsService(deps.store, deps.now),
    traffic: new TrafficService(deps.store, deps.usersFeature ?? true),
    annotations: new AnnotationsService(deps.store, deps.now),
    gatewayTest: new GatewayTest({
      call: (principal, path, request, bodyText) =>
        gateway.dispatch({ principal, path, request, bodyText, keepAlive: () => undefined }),
      costOf: async (requestId) => (await deps.meta.get(requestId))?.meta.requestCost,
      store: deps.store,
      now: deps.now,
    }),
    analytics: new AnalyticsService(deps.store, deps.now),
    grouped: new GroupedViews(deps.store, deps.usersFeature ?? true, deps.now),
    security: new SecurityViews(deps.store, deps.now),
    relayedCalls: new RelayedCallViews(deps.store, deps.now),
    budgetActions: new BudgetActionViews(deps.store, deps.now),
    budgets: new BudgetsService(deps.store, spendPolicies, budgets, retention, deps.now),
    /** The organisations' fallback chains, and the gateway's reader of them (`ChainSource.chainFor`). */
    fallbackChains,
    /** What calls read per call (connections, chains, call settings), each held briefly and forgotten on change. */
    directory,
    /** The organisations' compiled access rules: the gateway, MCP and A2A ask them; the governance module changes them. */
    accessPolicies,
    governance: new GovernanceService(deps.store, accessPolicies, deps.now),
    sso: new SsoService(deps.store, vault, egress, deps.txtResolver, deps.now),
    settings,
    /** Deletes what the organisations' retention lets go; `gw serve` starts it and stops it on shutdown. */
    retention: new RetentionJob({ store: deps.store, retention, log: deps.log, now: deps.now }, deps.retentionJob),
    health: new HealthService(deps.probes, deps.requestLog, deps.now),
    rateLimitRules,
    /** What a call costs: the organisation's own prices over the built-in table. */
    prices,
    modelPrices: new ModelPricesService(deps.store, prices, deps.now),
    apiKeys: new ApiKeysService(deps.store, issuer, authenticator, deps.now),
    providerKeys,
    /** The providers as an organisation sees them: of the operator's configuration, only which are configured. */
    providers: new ProvidersService(
      deps.store,
      new Set(PROVIDER_NAMES.filter((name) => operatorConfigured(deps.gateway.providers, name))),
      prices,
    ),
    /** Which provider keys (and operator endpoints, `operatorKeyId`) are cooling down; `pickKey` chooses with it. */
    keyHealth,
    mcpConnections: new McpConnectionsView(deps.store),
    audit: new AuditService(deps.store, deps.log, deps.now),
    /** Sends the webhook outbox; `gw serve` starts it and stops it on shutdown. */
    deliverer,
    webhooks: new WebhooksService(deps.store, vault, egress, deliverer, deps.now),
    integrations: new IntegrationsService(deps.store, vault, egress, serviceUrls, deps.now),
    mcpServers: new McpServersService(deps.store, vault, egress, deps.now),
    toolRates: new ToolRatesService(deps.store, deps.now),
    /** gw as an MCP server at /mcp, in front of the organisations' registered servers. */
    mcpGateway: new McpGateway({
      store: deps.store,
      authenticator,
      access: accessPolicies,
      limiter,
      budgets,
      vault,
      fetch: egress.guardedFetch,
      log: deps.log,
      tracing: deps.tracing,
      now: deps.now,
    }),
    a2aAgents: new A2aAgentsService(deps.store, vault, egress, deps.now),
    /** The A2A relay at /a2a/{agentId}: authenticated like a gateway call, held to the access rules and the global rate limit. */
    a2aRelay: new A2aRelay({
      store: deps.store,
      authenticator,
      vault,
      egress,
      access: accessPolicies,
      limiter,
      log: deps.log,
      tracing: deps.tracing,
      maxBodyBytes,
      now: deps.now,
    }),
    gateway,
    /** The HTTP entry of each dispatch path: `gw serve` routes to it directly, the app through Elysia. */
    dispatch: (path: DispatchPath) => dispatchHandler(authenticator, gateway, path, deps.log, bodyLimits),
    /** The HTTP entry of a provider API (files, batches), routed as the dispatch paths are. */
    providerApi: (api: ProviderApi) => providerApiHandler(authenticator, gateway, api, deps.log, bodyLimits),
    gatewayInfo: new GatewayInfo({ store: deps.store, meta: deps.meta, providers: deps.gateway.providers, now: deps.now }),
  }
}

export type Services = ReturnType<typeof createServices>
