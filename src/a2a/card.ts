import { type Static, Type } from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import type { AgentCardDocument } from '../store/json-columns'
import { boundedText } from '../util/read-body'

/** A function with `fetch`'s signature: the egress policy's guarded fetch in gw, anything in tests. */
export type FetchLike = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/** Where an agent publishes its card: the current name first, then the one of A2A before 0.3. */
export const CARD_PATHS = ['.well-known/agent-card.json', '.well-known/agent.json'] as const

/** A card is a page of metadata; an agent answering more is refused before gw holds it all. */
const CARD_BYTES = 256 * 1024
const PROBE_TIMEOUT_MS = 10_000

const Skill = Type.Object({
  id: Type.String({ minLength: 1 }),
  name: Type.String({ minLength: 1 }),
  description: Type.String(),
  tags: Type.Array(Type.String()),
})

/**
 * The fields the A2A specification requires of an AgentCard; the rest (provider, security schemes,
 * extensions) is kept as the agent published it. Checked with TypeBox rather than a client library:
 * only the shape matters here, and the relay forwards JSON-RPC without interpreting it.
 */
export const AgentCard = Type.Object({
  name: Type.String({ minLength: 1 }),
  description: Type.String(),
  url: Type.String({ minLength: 1 }),
  version: Type.String({ minLength: 1 }),
  capabilities: Type.Object({}, { additionalProperties: true }),
  defaultInputModes: Type.Array(Type.String()),
  defaultOutputModes: Type.Array(Type.String()),
  skills: Type.Array(Skill),
})
export type AgentCard = Static<typeof AgentCard>

export interface CardProbe {
  ok: boolean
  card: AgentCardDocument | null
  latencyMs: number
  error: string | null
}

/** Why a document is not an AgentCard, naming the first field that is wrong; undefined when it is one. */
export function cardProblem(document: unknown): string | undefined {
  if (typeof document !== 'object' || document === null || Array.isArray(document)) return 'the card is not a JSON object'
  const first = Value.Errors(AgentCard, document).First()
  if (!first) return undefined
  const field = first.path.replace(/^\//, '').replaceAll('/', '.') || 'the card'
  return `${field}: ${first.message.toLowerCase()}`
}

/** The address of a card under an agent's URL (its path kept: an agent may live below the host's root). */
export const cardUrl = (agentUrl: string, path: string): string => `${agentUrl.replace(/\/+$/, '')}/${path}`

/**
 * Fetches the agent's card, at its current well-known name and else at the older one, and checks it.
 * Never throws: an agent that cannot be reached, answers badly or publishes an invalid card is ok: false
 * with the reason, so the one who registered it can act on it.
 */
export async function probeCard(
  agentUrl: string,
  fetch: FetchLike,
  options: { key?: string; timeoutMs?: number; now?: () => number } = {},
): Promise<CardProbe> {
  const now = options.now ?? Date.now
  const timeoutMs = options.timeoutMs ?? PROBE_TIMEOUT_MS
  const started = now()
  const signal = AbortSignal.timeout(timeoutMs)
  const failures: string[] = []
  for (const path of CARD_PATHS) {
    const url = cardUrl(agentUrl, path)
    const found = await fetchDocument(url, fetch, signal, timeoutMs, options.key)
    if ('document' in found) {
      const problem = cardProblem(found.document)
      const latencyMs = Math.max(0, now() - started)
      if (problem) return { ok: false, card: null, latencyMs, error: `${path} is not a valid A2A agent card: ${problem}` }
      return { ok: true, card: found.document as AgentCardDocument, latencyMs, error: null }
    }
    failures.push(`${path}: ${found.error}`)
    // Only a card that is not there sends the probe to the older name; a failure of the agent stops it.
    if (!found.missing) break
  }
  return { ok: false, card: null, latencyMs: Math.max(0, now() - started), error: failures.join('; ') }
}

type Fetched = { document: unknown } | { error: string; missing: boolean }

async function fetchDocument(
  url: string,
  fetch: FetchLike,
  signal: AbortSignal,
  timeoutMs: number,
  key: string | undefined,
): Promise<Fetched> {
  try {
    const response = await fetch(url, {
      headers: { accept: 'application/json', ...(key !== undefined ? { authorization: `Bearer ${key}` } : {}) },
      signal,
    })
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined)
      const missing = response.status === 404
      const why = response.status >= 300 && response.status < 400 ? ' (redirects are not followed)' : ''
      return { error: `the agent answered HTTP ${response.status}${why}`, missing }
    }
    const text = await boundedText(response, CARD_BYTES)
    if (text === undefined) return { error: `the card is larger than ${CARD_BYTES / 1024} KiB`, missing: false }
    try {
      return { document: JSON.parse(text) }
    } catch {
      return { error: 'the card is not JSON', missing: false }
    }
  } catch (error) {
    if (signal.aborted) return { error: `the agent did not answer within ${timeoutMs / 1000} s`, missing: false }
    return { error: (error as Error).message || 'the agent could not be reached', missing: false }
  }
}

/**
 * The card as gw shows it to A2A clients: the agent's own card with gw's relay address as its URL and
 * gw's bearer credential as its security, since a client that followed the agent's own address or
 * scheme would bypass gw (and would need the agent's key, which only gw holds).
 */
export function relayedCard(card: AgentCardDocument, relayUrl: string): AgentCardDocument {
  const { additionalInterfaces: _direct, securitySchemes: _theirs, security: _their, ...rest } = card
  return {
    ...rest,
    url: relayUrl,
    preferredTransport: 'JSONRPC',
    securitySchemes: { gw: { type: 'http', scheme: 'bearer', description: 'a gw API key with the gateway scope' } },
    security: [{ gw: [] }],
  }
}
