import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import {
  CreateServerBody,
  DiscoverBody,
  DiscoveryView,
  PlatformServerBody,
  PlatformServerParams,
  PlatformServerView,
  ProbeView,
  ServerParams,
  ServerView,
  UpdateServerBody,
} from './model'
import type { McpServersService } from './service'

/** The MCP server registry (spec 4.6 `governance.write`; the lists `org.read`). */
export const mcpServerRoutes = (authz: Authz, servers: McpServersService) =>
  new Elysia({ name: 'mcp-server-routes' })
    .use(authz)
    .get('/v1/mcp/servers', ({ principal }) => answer(servers.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(ServerView)),
      detail: { summary: "The organization's registered MCP servers; tokens only by their hint" },
    })
    .post('/v1/mcp/servers', ({ principal, body }) => answerCreated(servers.create(principal, body)), {
      catalogued: true,
      body: CreateServerBody,
      response: Created(ServerView),
      detail: { summary: 'Register an MCP server (its URL must pass the egress policy; 409 when the name is taken)' },
    })
    .post('/v1/mcp/servers/discover', ({ principal, body }) => answer(servers.discover(principal, body.url)), {
      catalogued: true,
      body: DiscoverBody,
      response: Ok(DiscoveryView),
      detail: {
        summary:
          'A draft registration from what a server publishes (its initialize answer, its protected-resource document); nothing is stored',
      },
    })
    .patch('/v1/mcp/servers/:id', ({ principal, params, body }) => answer(servers.update(principal, params.id, body)), {
      catalogued: true,
      params: ServerParams,
      body: UpdateServerBody,
      response: Ok(ServerView),
      detail: { summary: 'Change a registered MCP server: what the body names; auth is replaced whole' },
    })
    .delete('/v1/mcp/servers/:id', ({ principal, params }) => answer(servers.remove(principal, params.id)), {
      catalogued: true,
      params: ServerParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a registered MCP server and its sealed token' },
    })
    .post('/v1/mcp/servers/:id/probe', ({ principal, params }) => answer(servers.probe(principal, params.id)), {
      catalogued: true,
      params: ServerParams,
      response: Ok(ProbeView),
      detail: {
        summary:
          'Connect now (initialize, tools/list, 10 s at most) and say how it went: a server that cannot be reached or fails is ok: false',
      },
    })
    .get('/v1/mcp/platform-servers', ({ principal }) => answer(servers.platformServers(principal)), {
      catalogued: true,
      response: Ok(t.Array(PlatformServerView)),
      detail: { summary: "The built-in catalogue of well-known MCP servers, with the organization's registration of each" },
    })
    .put(
      '/v1/mcp/platform-servers/:serverId',
      ({ principal, params, body }) => answer(servers.setPlatformServer(principal, params.serverId, body)),
      {
        catalogued: true,
        params: PlatformServerParams,
        body: PlatformServerBody,
        response: Ok(PlatformServerView),
        detail: { summary: 'Switch a catalogue server on (registered from the catalogue) or off (kept, disabled)' },
      },
    )
