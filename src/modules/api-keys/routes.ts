import { Elysia } from 'elysia'
import type { Authz } from '../../http/authz'
import { CreateKeyBody, CreateProxyKeyBody, KeyParams, ProxyKeyParams, ScopesBody, UpdateKeyBody } from './model'
import type { ApiKeysService, McpConnectionsView } from './service'

/** API keys (spec 4.6 `keys.write`); listing is open to every principal of the organisation, metadata only. */
export const apiKeyRoutes = (authz: Authz, keys: ApiKeysService, mcp: McpConnectionsView) =>
  new Elysia({ name: 'api-key-routes' })
    .use(authz)
    .get('/v1/api-keys', async ({ principal }) => ({ data: await keys.list(principal), error: null }), {
      authenticated: true,
      detail: { summary: "The organization's API keys (metadata only)" },
    })
    // The two organisation-wide MCP listings sit under keys.write in the spec: they show who holds access.
    .get('/v1/mcp-connections/org', async ({ principal }) => ({ data: await mcp.connections(principal.orgId), error: null }), {
      catalogued: true,
      detail: { summary: "Every MCP client grant of the organization's people" },
    })
    .get(
      '/v1/mcp/upstream/connections/org',
      async ({ principal }) => ({ data: await mcp.upstream(principal.orgId), error: null }),
      {
        catalogued: true,
        detail: { summary: "Every upstream MCP connection held for the organization's people" },
      },
    )
    .get('/v1/api-keys/scopes/entitlement', ({ principal }) => ({ data: keys.entitlement(principal), error: null }), {
      catalogued: true,
      detail: { summary: 'Which scopes API keys may carry' },
    })
    .post(
      '/v1/api-keys',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await keys.create(principal, body), error: null }
      },
      { catalogued: true, body: CreateKeyBody, detail: { summary: 'Create an API key; the key is shown once' } },
    )
    .patch(
      '/v1/api-keys/:apiKeyId',
      async ({ principal, params, body }) => ({
        data: await keys.update(principal, params.apiKeyId, body),
        error: null,
      }),
      {
        catalogued: true,
        params: KeyParams,
        body: UpdateKeyBody,
        detail: { summary: 'Rename a key or change its expiry' },
      },
    )
    .delete(
      '/v1/api-keys/:apiKeyId',
      async ({ principal, params }) => ({
        data: await keys.revoke(principal, params.apiKeyId),
        error: null,
      }),
      { catalogued: true, params: KeyParams, detail: { summary: 'Revoke a key' } },
    )
    .post(
      '/v1/api-keys/proxy-key',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await keys.createProxy(principal, body), error: null }
      },
      {
        catalogued: true,
        body: CreateProxyKeyBody,
        detail: { summary: 'Create a proxy key bound to one provider key; shown once' },
      },
    )
    .put(
      '/v1/api-keys/proxy-key/:proxyKeyId/scopes',
      async ({ principal, params, body }) => ({
        data: await keys.setProxyScopes(principal, params.proxyKeyId, body.scopes),
        error: null,
      }),
      { catalogued: true, params: ProxyKeyParams, body: ScopesBody, detail: { summary: "Replace a proxy key's scopes" } },
    )
    .put(
      '/v1/api-keys/:apiKeyId/scopes',
      async ({ principal, params, body }) => ({
        data: await keys.setScopes(principal, params.apiKeyId, body.scopes),
        error: null,
      }),
      { catalogued: true, params: KeyParams, body: ScopesBody, detail: { summary: "Replace a key's scopes" } },
    )
