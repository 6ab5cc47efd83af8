/**
 * The composition root's first half: the services, built from the runtime's dependencies over what
 * serving needs (`serving.ts`). The CLI and the management API need these; `app.ts` lays the routes
 * over them, and `gw serve` imports both only when a request first needs them (serve.ts).
 */
import { A2aRelay } from './a2a/relay'
import { DEFAULT_FALLBACK_STATUSES, NEVER_FALLBACK_STATUSES } from './directory/chains'
import { PROVIDER_NAMES } from './directory/providers'
import { GatewayInfo } from './gateway/info'
import { operatorConfigured, resolveModel } from './gateway/providers/registry'
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
import { IntegrationsService } from './modules/integrations/service'
import { McpServersService } from './modules/mcp-servers/service'
import { MembersService } from './modules/members/service'
import { ModelPricesService } from './modules/model-prices/service'
import { OrganizationService } from './modules/organization/service'
import { OrganizationSettingsService } from './modules/organization/settings-service'
import { OwnershipService } from './modules/ownership/service'
import { ProviderKeysService } from './modules/provider-keys/service'
import { ProvidersService } from './modules/providers/service'
import { RelayedCallViews } from './modules/relayed-calls/views'
import { RolesService } from './modules/roles/service'
import { SavedViewsService } from './modules/saved-views/service'
import { SecurityViews } from './modules/security/service'
import { SsoService } from './modules/sso/service'
import { TeamsService } from './modules/teams/service'
import { ToolRatesService } from './modules/tool-rates/service'
import { AnnotationsService } from './modules/traffic/annotations'
import { GatewayTest } from './modules/traffic/gateway-test'
import { TrafficService } from './modules/traffic/service'
import { WebhooksService } from './modules/webhooks/service'
import { type AppDeps, createServing, type Serving } from './serving'

export type { AppDeps } from './serving'

/** The services, built once from the dependencies (over `serving` when the server has built it already). */
export function createServices(deps: AppDeps, serving: Serving = createServing(deps)) {
  const { shared, ...core } = serving
  const { hasher, issuer, vault, limiter, budgets, spendPolicies, recordRetention, egress, serviceUrls, maxBodyBytes } = shared
  const { authenticator, directory, accessPolicies, gateway, prices, deliverer } = core
  const gatewayInfo = new GatewayInfo({
    store: deps.store,
    meta: deps.meta,
    requestLog: deps.requestLog,
    metaTtlSeconds: deps.gateway.metaTtlSeconds,
    providers: deps.gateway.providers,
    now: deps.now,
  })
  const settings = new OrganizationSettingsService(deps.store, recordRetention, directory.callSettings, deps.now)
  const providerKeys = new ProviderKeysService(deps.store, vault, egress, directory.connections, deps.now)
  const fallbackChains = new FallbackChainsService(
    deps.store,
    { resolveModel, defaultStatuses: DEFAULT_FALLBACK_STATUSES, neverStatuses: NEVER_FALLBACK_STATUSES },
    directory.chains,
    deps.now,
  )
  return {
    ...core,
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
      costOf: async (requestId) => (await gatewayInfo.find(requestId))?.meta.requestCost,
      store: deps.store,
      now: deps.now,
    }),
    analytics: new AnalyticsService(deps.store, deps.now),
    grouped: new GroupedViews(deps.store, deps.usersFeature ?? true, deps.now),
    security: new SecurityViews(deps.store, deps.now),
    relayedCalls: new RelayedCallViews(deps.store, deps.now),
    budgetActions: new BudgetActionViews(deps.store, deps.now),
    budgets: new BudgetsService(deps.store, spendPolicies, budgets, recordRetention, deps.now),
    /** The organisations' fallback chains, and the gateway's reader of them (`ChainSource.chainFor`). */
    fallbackChains,
    governance: new GovernanceService(deps.store, accessPolicies, deps.now),
    sso: new SsoService(deps.store, vault, egress, deps.txtResolver, deps.now),
    settings,
    modelPrices: new ModelPricesService(deps.store, prices, deps.now),
    apiKeys: new ApiKeysService(deps.store, issuer, authenticator, deps.now),
    providerKeys,
    /** The providers as an organisation sees them: of the operator's configuration, only which are configured. */
    providers: new ProvidersService(
      deps.store,
      new Set(PROVIDER_NAMES.filter((name) => operatorConfigured(deps.gateway.providers, name))),
      prices,
    ),
    mcpConnections: new McpConnectionsView(deps.store),
    audit: new AuditService(deps.store, deps.log, deps.now),
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
    gatewayInfo,
  }
}

export type Services = ReturnType<typeof createServices>
