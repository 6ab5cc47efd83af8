import { openapi } from '@elysiajs/openapi'
import { Elysia, t } from 'elysia'
import { A2aRelay } from './a2a/relay'
import { AuditRecorder } from './audit/recorder'
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
import { DISPATCH_PATHS, DISPATCH_ROUTES, type DispatchPath, PROVIDER_APIS, type ProviderApi } from './gateway/dispatch-routes'
import { dispatchHandler, providerApiHandler } from './gateway/entry'
import { Gateway, type GatewayConfig } from './gateway/gateway'
import { GatewayInfo } from './gateway/info'
import type { MetaStore } from './gateway/meta/store'
import { operatorConfigured, resolveModel } from './gateway/providers/registry'
import type { RequestLog } from './gateway/request-log/request-log'
import { type KeyHealth, MemoryKeyHealth } from './gateway/routing/key-health'
import { AccessPolicies } from './governance/policies'
import { authz } from './http/authz'
import { errorMapper } from './http/error-mapper'
import { storableUrl } from './http/storable-text'
import { RateLimiter } from './limits/limiter'
import type { LimiterStore } from './limits/store'
import type { Logger } from './log'
import { McpGateway } from './mcp/gateway'
import { a2aAgentRoutes } from './modules/a2a-agents/routes'
import { A2aAgentsService } from './modules/a2a-agents/service'
import { GroupedViews } from './modules/analytics/grouped'
import { analyticsRoutes, groupedRoutes } from './modules/analytics/routes'
import { AnalyticsService } from './modules/analytics/service'
import { apiKeyRoutes } from './modules/api-keys/routes'
import { ApiKeysService, McpConnectionsView } from './modules/api-keys/service'
import { auditRoutes } from './modules/audit/routes'
import { AuditService } from './modules/audit/service'
import { authRoutes } from './modules/auth/routes'
import { AuthService } from './modules/auth/service'
import { BudgetActionViews } from './modules/budgets/actions'
import { budgetRoutes } from './modules/budgets/routes'
import { BudgetsService } from './modules/budgets/service'
import { fallbackChainRoutes } from './modules/fallback-chains/routes'
import { FallbackChainsService } from './modules/fallback-chains/service'
import { gatewayInfoRoutes } from './modules/gateway-info/routes'
import { governanceRoutes } from './modules/governance/routes'
import { GovernanceService } from './modules/governance/service'
import { healthRoutes } from './modules/health/routes'
import { HealthService } from './modules/health/service'
import { integrationRoutes } from './modules/integrations/routes'
import { IntegrationsService } from './modules/integrations/service'
import { mcpServerRoutes } from './modules/mcp-servers/routes'
import { McpServersService } from './modules/mcp-servers/service'
import { memberRoutes } from './modules/members/routes'
import { MembersService } from './modules/members/service'
import { modelPriceRoutes } from './modules/model-prices/routes'
import { ModelPricesService } from './modules/model-prices/service'
import { RetentionJob, type RetentionJobOptions } from './modules/organization/retention'
import { organizationRoutes } from './modules/organization/routes'
import { OrganizationService } from './modules/organization/service'
import { OrganizationSettingsService } from './modules/organization/settings-service'
import { ownershipRoutes } from './modules/ownership/routes'
import { OwnershipService } from './modules/ownership/service'
import { providerKeyRoutes } from './modules/provider-keys/routes'
import { ProviderKeysService } from './modules/provider-keys/service'
import { providerRoutes } from './modules/providers/routes'
import { ProvidersService } from './modules/providers/service'
import { rateLimitRoutes } from './modules/rate-limits/routes'
import { RateLimitRulesService } from './modules/rate-limits/service'
import { relayedCallRoutes } from './modules/relayed-calls/routes'
import { RelayedCallViews } from './modules/relayed-calls/views'
import { roleRoutes } from './modules/roles/routes'
import { RolesService } from './modules/roles/service'
import { catalogueStubs, checkAgainstCatalogue } from './modules/router'
import { savedViewRoutes } from './modules/saved-views/routes'
import { SavedViewsService } from './modules/saved-views/service'
import { securityRoutes } from './modules/security/routes'
import { SecurityViews } from './modules/security/service'
import { ssoRoutes } from './modules/sso/routes'
import { SsoService, type TxtResolver } from './modules/sso/service'
import { teamRoutes } from './modules/teams/routes'
import { TeamsService } from './modules/teams/service'
import { toolRateRoutes } from './modules/tool-rates/routes'
import { ToolRatesService } from './modules/tool-rates/service'
import { AnnotationsService } from './modules/traffic/annotations'
import { GatewayTest } from './modules/traffic/gateway-test'
import { trafficRoutes } from './modules/traffic/routes'
import { TrafficService } from './modules/traffic/service'
import { webhookRoutes } from './modules/webhooks/routes'
import { WebhooksService } from './modules/webhooks/service'
import { PriceBook } from './money/price-book'
import { type CallObserver, type MetricsExposition, metricsAnswer } from './observability/observer'
import type { Tracing } from './observability/tracing'
import { MemorySpendStore, type SpendStore } from './spend/counters'
import { BudgetEnforcer } from './spend/enforcer'
import { BudgetNotices } from './spend/notices'
import { SpendPolicies } from './spend/policy'
import { RecordRetention } from './spend/retention'
import type { Store } from './store/store'
import type { HealthProbe } from './util/health-probe'
import { BodyBudget } from './util/read-body'
import { VERSION } from './version'

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

/** What a dispatch path answers: whatever the provider answered, in the path's format. */
const ProviderAnswer = t.Object(
  {},
  {
    additionalProperties: true,
    description: "The provider's answer in the path's format, or its server-sent events when the body asks to stream",
  },
)

/** A JSON-RPC answer of an A2A agent, or the events of a streamed one. */
const AgentAnswer = t.Object(
  {},
  { additionalProperties: true, description: "The agent's JSON-RPC answer, or its server-sent events for message/stream" },
)
const relayDetail = (summary: string) =>
  ({ summary, security: [{ bearer: [] }], 'x-scope': 'gateway' }) as Record<string, unknown>

/**
 * The A2A relay's routes: like the dispatch paths, outside /v1 and without a macro, since the relay
 * authenticates the call itself and answers every refusal as a JSON-RPC error.
 */
function a2aRelayRoutes(routes: Elysia, relay: A2aRelay): void {
  routes.post('/a2a/:agentId', ({ request, params, server }) => relay.call(request, params.agentId, server ?? undefined), {
    parse: 'none',
    response: { 200: AgentAnswer },
    detail: relayDetail(
      "Relay an A2A JSON-RPC call (message/send, message/stream, tasks/*) to a registered agent with the agent's own key",
    ),
  })
  for (const [name, summary] of [
    ['agent-card.json', "The agent's card as its last probe kept it, its url gw's relay address"],
    ['agent.json', 'The same card at the name A2A used before 0.3'],
  ] as const) {
    routes.get(`/a2a/:agentId/.well-known/${name}`, ({ request, params }) => relay.card(request, params.agentId), {
      response: { 200: AgentAnswer },
      detail: relayDetail(summary),
    })
  }
}

/**
 * The dispatch paths in the app, for its document and for in-process callers; `gw serve` routes them
 * straight from Bun's router to the same handler (serve.ts). The handler authenticates the call
 * itself, so the routes take no macro; their detail documents what it checks.
 */
function dispatchRoutes(dispatch: Services['dispatch'], providerApi: Services['providerApi'], relay: A2aRelay) {
  const routes = new Elysia({ name: 'dispatch-routes' })
  for (const api of PROVIDER_APIS) {
    const handle = providerApi(api)
    routes.route(api.method, api.path, ({ request, server }) => handle(request, server ?? undefined), {
      parse: 'none',
      response: { 200: ProviderAnswer },
      detail: {
        summary: `${api.summary}; on the organization's own provider key`,
        security: [{ bearer: [] }],
        'x-scope': 'gateway',
        'x-wire-format': api.provider,
      } as Record<string, unknown>,
    })
  }
  // Elysia registers in place: the loop keeps the dispatch table the one list of these paths.
  for (const path of DISPATCH_PATHS) {
    const handle = dispatch(path)
    routes.post(path, ({ request, server }) => handle(request, server ?? undefined), {
      parse: 'none',
      response: { 200: ProviderAnswer },
      detail: {
        summary: DISPATCH_ROUTES[path].summary,
        security: [{ bearer: [] }],
        'x-scope': 'gateway',
        'x-wire-format': DISPATCH_ROUTES[path].format,
      } as Record<string, unknown>,
    })
  }
  // The A2A relay is a path outside /v1 as these are, registered in place so the app's type stays shallow.
  a2aRelayRoutes(routes, relay)
  return routes
}

/**
 * gw's own MCP endpoint (Streamable HTTP, stateless). The gateway answers every method itself, in
 * JSON-RPC: a refusal of the credential as much as a method the transport has no use for without sessions.
 */
function mcpRoutes(gateway: Services['mcpGateway']) {
  const handle = ({ request }: { request: Request }) => gateway.handle(request)
  const detail = (summary: string) =>
    ({ summary, security: [{ bearer: [] }], 'x-scope': 'gateway', 'x-wire-format': 'mcp' }) as Record<string, unknown>
  const answer = { 200: ProviderAnswer }
  return new Elysia({ name: 'mcp-routes' })
    .post('/mcp', handle, {
      parse: 'none',
      response: answer,
      detail: detail(
        "MCP (Streamable HTTP, JSON answers): tools/list lists the organization's servers' tools as <server>__<tool>, tools/call relays a call",
      ),
    })
    .get('/mcp', handle, { response: answer, detail: detail('405: no sessions, so no stream of server-initiated messages') })
    .delete('/mcp', handle, { response: answer, detail: detail('405: no sessions to end') })
}

/**
 * A plugin whose routes the app's type does not list: the app's type already holds as many routes as
 * TypeScript's instantiation depth allows (TS2589 past it). Nothing reads these routes' types; the
 * document and the tests see them at run time.
 */
const untyped = (plugin: { routes: unknown }) => plugin as unknown as Elysia

/** The composition root: every route of gw, wired to its services. No module-level singletons. */
export function createApp(deps: AppDeps, services: Services = createServices(deps)) {
  const gate = authz(services.authenticator, new AuditRecorder(deps.store, deps.log, deps.now))
  // Every module is used by this app directly: each level of plugins registers every route once more,
  // and start-up time is mostly route registration.
  // normalize: false: a body with an unknown field is refused where a schema says so, never silently trimmed.
  const app = new Elysia({ normalize: false })
    .use(errorMapper(deps.log))
    .use(storableUrl)
    .use(
      openapi({
        // No viewer: the plugin's viewers load their scripts from a CDN, and gw must work air-gapped.
        provider: null,
        // The plugin skips any path with a dot as a static file; ours (`audit.csv`) are API routes.
        exclude: { staticFile: false },
        path: '/openapi',
        specPath: '/openapi/json',
        documentation: {
          info: { title: 'gw', version: VERSION, description: 'Model gateway and management API' },
          components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer' } } },
        },
      }),
    )
    .use(healthRoutes(services.health))
    .use(authRoutes(gate, services.auth))
    .use(organizationRoutes(gate, services.organizations, services.settings))
    .use(rateLimitRoutes(gate, services.rateLimitRules))
    .use(modelPriceRoutes(gate, services.modelPrices))
    .use(apiKeyRoutes(gate, services.apiKeys, services.mcpConnections))
    .use(providerKeyRoutes(gate, services.providerKeys))
    .use(auditRoutes(gate, services.audit))
    .use(memberRoutes(gate, services.members))
    .use(roleRoutes(gate, services.roles))
    .use(ownershipRoutes(gate, services.ownership))
    .use(teamRoutes(gate, services.teams))
    .use(savedViewRoutes(gate, services.savedViews))
    .use(ssoRoutes(gate, services.sso))
    .use(trafficRoutes(gate, services.traffic, services.annotations, services.gatewayTest))
    .use(analyticsRoutes(gate, services.analytics, services.grouped))
    .use(groupedRoutes(gate, services.grouped))
    .use(securityRoutes(gate, services.security))
    .use(relayedCallRoutes(gate, services.relayedCalls))
    .use(budgetRoutes(gate, services.budgetActions, services.budgets))
    .use(fallbackChainRoutes(gate, services.fallbackChains))
    .use(governanceRoutes(gate, services.governance))
    .use(gatewayInfoRoutes(gate, services.gatewayInfo))
    .use(webhookRoutes(gate, services.webhooks))
    .use(integrationRoutes(gate, services.integrations))
    .use(mcpServerRoutes(gate, services.mcpServers))
    .use(a2aAgentRoutes(gate, services.a2aAgents))
    .use(dispatchRoutes(services.dispatch, services.providerApi, services.a2aRelay))
  // Registered in place, beside the chain: one more link in it is more than TypeScript can type (TS2589).
  app.use(untyped(toolRateRoutes(gate, services.toolRates)))
  app.use(untyped(providerRoutes(gate, services.providers)))
  app.use(untyped(mcpRoutes(services.mcpGateway)))
  // Answers 404 without GW_METRICS_TOKEN: the main port may face the internet.
  app.get('/metrics', ({ request }) => metricsAnswer(deps.metrics, deps.metricsToken, request.headers.get('authorization')), {
    detail: { hide: true },
  })
  const whole = app.use(catalogueStubs(gate, app.routes))
  checkAgainstCatalogue(whole.routes)
  return whole
}

export type App = ReturnType<typeof createApp>
