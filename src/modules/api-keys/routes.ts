import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Ok } from '../../http/schema'
import {
  ApiKey,
  CreateKeyBody,
  CreateProxyKeyBody,
  IssuedApiKey,
  KeyParams,
  McpConnection,
  McpUpstreamConnection,
  ProxyKeyParams,
  ScopeEntitlement,
  ScopesBody,
  UpdateKeyBody,
} from './model'
import type { ApiKeysService, McpConnectionsView } from './service'

/** API keys (spec 4.6 `keys.write`); listing is open to every principal of the organisation, metadata only. */
export const apiKeyRoutes = (authz: Authz, keys: ApiKeysService, mcp: McpConnectionsView) =>
  new Elysia({ name: 'api-key-routes' })
    .use(authz)
    .get('/v1/api-keys', ({ principal }) => answer(keys.list(principal)), {
      authenticated: true,
      response: Ok(t.Array(ApiKey)),
      detail: { summary: "The organization's API keys (metadata only)" },
    })
    // The two organisation-wide MCP listings sit under keys.write in the spec: they show who holds access.
    .get('/v1/mcp-connections/org', ({ principal }) => answer(mcp.connections(principal.orgId)), {
      catalogued: true,
      response: Ok(t.Array(McpConnection)),
      detail: { summary: "Every MCP client grant of the organization's people" },
    })
    .get('/v1/mcp/upstream/connections/org', ({ principal }) => answer(mcp.upstream(principal.orgId)), {
      catalogued: true,
      response: Ok(t.Array(McpUpstreamConnection)),
      detail: { summary: "Every upstream MCP connection held for the organization's people" },
    })
    .get('/v1/api-keys/scopes/entitlement', ({ principal }) => answer(keys.entitlement(principal)), {
      catalogued: true,
      response: Ok(ScopeEntitlement),
      detail: { summary: 'Which scopes API keys may carry' },
    })
    .post('/v1/api-keys', ({ principal, body }) => answerCreated(keys.create(principal, body)), {
      catalogued: true,
      body: CreateKeyBody,
      response: Created(IssuedApiKey),
      detail: { summary: 'Create an API key; the key is shown once' },
    })
    .patch('/v1/api-keys/:apiKeyId', ({ principal, params, body }) => answer(keys.update(principal, params.apiKeyId, body)), {
      catalogued: true,
      params: KeyParams,
      body: UpdateKeyBody,
      response: Ok(ApiKey),
      detail: { summary: 'Rename a key or change its expiry' },
    })
    .delete('/v1/api-keys/:apiKeyId', ({ principal, params }) => answer(keys.revoke(principal, params.apiKeyId)), {
      catalogued: true,
      params: KeyParams,
      response: Ok(ApiKey),
      detail: { summary: 'Revoke a key' },
    })
    .post('/v1/api-keys/proxy-key', ({ principal, body }) => answerCreated(keys.createProxy(principal, body)), {
      catalogued: true,
      body: CreateProxyKeyBody,
      response: Created(IssuedApiKey),
      detail: { summary: 'Create a proxy key bound to one provider key; shown once' },
    })
    .put(
      '/v1/api-keys/proxy-key/:proxyKeyId/scopes',
      ({ principal, params, body }) => answer(keys.setProxyScopes(principal, params.proxyKeyId, body.scopes)),
      {
        catalogued: true,
        params: ProxyKeyParams,
        body: ScopesBody,
        response: Ok(ApiKey),
        detail: { summary: "Replace a proxy key's scopes" },
      },
    )
    .put(
      '/v1/api-keys/:apiKeyId/scopes',
      ({ principal, params, body }) => answer(keys.setScopes(principal, params.apiKeyId, body.scopes)),
      {
        catalogued: true,
        params: KeyParams,
        body: ScopesBody,
        response: Ok(ApiKey),
        detail: { summary: "Replace a key's scopes" },
      },
    )
