import type { Permission } from './permissions'

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE'

/** One management route of spec section 4.6: the path as the spec writes it, `{name}` for a parameter. */
export type CatalogueRoute = readonly [method: HttpMethod, path: string, permission: Permission]

/**
 * The truth for route -> permission (spec 4.6): the router, the permission macro, the OpenAPI document
 * and the permission-matrix tests all read this table. A route appears here exactly once.
 */
export const ROUTE_CATALOGUE: readonly CatalogueRoute[] = [
  // org.read
  ['GET', '/v1/a2a/agents', 'org.read'],
  ['GET', '/v1/api-keys/scopes/entitlement', 'org.read'],
  ['GET', '/v1/governance/access-default', 'org.read'],
  ['GET', '/v1/governance/access-rules', 'org.read'],
  ['POST', '/v1/governance/access-rules/audit', 'org.read'],
  ['GET', '/v1/governance/entitlement', 'org.read'],
  ['GET', '/v1/mcp-connections', 'org.read'],
  ['POST', '/v1/mcp-connections/authorize', 'org.read'],
  ['POST', '/v1/mcp-connections/consent', 'org.read'],
  ['GET', '/v1/mcp-connections/settings', 'org.read'],
  ['DELETE', '/v1/mcp-connections/{grantId}', 'org.read'],
  ['GET', '/v1/mcp/servers', 'org.read'],
  ['POST', '/v1/mcp/upstream/connect', 'org.read'],
  ['GET', '/v1/mcp/upstream/connect/{handle}', 'org.read'],
  ['POST', '/v1/mcp/upstream/connect/{handle}/continue', 'org.read'],
  ['GET', '/v1/mcp/upstream/connections', 'org.read'],
  ['DELETE', '/v1/mcp/upstream/connections/{connectionId}', 'org.read'],
  ['POST', '/v1/organization/user/accept_terms', 'org.read'],
  ['GET', '/v1/organization/{id}/permissions/me', 'org.read'],
  ['GET', '/v1/organization/{id}/roles', 'org.read'],
  ['GET', '/v1/organization/{id}/roles/entitlement', 'org.read'],
  ['GET', '/v1/organization/{id}/sso/entitlement', 'org.read'],
  ['GET', '/v1/team', 'org.read'],
  ['GET', '/v1/team/settings/visibility', 'org.read'],
  ['GET', '/v1/team/{teamId}/members', 'org.read'],
  ['GET', '/v1/tool-rates', 'org.read'],

  // traffic.read
  ['POST', '/v1/a2a/calls', 'traffic.read'],
  ['POST', '/v1/a2a/summary', 'traffic.read'],
  ['POST', '/v1/budget/actions/breakdown', 'traffic.read'],
  ['POST', '/v1/budget/actions/over-time', 'traffic.read'],
  ['POST', '/v1/dashboard/scores/query', 'traffic.read'],
  ['POST', '/v1/dashboard/verdicts', 'traffic.read'],
  ['POST', '/v1/mcp/filter-options', 'traffic.read'],
  ['POST', '/v1/mcp/summary', 'traffic.read'],
  ['POST', '/v1/mcp/tool-calls', 'traffic.read'],
  ['POST', '/v1/metrics/activeUsers', 'traffic.read'],
  ['POST', '/v1/metrics/averageLatency', 'traffic.read'],
  ['POST', '/v1/metrics/averageTimeToFirstToken', 'traffic.read'],
  ['POST', '/v1/metrics/averageTokensPerRequest', 'traffic.read'],
  ['POST', '/v1/metrics/cacheSavings', 'traffic.read'],
  ['POST', '/v1/metrics/costEfficiency', 'traffic.read'],
  ['POST', '/v1/metrics/costOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/costPerTokenOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/country', 'traffic.read'],
  ['POST', '/v1/metrics/errorBreakdown', 'traffic.read'],
  ['POST', '/v1/metrics/errorOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/latencyOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/models', 'traffic.read'],
  ['POST', '/v1/metrics/modelsOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/propertyAggregation', 'traffic.read'],
  ['POST', '/v1/metrics/quantiles', 'traffic.read'],
  ['POST', '/v1/metrics/requestCount', 'traffic.read'],
  ['POST', '/v1/metrics/requestOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/requestStatusOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/spendTrend', 'traffic.read'],
  ['POST', '/v1/metrics/threatsOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/timeToFirstToken', 'traffic.read'],
  ['POST', '/v1/metrics/tokensOverTime', 'traffic.read'],
  ['POST', '/v1/metrics/totalCost', 'traffic.read'],
  ['POST', '/v1/metrics/totalRequests', 'traffic.read'],
  ['POST', '/v1/metrics/totalThreats', 'traffic.read'],
  ['POST', '/v1/metrics/usersOverTime', 'traffic.read'],
  ['POST', '/v1/property/hidden/query', 'traffic.read'],
  ['POST', '/v1/property/properties/over-time', 'traffic.read'],
  ['POST', '/v1/property/query', 'traffic.read'],
  ['POST', '/v1/property/{propertyKey}/search', 'traffic.read'],
  ['POST', '/v1/property/{propertyKey}/top-costs/query', 'traffic.read'],
  ['POST', '/v1/property/{propertyKey}/top-requests/query', 'traffic.read'],
  ['POST', '/v1/providers', 'traffic.read'],
  ['POST', '/v1/request/count/query', 'traffic.read'],
  ['POST', '/v1/request/query', 'traffic.read'],
  ['POST', '/v1/request/query-clickhouse', 'traffic.read'],
  ['POST', '/v1/request/query-ids', 'traffic.read'],
  ['POST', '/v1/request/{requestId}/assets/{assetId}', 'traffic.read'],
  ['POST', '/v1/security/pii/over-time', 'traffic.read'],
  ['POST', '/v1/security/pii/recent', 'traffic.read'],
  ['POST', '/v1/security/pii/summary', 'traffic.read'],
  ['POST', '/v1/session/query', 'traffic.read'],
  ['POST', '/v1/spend/by', 'traffic.read'],
  ['POST', '/v1/test/gateway-request', 'traffic.read'],
  ['POST', '/v1/user/metrics-overview/query', 'traffic.read'],
  ['POST', '/v1/user/metrics/query', 'traffic.read'],
  ['POST', '/v1/user/query', 'traffic.read'],

  // traffic.annotate
  ['POST', '/v1/request/{requestId}/feedback', 'traffic.annotate'],
  ['PUT', '/v1/request/{requestId}/property', 'traffic.annotate'],
  ['POST', '/v1/request/{requestId}/score', 'traffic.annotate'],
  ['POST', '/v1/session/{sessionId}/feedback', 'traffic.annotate'],
  ['POST', '/v1/session/{sessionId}/tag', 'traffic.annotate'],

  // org.settings.write
  ['POST', '/v1/filter', 'org.settings.write'],
  ['DELETE', '/v1/filter/{id}', 'org.settings.write'],
  ['PATCH', '/v1/filter/{id}', 'org.settings.write'],
  ['PUT', '/v1/mcp-connections/settings', 'org.settings.write'],
  ['POST', '/v1/organization/body-retention-config', 'org.settings.write'],
  ['POST', '/v1/organization/onboard', 'org.settings.write'],
  ['POST', '/v1/organization/pii-config', 'org.settings.write'],
  ['POST', '/v1/organization/update_onboarding', 'org.settings.write'],
  ['POST', '/v1/organization/{id}/create_filter', 'org.settings.write'],
  ['DELETE', '/v1/organization/{id}/sso', 'org.settings.write'],
  ['GET', '/v1/organization/{id}/sso', 'org.settings.write'],
  ['PUT', '/v1/organization/{id}/sso', 'org.settings.write'],
  ['POST', '/v1/organization/{id}/sso/test', 'org.settings.write'],
  ['POST', '/v1/organization/{id}/sso/verify-domain', 'org.settings.write'],
  ['POST', '/v1/organization/{id}/update', 'org.settings.write'],
  ['POST', '/v1/organization/{id}/update_filter', 'org.settings.write'],
  ['POST', '/v1/property/hide', 'org.settings.write'],
  ['POST', '/v1/property/restore', 'org.settings.write'],

  // org.members.write
  ['POST', '/v1/organization/{id}/add_member', 'org.members.write'],
  ['DELETE', '/v1/organization/{id}/remove_member', 'org.members.write'],
  ['POST', '/v1/organization/{id}/roles', 'org.members.write'],
  ['PATCH', '/v1/organization/{id}/roles/{roleId}', 'org.members.write'],
  ['POST', '/v1/organization/{id}/roles/{roleId}/archive', 'org.members.write'],
  ['POST', '/v1/organization/{id}/update_member', 'org.members.write'],
  ['POST', '/v1/team', 'org.members.write'],
  ['PUT', '/v1/team/settings/visibility', 'org.members.write'],
  ['DELETE', '/v1/team/{teamId}', 'org.members.write'],
  ['PUT', '/v1/team/{teamId}', 'org.members.write'],
  ['DELETE', '/v1/team/{teamId}/member', 'org.members.write'],
  ['POST', '/v1/team/{teamId}/member', 'org.members.write'],

  // spend_controls.write
  ['DELETE', '/v1/budget/alert-config', 'spend_controls.write'],
  ['PUT', '/v1/budget/alert-config', 'spend_controls.write'],
  ['POST', '/v1/budget/breach', 'spend_controls.write'],
  ['DELETE', '/v1/budget/customer', 'spend_controls.write'],
  ['PUT', '/v1/budget/customer', 'spend_controls.write'],
  ['DELETE', '/v1/budget/customer-price', 'spend_controls.write'],
  ['PUT', '/v1/budget/customer-price', 'spend_controls.write'],
  ['POST', '/v1/budget/downgrade-mappings', 'spend_controls.write'],
  ['DELETE', '/v1/budget/downgrade-mappings/{mappingId}', 'spend_controls.write'],
  ['PUT', '/v1/budget/member/{memberUserId}', 'spend_controls.write'],
  ['POST', '/v1/budget/notify', 'spend_controls.write'],
  ['PUT', '/v1/budget/velocity-limit', 'spend_controls.write'],
  ['DELETE', '/v1/budget/velocity-limit/{id}', 'spend_controls.write'],
  ['PUT', '/v1/budget/window-limit', 'spend_controls.write'],
  ['DELETE', '/v1/budget/window-limit/{id}', 'spend_controls.write'],
  ['PUT', '/v1/budget/window-settings', 'spend_controls.write'],
  ['POST', '/v1/chargeback/{month}/close', 'spend_controls.write'],
  ['DELETE', '/v1/model-prices', 'spend_controls.write'],
  ['PUT', '/v1/model-prices', 'spend_controls.write'],
  ['PUT', '/v1/model-prices/import', 'spend_controls.write'],
  ['POST', '/v1/rate-limits', 'spend_controls.write'],
  ['DELETE', '/v1/rate-limits/{ruleId}', 'spend_controls.write'],
  ['PUT', '/v1/rate-limits/{ruleId}', 'spend_controls.write'],
  ['POST', '/v1/recommendations/{recommendationId}/apply', 'spend_controls.write'],
  ['POST', '/v1/recommendations/{recommendationId}/dismiss', 'spend_controls.write'],
  ['PUT', '/v1/tool-rates', 'spend_controls.write'],
  ['DELETE', '/v1/tool-rates/{id}', 'spend_controls.write'],
  ['DELETE', '/v1/value/rate', 'spend_controls.write'],
  ['PUT', '/v1/value/rate', 'spend_controls.write'],

  // gateway_config.write
  ['POST', '/v1/gateway/fallback-chains', 'gateway_config.write'],
  ['DELETE', '/v1/gateway/fallback-chains/{chainId}', 'gateway_config.write'],
  ['PUT', '/v1/gateway/fallback-chains/{chainId}', 'gateway_config.write'],

  // keys.write
  ['POST', '/v1/api-keys', 'keys.write'],
  ['POST', '/v1/api-keys/proxy-key', 'keys.write'],
  ['PUT', '/v1/api-keys/proxy-key/{proxyKeyId}/scopes', 'keys.write'],
  ['DELETE', '/v1/api-keys/{apiKeyId}', 'keys.write'],
  ['PATCH', '/v1/api-keys/{apiKeyId}', 'keys.write'],
  ['PUT', '/v1/api-keys/{apiKeyId}/scopes', 'keys.write'],
  ['GET', '/v1/mcp-connections/org', 'keys.write'],
  ['GET', '/v1/mcp/upstream/connections/org', 'keys.write'],

  // provider_keys.write
  ['POST', '/v1/api-keys/provider-key', 'provider_keys.write'],
  ['DELETE', '/v1/api-keys/provider-key/{providerKeyId}', 'provider_keys.write'],
  ['GET', '/v1/api-keys/provider-key/{providerKeyId}', 'provider_keys.write'],
  ['PATCH', '/v1/api-keys/provider-key/{providerKeyId}', 'provider_keys.write'],
  ['GET', '/v1/api-keys/provider-keys', 'provider_keys.write'],
  ['POST', '/v1/vault/add', 'provider_keys.write'],
  ['GET', '/v1/vault/key/{providerKeyId}', 'provider_keys.write'],
  ['GET', '/v1/vault/keys', 'provider_keys.write'],
  ['PATCH', '/v1/vault/update/{id}', 'provider_keys.write'],

  // egress.write
  ['GET', '/v1/integration', 'egress.write'],
  ['POST', '/v1/integration', 'egress.write'],
  ['GET', '/v1/integration/slack/channels', 'egress.write'],
  ['GET', '/v1/integration/slack/settings', 'egress.write'],
  ['GET', '/v1/integration/type/{type}', 'egress.write'],
  ['GET', '/v1/integration/{integrationId}', 'egress.write'],
  ['POST', '/v1/integration/{integrationId}', 'egress.write'],
  ['POST', '/v1/integration/{integrationId}/stripe/test-meter-event', 'egress.write'],
  ['GET', '/v1/webhooks', 'egress.write'],
  ['POST', '/v1/webhooks', 'egress.write'],
  ['DELETE', '/v1/webhooks/{webhookId}', 'egress.write'],
  ['POST', '/v1/webhooks/{webhookId}/test', 'egress.write'],

  // governance.write
  ['POST', '/v1/a2a/agents', 'governance.write'],
  ['DELETE', '/v1/a2a/agents/{id}', 'governance.write'],
  ['PATCH', '/v1/a2a/agents/{id}', 'governance.write'],
  ['PUT', '/v1/a2a/agents/{id}/keys', 'governance.write'],
  ['POST', '/v1/a2a/agents/{id}/probe', 'governance.write'],
  ['PUT', '/v1/governance/access-default', 'governance.write'],
  ['POST', '/v1/governance/access-rules', 'governance.write'],
  ['DELETE', '/v1/governance/access-rules/{id}', 'governance.write'],
  ['PATCH', '/v1/governance/access-rules/{id}', 'governance.write'],
  ['PUT', '/v1/mcp/platform-servers/{serverId}', 'governance.write'],
  ['POST', '/v1/mcp/servers', 'governance.write'],
  ['POST', '/v1/mcp/servers/discover', 'governance.write'],
  ['DELETE', '/v1/mcp/servers/{id}', 'governance.write'],
  ['PATCH', '/v1/mcp/servers/{id}', 'governance.write'],
  ['POST', '/v1/mcp/servers/{id}/probe', 'governance.write'],

  // reports.read
  ['GET', '/v1/budget/breaches', 'reports.read'],
  ['GET', '/v1/budget/customer-prices', 'reports.read'],
  ['GET', '/v1/budget/customers', 'reports.read'],
  ['GET', '/v1/budget/summary', 'reports.read'],
  ['GET', '/v1/chargeback/{month}', 'reports.read'],
  ['GET', '/v1/credits/invoices', 'reports.read'],
  ['GET', '/v1/credits/spend/breakdown', 'reports.read'],
  ['GET', '/v1/unit-economics', 'reports.read'],
  ['GET', '/v1/value', 'reports.read'],
  ['GET', '/v1/value/rates', 'reports.read'],

  // audit.read
  ['GET', '/v1/organization/{id}/audit', 'audit.read'],
  ['GET', '/v1/organization/{id}/audit.csv', 'audit.read'],

  // billing.write
  ['POST', '/v1/stripe/cloud/checkout-session', 'billing.write'],
  ['POST', '/v1/stripe/payment-methods/setup-session', 'billing.write'],
  ['DELETE', '/v1/stripe/subscription/add-ons/{productType}', 'billing.write'],
  ['POST', '/v1/stripe/subscription/add-ons/{productType}', 'billing.write'],
  ['POST', '/v1/stripe/subscription/existing-customer/upgrade-to-growth', 'billing.write'],
  ['POST', '/v1/stripe/subscription/new-customer/upgrade-to-growth', 'billing.write'],
  ['POST', '/v1/stripe/subscription/undo-cancel-subscription', 'billing.write'],

  // playground.use
  ['GET', '/v1/playground/options', 'playground.use'],
  ['POST', '/v1/playground/servers/{serverId}/tools-check', 'playground.use'],
  ['POST', '/v1/playground/step', 'playground.use'],

  // ownership
  ['DELETE', '/v1/organization/delete', 'ownership'],
  ['PUT', '/v1/organization/{id}/sso/enforce', 'ownership'],
  ['POST', '/v1/organization/{id}/update_owner', 'ownership'],
  ['DELETE', '/v1/stripe/payment-methods/{paymentMethodId}', 'ownership'],
  ['POST', '/v1/stripe/subscription/cancel-subscription', 'ownership'],
  ['POST', '/v1/stripe/subscription/manage-subscription', 'ownership'],
  ['POST', '/v1/stripe/subscription/migrate-to-pro', 'ownership'],
]

/** `{id}` -> `:id`, the router's parameter syntax. */
export const toRouterPath = (specPath: string): string => specPath.replace(/\{(\w+)\}/g, ':$1')

export const routeKey = (method: string, routerPath: string): string => `${method} ${routerPath}`

/**
 * gw's own routes beyond the spec's, each with the permission it needs, held to the same rules as the
 * catalogue's (the gate reads it here, start-up checks it, the document shows it). Every one is
 * documented in docs/decisions.md.
 */
export const GW_ROUTES: readonly CatalogueRoute[] = [
  // Whether an organisation's streams end with the gw metadata frame by default.
  ['POST', '/v1/organization/stream-meta-config', 'org.settings.write'],
  // How long an organisation keeps its request records: the spec configures the bodies' retention only.
  ['POST', '/v1/organization/request-retention-config', 'org.settings.write'],
  // Who the members are: the spec names routes to add, change and remove a member, none to list them.
  ['GET', '/v1/organization/{id}/members', 'org.read'],
  // What was said of a session: the spec can rate and tag one, not read either back.
  ['GET', '/v1/session/{sessionId}/annotations', 'traffic.read'],
  // What was sent to a webhook and what waits: the spec lists webhooks, not their deliveries.
  ['GET', '/v1/webhooks/{webhookId}/deliveries', 'egress.write'],
  // What an organisation's model prices are: the spec can set, import and delete them, not list them.
  ['GET', '/v1/model-prices', 'org.read'],
  // What budgets follow: the spec sets the calendar windows, alerts and downgrades, and reads none back.
  ['GET', '/v1/budget/settings', 'reports.read'],
  // What an organisation's fallback chains are: the spec can create, replace and delete them, not list them.
  ['GET', '/v1/gateway/fallback-chains', 'org.read'],
  // Which step of a chain served its recent calls: the spec can change a chain, not see it work.
  ['GET', '/v1/gateway/fallback-chains/{chainId}/calls', 'traffic.read'],
  // Which MCP servers the built-in catalogue offers: the spec can switch one on by id, not list them.
  ['GET', '/v1/mcp/platform-servers', 'org.read'],
  // Which providers an organisation can call, and with what: the spec stores provider keys, and lists neither providers nor models with prices.
  ['GET', '/v1/gateway/providers', 'org.read'],
]

const PERMISSION_BY_ROUTE: ReadonlyMap<string, Permission> = new Map(
  [...ROUTE_CATALOGUE, ...GW_ROUTES].map(([method, path, permission]) => [routeKey(method, toRouterPath(path)), permission]),
)

/**
 * The permission the catalogue gives a registered route (`routerPath` as the router writes it, `:name`
 * for a parameter), or undefined when the route is not in the catalogue. HEAD is served by GET routes.
 */
export const catalogueOf = (method: string, routerPath: string): Permission | undefined =>
  PERMISSION_BY_ROUTE.get(routeKey(method === 'HEAD' ? 'GET' : method, routerPath))
