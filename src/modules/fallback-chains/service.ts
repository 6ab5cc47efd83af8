import type { Principal } from '../../auth/principal'
import type { Chains } from '../../directory/chains'
import { ApiError, badRequest, conflict, notFound } from '../../errors'
import type { ChainStep } from '../../store/json-columns'
import { ALIAS_TAKEN, type FallbackChainRow } from '../../store/repositories/fallback-chains'
import type { Clock, Store } from '../../store/store'
import type { ChainInput } from './model'

/**
 * What this module needs of the gateway's routing. A module takes only types from the gateway, so the
 * composition root (app.ts) hands these in: the one model resolver, and the one list of each kind of status.
 */
export interface ChainRouting {
  /** Which provider serves a model name (`provider/model` forces one); throws a 400 ApiError for a model gw cannot route. */
  resolveModel(model: string): { provider: { name: string } }
  /** The statuses a chain moves on from when it names none (any other 5xx moves on too). */
  defaultStatuses: readonly number[]
  /** The statuses a chain never moves on from. */
  neverStatuses: readonly number[]
}

/** How many of a chain's latest calls its page shows. */
const RECENT_CALLS = 50

/**
 * An organisation's fallback chains (spec 4.6 `gateway_config.write`; the list is gw's own, `org.read`).
 * A chain is an alias: a call naming `match.model` is served by the steps in turn, each a model (never
 * another chain, so chains do not nest or loop). Calls read them through the directory, which each
 * change here tells to forget what it holds.
 */
export class FallbackChainsService {
  constructor(
    private readonly store: Store,
    private readonly routing: ChainRouting,
    private readonly chains: Pick<Chains, 'forget'>,
    private readonly now: Clock = Date.now,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).fallbackChains.list()).map((row) => this.view(row))
  }

  async create(principal: Principal, input: ChainInput) {
    const fields = await this.checked(principal, input)
    const now = new Date(this.now())
    const row: FallbackChainRow = { id: crypto.randomUUID(), orgId: principal.orgId, ...fields, createdAt: now, updatedAt: now }
    if ((await this.store.org(principal.orgId).fallbackChains.create(row)) === ALIAS_TAKEN) throw aliasTaken(fields.matchModel)
    this.forget(principal.orgId)
    return this.view(row)
  }

  /** Replaces the whole chain: what the body leaves out (on, retry, a step's fields) goes back to the defaults. */
  async replace(principal: Principal, id: string, input: ChainInput) {
    const chains = this.store.org(principal.orgId).fallbackChains
    // An unknown chain is 404 whatever the body holds.
    if (!(await chains.get(id))) throw notFound('fallback chain')
    const fields = await this.checked(principal, input)
    const updated = await chains.update(id, { ...fields, updatedAt: new Date(this.now()) })
    if (updated === ALIAS_TAKEN) throw aliasTaken(fields.matchModel)
    if (!updated) throw notFound('fallback chain')
    this.forget(principal.orgId)
    return this.view(updated)
  }

  async remove(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).fallbackChains.delete(id))) throw notFound('fallback chain')
    this.forget(principal.orgId)
    return { id, deleted: true as const }
  }

  /** The chain's latest calls, and which of its steps served each: how a chain is doing, at a glance. */
  async recentCalls(principal: Principal, id: string) {
    const chain = await this.store.org(principal.orgId).fallbackChains.get(id)
    if (!chain) throw notFound('fallback chain')
    const records = await this.store.requests.recentForChain(principal.orgId, id, RECENT_CALLS)
    return records.map((record) => {
      const served = record.status === 'success' ? chain.steps.findIndex((step) => step.model === record.model) : -1
      return {
        requestId: record.id,
        createdAt: record.createdAt.toISOString(),
        status: record.status,
        httpStatus: record.httpStatus,
        provider: record.provider,
        model: record.model,
        servedBy: served >= 0 ? served : null,
        attempts: record.attempts?.length ?? (record.cached ? 0 : 1),
        cached: record.cached,
        latencyMs: record.latencyMs,
      }
    })
  }

  private forget(orgId: string): void {
    this.chains.forget(orgId)
  }

  /** What the schema cannot say: a model gw routes, the organisation's own key of the step's provider, no status that never moves on. */
  private async checked(
    principal: Principal,
    input: ChainInput,
  ): Promise<Pick<FallbackChainRow, 'name' | 'matchModel' | 'steps' | 'triggers' | 'retry'>> {
    const name = input.name.trim()
    if (name === '') throw badRequest('name must not be blank')
    const matchModel = input.match.model
    if (matchModel.trim() !== matchModel) throw badRequest('match.model must not start or end with white space')

    const never = input.on?.statusCodes?.filter((code) => this.routing.neverStatuses.includes(code)) ?? []
    if (never.length > 0)
      throw badRequest(
        `on.statusCodes must not hold ${never.join(', ')}: a chain never moves on after ${listed(this.routing.neverStatuses)}, which say the caller's request (or its credentials) is wrong, and the next provider would say the same`,
      )
    if (input.retry && input.retry.maxDelayMs < input.retry.minDelayMs)
      throw badRequest(
        `retry.maxDelayMs (${input.retry.maxDelayMs}) must be at least retry.minDelayMs (${input.retry.minDelayMs})`,
      )

    const keys = this.store.org(principal.orgId).providerKeys
    const steps: ChainStep[] = []
    for (const [at, step] of input.steps.entries()) {
      const where = `steps[${at}]`
      if (step.model.trim() !== step.model) throw badRequest(`${where}.model must not start or end with white space`)
      const provider = this.providerOf(where, step)
      if (step.providerKeyId !== undefined) {
        const key = await keys.get(step.providerKeyId)
        if (!key) throw badRequest(`${where}.providerKeyId: no provider key ${step.providerKeyId} in this organization`)
        if (key.provider !== provider)
          throw badRequest(
            `${where}.providerKeyId: provider key ${step.providerKeyId} is a ${key.provider} key, and the step's model is served by ${provider}`,
          )
      }
      // Stored as given, in a fixed order: what the caller left out stays out.
      steps.push({
        model: step.model,
        ...(step.provider !== undefined ? { provider: step.provider } : {}),
        ...(step.providerKeyId !== undefined ? { providerKeyId: step.providerKeyId } : {}),
        ...(step.timeoutMs !== undefined ? { timeoutMs: step.timeoutMs } : {}),
      })
    }
    return {
      name,
      matchModel,
      steps,
      // As given, so that the defaults can change: null when the body named none.
      triggers: input.on ?? null,
      retry: input.retry ?? null,
    }
  }

  /** The provider that serves a step, as the gateway would route it. */
  private providerOf(where: string, step: ChainInput['steps'][number]): string {
    try {
      return this.routing.resolveModel(step.provider ? `${step.provider}/${step.model}` : step.model).provider.name
    } catch (error) {
      if (error instanceof ApiError && error.code === 'bad_request') throw badRequest(`${where}.model: ${error.message}`)
      throw error
    }
  }

  private view(row: FallbackChainRow) {
    const on = row.triggers ?? {}
    return {
      id: row.id,
      name: row.name,
      match: { model: row.matchModel },
      steps: row.steps,
      on: {
        statusCodes: on.statusCodes ?? [...this.routing.defaultStatuses],
        defaultStatusCodes: on.statusCodes === undefined,
        timeout: on.timeout ?? true,
        networkError: on.networkError ?? true,
      },
      retry: row.retry,
      createdAt: row.createdAt.toISOString(),
      updatedAt: row.updatedAt.toISOString(),
    }
  }
}

/** `400, 401, 403 or 422` */
const listed = (codes: readonly number[]) =>
  codes.length < 2 ? codes.join('') : `${codes.slice(0, -1).join(', ')} or ${codes.at(-1)}`

const aliasTaken = (model: string) =>
  conflict(
    `the organization has a fallback chain for model ${JSON.stringify(model)} already: change that chain, or delete it first`,
  )
