import { Maybe } from '../../query/model'
import { oneOf, t } from '../../util/typebox'

export const MCP_TRANSPORTS = ['streamable_http', 'sse'] as const
export const MAX_GLOBS = 100
export const MAX_GLOB_CHARS = 200
export const MAX_URL_CHARS = 2048

// The name becomes the tool prefix `<name>__<tool>`: a `__` inside it, or a trailing `_`, would make the
// split of a prefixed tool name ambiguous.
const NAME_PATTERN = '^(?!.*__)(?!.*_$)[a-z0-9_-]{1,64}$'
const NAME_ERROR =
  'name must be 1 to 64 characters of a-z, 0-9, _ and -, without "__" and not ending in "_" (it prefixes the tools as <name>__<tool>)'

const Name = t.String({
  minLength: 1,
  maxLength: 64,
  pattern: NAME_PATTERN,
  description: 'the tool prefix: tools are offered as `<name>__<tool>`; unique in the organization',
  error: NAME_ERROR,
})

const Url = t.String({
  minLength: 1,
  maxLength: MAX_URL_CHARS,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description: "the server's MCP endpoint; https:// (http:// only for hosts the operator allows in GW_EGRESS_ALLOW_HOSTS)",
  error: `url must be an http:// or https:// URL of at most ${MAX_URL_CHARS} characters`,
})

const Transport = oneOf(MCP_TRANSPORTS, {
  description: 'Streamable HTTP, or the older HTTP+SSE transport',
  error: `transport must be ${MCP_TRANSPORTS.join(' or ')}`,
})

// A token goes into an Authorization header: visible ASCII only, which is also all a bearer token holds.
const Token = t.String({
  minLength: 1,
  maxLength: 4096,
  pattern: '^[\\x21-\\x7e]+$',
  description: 'sent as `Authorization: Bearer <token>`; stored sealed, never shown again',
  error: 'auth.token must be 1 to 4096 visible ASCII characters',
})

export const Auth = t.Union(
  [
    t.Object({ kind: t.Literal('none') }, { additionalProperties: false }),
    t.Object({ kind: t.Literal('bearer'), token: Token }, { additionalProperties: false }),
  ],
  {
    description: 'how gw authenticates to the server; absent when creating: none',
    error: 'auth must be {"kind": "none"} or {"kind": "bearer", "token": "..."}',
  },
)
export type AuthInput = typeof Auth.static

const Globs = (field: string, description: string) =>
  t.Array(
    t.String({
      minLength: 1,
      maxLength: MAX_GLOB_CHARS,
      pattern: '^[^\\u0000-\\u001f\\u007f-\\u009f]+$',
      error: `${field} must hold globs of 1 to ${MAX_GLOB_CHARS} characters without control characters`,
    }),
    {
      maxItems: MAX_GLOBS,
      description,
      error: `${field} must be at most ${MAX_GLOBS} globs of 1 to ${MAX_GLOB_CHARS} characters`,
    },
  )

const ToolAllow = Globs('toolAllow', "the server's tools offered, by glob (`*` any run of characters); empty or absent: all")
const ToolDeny = Globs('toolDeny', 'tools never offered, by glob; a deny wins over an allow')

export const CreateServerBody = t.Object(
  {
    name: Name,
    url: Url,
    transport: Transport,
    // Most servers take no credentials: asking for {"kind": "none"} to say so only made registering fail.
    auth: t.Optional(Auth),
    toolAllow: t.Optional(ToolAllow),
    toolDeny: t.Optional(ToolDeny),
  },
  { additionalProperties: false },
)
export type CreateServerInput = typeof CreateServerBody.static

export const UpdateServerBody = t.Object(
  {
    name: t.Optional(Name),
    url: t.Optional(Url),
    transport: t.Optional(Transport),
    auth: t.Optional(Auth),
    toolAllow: t.Optional(ToolAllow),
    toolDeny: t.Optional(ToolDeny),
    enabled: t.Optional(t.Boolean({ error: 'enabled must be true or false' })),
  },
  { additionalProperties: false },
)
export type UpdateServerInput = typeof UpdateServerBody.static

export const ServerParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
export const PlatformServerParams = t.Object({ serverId: t.String({ minLength: 1, maxLength: 64 }) })

export const PlatformServerBody = t.Object(
  {
    enabled: t.Boolean({ error: 'enabled must be true or false' }),
    auth: t.Optional(
      t.Object(
        { kind: t.Literal('bearer'), token: Token },
        { additionalProperties: false, error: 'auth must be {"kind": "bearer", "token": "..."}' },
      ),
    ),
  },
  { additionalProperties: false },
)
export type PlatformServerInput = typeof PlatformServerBody.static

export const DiscoverBody = t.Object({ url: Url }, { additionalProperties: false })

export const ServerView = t.Object({
  id: t.String(),
  name: t.String(),
  url: t.String(),
  transport: t.String(),
  auth: t.Object({
    kind: t.String(),
    hint: t.Optional(t.String({ description: "the token's first and last four characters; the token itself is never shown" })),
  }),
  toolAllow: t.Array(t.String()),
  toolDeny: t.Array(t.String()),
  enabled: t.Boolean(),
  platformServerId: Maybe(
    t.String({ description: 'the platform catalogue entry it was made from; null when registered by hand' }),
  ),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

const ServerInfo = t.Object({ name: t.String(), version: t.String(), title: t.Optional(t.String()) })

export const ProbeView = t.Object({
  ok: t.Boolean({ description: 'the server answered initialize and tools/list' }),
  protocolVersion: Maybe(t.String()),
  serverInfo: Maybe(ServerInfo),
  tools: t.Array(t.Object({ name: t.String(), description: Maybe(t.String()) })),
  latencyMs: t.Number(),
  error: Maybe(t.String({ description: 'why the server could not be reached, or failed' })),
})

export const DiscoveryView = t.Object({
  name: t.String({ description: 'a valid name derived from what the server calls itself' }),
  url: t.String(),
  transport: t.String(),
  auth: t.Object({
    kind: t.String({ description: 'bearer when the server answered 401 or publishes a protected-resource document' }),
  }),
  serverInfo: Maybe(ServerInfo),
  protocolVersion: Maybe(t.String()),
  capabilities: Maybe(t.Record(t.String(), t.Unknown())),
  protectedResource: Maybe(
    t.Record(t.String(), t.Unknown(), { description: '/.well-known/oauth-protected-resource, as published' }),
  ),
  error: Maybe(t.String({ description: 'why the handshake failed, when it did for another reason than a 401' })),
})

export const PlatformServerView = t.Object({
  id: t.String(),
  name: t.String(),
  url: t.String(),
  transport: t.String(),
  auth: t.String({ description: "bearer: enabling it needs the organization's own token" }),
  description: t.String(),
  docs: t.String(),
  registration: Maybe(ServerView),
})
