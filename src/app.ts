import { openapi } from '@elysiajs/openapi'
import { Elysia, t } from 'elysia'
import type { A2aRelay } from './a2a/relay'
import { AuditRecorder } from './audit/recorder'
import { DISPATCH_PATHS, DISPATCH_ROUTES, PROVIDER_APIS } from './gateway/dispatch-routes'
import { authz } from './http/authz'
import { errorMapper } from './http/error-mapper'
import { storableUrl } from './http/storable-text'
import { a2aAgentRoutes } from './modules/a2a-agents/routes'
import { analyticsRoutes, groupedRoutes } from './modules/analytics/routes'
import { apiKeyRoutes } from './modules/api-keys/routes'
import { auditRoutes } from './modules/audit/routes'
import { authRoutes } from './modules/auth/routes'
import { budgetRoutes } from './modules/budgets/routes'
import { fallbackChainRoutes } from './modules/fallback-chains/routes'
import { gatewayInfoRoutes } from './modules/gateway-info/routes'
import { governanceRoutes } from './modules/governance/routes'
import { healthRoutes } from './modules/health/routes'
import { integrationRoutes } from './modules/integrations/routes'
import { mcpServerRoutes } from './modules/mcp-servers/routes'
import { memberRoutes } from './modules/members/routes'
import { modelPriceRoutes } from './modules/model-prices/routes'
import { organizationRoutes } from './modules/organization/routes'
import { ownershipRoutes } from './modules/ownership/routes'
import { providerKeyRoutes } from './modules/provider-keys/routes'
import { providerRoutes } from './modules/providers/routes'
import { rateLimitRoutes } from './modules/rate-limits/routes'
import { relayedCallRoutes } from './modules/relayed-calls/routes'
import { roleRoutes } from './modules/roles/routes'
import { catalogueStubs, checkAgainstCatalogue } from './modules/router'
import { savedViewRoutes } from './modules/saved-views/routes'
import { securityRoutes } from './modules/security/routes'
import { ssoRoutes } from './modules/sso/routes'
import { teamRoutes } from './modules/teams/routes'
import { toolRateRoutes } from './modules/tool-rates/routes'
import { trafficRoutes } from './modules/traffic/routes'
import { webhookRoutes } from './modules/webhooks/routes'
import { metricsAnswer } from './observability/observer'
import { type AppDeps, createServices, type Services } from './services'
import { VERSION } from './version'

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
