import { requireGatewayScope } from '../../auth/scopes'
import type { OrgKeySource } from '../../directory/connections'
import type { OperatorProviders } from '../../directory/providers'
import type { AccessPolicies } from '../../governance/policies'
import type { PriceSource } from '../../money/price-book'
import type { ChainStep } from '../../store/json-columns'
import type { CallFacts, Dispatch } from '../call'
import type { ProviderAdapter, WireFamily } from '../providers/provider'
import type { ModelResolver } from '../providers/registry'
import { type Translation, translationBetween } from '../translate/pairs'
import { estimateCost } from './admission'
import { type KeyCandidate, keyCandidates } from './credentials'
import { type OutgoingBody, outgoingBody, upstreamPathFor } from './route'
import { type UnitMeasure, unitEstimate, unitMeasure } from './units'

/** A call made ready for one model: its provider, the body it is sent, the keys it may run on, its worst case. */
export interface Prepared {
  facts: CallFacts
  provider: ProviderAdapter
  /** The format the model is called in. */
  family: WireFamily
  translation: Translation | undefined
  upstreamPath: string
  outgoing: OutgoingBody
  /** The keys the call may run on, one picked per attempt. */
  keys: KeyCandidate[]
  units: UnitMeasure | undefined
  /** The caller asked for a stream: an attempt serves once its first bytes came. */
  streams: boolean
}

/** What preparing a call reads: the operator's providers, the organisation's keys and prices, its access rules. */
export interface PrepareDeps {
  providers: OperatorProviders
  orgKeys: OrgKeySource
  /** Which provider serves a model named without one: the first configured for the organisation. */
  models: Pick<ModelResolver, 'resolve'>
  prices: PriceSource
  access: Pick<AccessPolicies, 'require'>
}

/** Another step, or a downgrade, is prepared again: nothing of the first model's price may carry over. */
const UNKNOWN_COST = {
  price: undefined,
  priceSource: undefined,
  unitPrice: undefined,
  estimatedCostNano: undefined,
  estimatedTokens: undefined,
} as const

/**
 * What serving a call with a model takes: the provider that serves it, whether the caller's key and
 * the access rules let it reach that one, whether the formats differ, the keys it may run on, and the
 * most the call can cost. `known` is what the call learnt so far, `changed` what this preparation
 * changes of it; the step's facts replace its model's. They are made once, at the end: each copy of a
 * call's facts is a few hundred bytes of garbage.
 */
export async function prepareModel(
  deps: PrepareDeps,
  dispatch: Dispatch,
  known: CallFacts,
  changed: Partial<CallFacts>,
  requested: string,
  step?: ChainStep,
): Promise<Prepared> {
  const { route, read } = dispatch
  const { principal, callerFormat } = known
  const resolving = deps.models.resolve(principal.orgId, requested)
  const { provider, model } = resolving instanceof Promise ? await resolving : resolving
  requireGatewayScope(principal, { provider: provider.name, model })
  // Before anything is held or sent: a denied step is skipped like one the key may not reach.
  const allowed = deps.access.require(principal, [
    { kind: 'provider', id: provider.name },
    { kind: 'model', id: model },
  ])
  if (allowed instanceof Promise) await allowed
  const family = provider.family(model, callerFormat)
  const translation = translationBetween(callerFormat, family.format)
  const upstreamPath = upstreamPathFor(dispatch.call.path, provider.name, family, translation, route.conversation === true)
  const writing = outgoingBody(read, family, model, translation)
  const outgoing = writing instanceof Promise ? await writing : writing
  const finding = keyCandidates(
    { operator: deps.providers, orgKeys: deps.orgKeys },
    principal,
    provider,
    model,
    step?.providerKeyId,
  )
  const keys = finding instanceof Promise ? await finding : finding
  const pricing = deps.prices.priceOf(principal.orgId, provider.name, model)
  const priced = pricing instanceof Promise ? await pricing : pricing
  let facts: CallFacts = {
    ...known,
    ...changed,
    provider: provider.name,
    model,
    mode: translation ? 'translated' : 'passthrough',
    translationWarning: outgoing.translationWarning,
    ptb: keys.every((key) => key.ptb),
    ...UNKNOWN_COST,
    ...estimateCost(priced, outgoing, route.priced),
  }
  const units = unitMeasure(route.measure, provider.name, model, read.body)
  if (units) facts = { ...facts, unitPrice: units.unitPrice, estimatedCostNano: unitEstimate(units), estimatedTokens: 0 }
  return { facts, provider, family, translation, upstreamPath, outgoing, keys, units, streams: read.fields.stream === true }
}

/** What a step starts without: a former step's downgrade or hold. */
const STEP_START = { downgradedFrom: undefined, hold: undefined } as const

/** A step of the plan made ready: its facts start from the call's. */
export function prepareStep(deps: PrepareDeps, dispatch: Dispatch, step: ChainStep): Promise<Prepared> {
  const requested = step.provider ? `${step.provider}/${step.model}` : step.model
  return prepareModel(deps, dispatch, dispatch.state.facts, STEP_START, requested, step)
}
