import { probeCard } from '../../a2a/card'
import type { Principal } from '../../auth/principal'
import { maskSecret, sealContexts, type Vault } from '../../auth/vault'
import type { EgressPolicy } from '../../egress/policy'
import { conflict, egressDisabled, notFound, nothingToChange } from '../../errors'
import { type A2aAgentRow, AGENT_NAME_TAKEN } from '../../store/repositories/a2a-agents'
import type { Clock, Store } from '../../store/store'
import type { CreateAgentInput, UpdateAgentInput } from './model'

/** An agent as answers show it: whether it has a key, and its hint, never the key. */
const view = (row: A2aAgentRow) => ({
  id: row.id,
  name: row.name,
  url: row.url,
  hasKey: row.sealedKey !== null,
  ...(row.keyHint !== null ? { keyHint: row.keyHint } : {}),
  card: row.card,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

const nameTaken = (name: string) =>
  conflict(`the organization has an A2A agent named ${JSON.stringify(name)} already: choose another name, or change that one`)

/**
 * The A2A agents an organisation registered (`governance.write`; the list `org.read`): where each is,
 * the key gw sends it (sealed), and the card its last probe validated. Every URL passes the egress
 * policy when it is saved, and every connection passes it again when it is made.
 */
export class A2aAgentsService {
  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly egress: EgressPolicy,
    private readonly now: Clock = Date.now,
    private readonly probeTimeoutMs?: number,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).a2aAgents.list()).map(view)
  }

  async create(principal: Principal, input: CreateAgentInput) {
    this.egress.requireSavable(input.url, 'url')
    const at = new Date(this.now())
    const row: A2aAgentRow = {
      id: crypto.randomUUID(),
      orgId: principal.orgId,
      name: input.name,
      url: input.url,
      sealedKey: null,
      keyHint: null,
      card: null,
      createdAt: at,
      updatedAt: at,
    }
    if ((await this.store.org(principal.orgId).a2aAgents.create(row)) === AGENT_NAME_TAKEN) throw nameTaken(input.name)
    return view(row)
  }

  /** Changes what the body names. A new URL drops the card: it described the agent at the old one. */
  async update(principal: Principal, id: string, input: UpdateAgentInput) {
    const agents = this.store.org(principal.orgId).a2aAgents
    const existing = await agents.get(id)
    // Another organisation's agent, or none, is 404 whatever the body holds.
    if (!existing) throw notFound('A2A agent')
    if (Object.keys(input).length === 0) throw nothingToChange('name, url')
    if (input.url !== undefined) this.egress.requireSavable(input.url, 'url')
    const moved = input.url !== undefined && input.url !== existing.url
    const updated = await agents.update(id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(moved ? { card: null } : {}),
      updatedAt: new Date(this.now()),
    })
    if (updated === AGENT_NAME_TAKEN) throw nameTaken(input.name ?? '')
    if (!updated) throw notFound('A2A agent')
    return view(updated)
  }

  async remove(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).a2aAgents.delete(id))) throw notFound('A2A agent')
    return { id, deleted: true as const }
  }

  /** Replaces the key gw sends to the agent, sealed to this agent's row. */
  async setKey(principal: Principal, id: string, key: string) {
    const agents = this.store.org(principal.orgId).a2aAgents
    if (!(await agents.get(id))) throw notFound('A2A agent')
    const updated = await agents.update(id, {
      sealedKey: await this.vault.seal(key, sealContexts.a2aAgentKey({ orgId: principal.orgId, id })),
      keyHint: maskSecret(key),
      updatedAt: new Date(this.now()),
    })
    if (!updated || updated === AGENT_NAME_TAKEN) throw notFound('A2A agent')
    return view(updated)
  }

  /**
   * Fetches and validates the agent's card now; a valid one is kept on the agent (the relay answers it),
   * an invalid one or an agent that cannot be reached is ok: false, and the card kept before stays.
   */
  async probe(principal: Principal, id: string) {
    const agents = this.store.org(principal.orgId).a2aAgents
    const agent = await agents.get(id)
    if (!agent) throw notFound('A2A agent')
    if (!this.egress.enabled) throw egressDisabled()
    const key = agent.sealedKey === null ? undefined : await this.vault.open(agent.sealedKey, sealContexts.a2aAgentKey(agent))
    const result = await probeCard(agent.url, this.egress.guardedFetch, {
      ...(key !== undefined ? { key } : {}),
      ...(this.probeTimeoutMs !== undefined ? { timeoutMs: this.probeTimeoutMs } : {}),
      now: this.now,
    })
    if (result.ok && result.card) await agents.update(id, { card: result.card, updatedAt: new Date(this.now()) })
    return result
  }
}
