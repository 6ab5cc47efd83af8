import { Maybe } from '../../query/model'
import { t } from '../../util/typebox'

export const MAX_URL_CHARS = 2048

const Name = t.String({
  minLength: 1,
  maxLength: 64,
  pattern: '^[a-z0-9_-]{1,64}$',
  description: "what access rules name the agent by ({kind: 'agent', id: <name>}); unique in the organization",
  error: 'name must be 1 to 64 characters of a-z, 0-9, _ and -',
})

const Url = t.String({
  minLength: 1,
  maxLength: MAX_URL_CHARS,
  pattern: '^[Hh][Tt][Tt][Pp][Ss]?://',
  description:
    "the agent's A2A JSON-RPC endpoint, its card under /.well-known/; https:// (http:// only for hosts the operator allows in GW_EGRESS_ALLOW_HOSTS)",
  error: `url must be an http:// or https:// URL of at most ${MAX_URL_CHARS} characters`,
})

export const CreateAgentBody = t.Object({ name: Name, url: Url }, { additionalProperties: false })
export type CreateAgentInput = typeof CreateAgentBody.static

export const UpdateAgentBody = t.Object({ name: t.Optional(Name), url: t.Optional(Url) }, { additionalProperties: false })
export type UpdateAgentInput = typeof UpdateAgentBody.static

// A key goes into an Authorization header: visible ASCII only, which is also all a bearer token holds.
export const AgentKeyBody = t.Object(
  {
    key: t.String({
      minLength: 1,
      maxLength: 4096,
      pattern: '^[\\x21-\\x7e]+$',
      description: 'sent to the agent as `Authorization: Bearer <key>`; stored sealed, never shown again',
      error: 'key must be 1 to 4096 visible ASCII characters',
    }),
  },
  { additionalProperties: false },
)

export const AgentParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

const Card = t.Record(t.String(), t.Unknown(), {
  description: "the agent's card as the last successful probe fetched it (name, skills and the rest)",
})

export const AgentView = t.Object({
  id: t.String(),
  name: t.String(),
  url: t.String(),
  hasKey: t.Boolean({ description: 'whether gw holds a key to send to the agent; the key itself is never shown' }),
  keyHint: t.Optional(t.String({ description: "the key's first and last four characters" })),
  card: Maybe(Card),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const ProbeView = t.Object({
  ok: t.Boolean({ description: 'the agent published a valid A2A agent card' }),
  card: Maybe(Card),
  latencyMs: t.Number(),
  error: Maybe(t.String({ description: 'why the card could not be fetched, or what is wrong with it' })),
})
