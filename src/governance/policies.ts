import type { InvalidationBus } from '../auth/invalidation'
import { keyMemberId, type Principal } from '../auth/principal'
import { ApiError } from '../errors'
import type { Clock, Store } from '../store/store'
import { TtlCache } from '../util/ttl-cache'
import type { ValueOrPromise } from '../util/value-or-promise'
import {
  AccessPolicy,
  type Decision,
  type Effect,
  type Resource,
  type ResourceKind,
  type Subject,
  type SubjectKind,
} from './rules'

/**
 * An organisation's compiled rules are read this fresh at most. A change through the API reaches
 * every instance at once through the invalidation bus (Redis when configured); this bound is for a
 * message an instance missed (Redis away).
 */
const POLICY_CACHE_MS = 5_000
/** A member's role and teams change rarely; they are looked up only when a rule names a team or role. */
const MEMBER_CACHE_MS = 5_000
const CACHED_ORGS = 100_000
const CACHED_MEMBERS = 100_000
/** What the bus carries for an organisation whose rules changed (it carries credential keys too). */
const MESSAGE_PREFIX = 'access:'

interface MemberFacts {
  role?: string
  teamIds: readonly string[]
}

/** What is known of a caller before its member's role and teams are looked up. */
interface Caller {
  keyId?: string
  memberId?: string
  /** A session's own role; a key has none of its own and stands for its creator's. */
  role?: string
}

/** A refusal by an access rule (or the default), in words a caller can act on. */
export function accessDenied(resource: Resource, decision: Decision): ApiError {
  const why = decision.matchedRuleId
    ? `access rule ${decision.matchedRuleId}${decision.reason ? ` (${decision.reason})` : ''}`
    : `this organization's default for ${resource.kind.replace('_', ' ')}s`
  return new ApiError('access_denied', `${resource.kind.replace('_', ' ')} ${resource.id} is denied by ${why}`, {
    details: { resource, ruleId: decision.matchedRuleId },
  })
}

type Refusal = { resource: Resource; decision: Decision }

/** What is known of a caller from its credential, before its member's role and teams are looked up. */
const callerOf = (principal: Principal): Caller => ({
  keyId: principal.apiKeyId,
  memberId: principal.memberId,
  role: principal.role,
})

/** A caller as the rules see it when none of them names a team or a role. */
const withoutMemberFacts = (caller: Caller): Subject => ({ ...caller, teamIds: [] })

const governsAny = (policy: AccessPolicy, resources: readonly Resource[]): boolean =>
  resources.some((resource) => policy.governs(resource.kind))

function firstDenial(policy: AccessPolicy, subject: Subject, resources: readonly Resource[]): Refusal | undefined {
  for (const resource of resources) {
    if (!policy.governs(resource.kind)) continue
    const decision = policy.decide(subject, resource)
    if (decision.decision === 'deny') return { resource, decision }
  }
  return undefined
}

function throwIfDenied(refused: Refusal | undefined): void {
  if (refused) throw accessDenied(refused.resource, refused.decision)
}

/**
 * The organisations' access rules as the gateway, the MCP gateway and the A2A relay ask them: one
 * evaluator for models, tools and agents, compiled per organisation, dropped on every instance when
 * the rules change.
 */
export class AccessPolicies {
  private readonly policies: TtlCache<string, AccessPolicy | Promise<AccessPolicy>>
  private readonly members: TtlCache<string, Promise<MemberFacts>>

  constructor(
    private readonly store: Store,
    private readonly bus: InvalidationBus,
    now: Clock = Date.now,
  ) {
    this.policies = new TtlCache(CACHED_ORGS, POLICY_CACHE_MS, now)
    this.members = new TtlCache(CACHED_MEMBERS, MEMBER_CACHE_MS, now)
    bus.subscribe((message) => {
      if (message.startsWith(MESSAGE_PREFIX)) this.policies.delete(message.slice(MESSAGE_PREFIX.length))
    })
  }

  /** The organisation's compiled rules, at once when held; calls of one organisation share one read, a failed read is not kept. */
  policyOf(orgId: string): ValueOrPromise<AccessPolicy> {
    return this.policies.held(orgId, async () => {
      const org = this.store.org(orgId)
      const [rules, defaults] = await Promise.all([org.accessRules.list(), org.accessDefaults.list()])
      return new AccessPolicy(
        rules,
        Object.fromEntries(defaults.map((d) => [d.resourceKind, d.effect])) as Record<ResourceKind, Effect>,
      )
    })
  }

  /** Tells every instance that an organisation's rules or defaults changed. */
  async changed(orgId: string): Promise<void> {
    this.policies.delete(orgId)
    await this.bus.publish(`${MESSAGE_PREFIX}${orgId}`)
  }

  /**
   * Who a caller stands for, for the rules: its key, the member it acts for (a session's person, or the
   * key's creator), and that member's role and teams (a session's role is its own).
   */
  private subjectOf(principal: Principal, policy: AccessPolicy): Promise<Subject> {
    return this.expand(principal.orgId, callerOf(principal), policy.needsMemberFacts)
  }

  /**
   * A subject named by kind and id, as enforcement would see a caller of it: a key stands for itself and
   * its creator, with the creator's role and teams, as `subjectOf` sees a call made with it; a member
   * for itself, its role and teams; a team or a role for itself alone; the organisation for nothing but
   * the rules on the organisation. Undefined for a key this organisation does not have; the other ids
   * are taken as given.
   */
  async subjectFor(orgId: string, kind: SubjectKind, id: string): Promise<Subject | undefined> {
    switch (kind) {
      case 'org':
        return { teamIds: [] }
      case 'team':
        return { teamIds: [id] }
      case 'role':
        return { role: id, teamIds: [] }
      case 'member':
        return this.expand(orgId, { memberId: id }, true)
      case 'key': {
        const key = await this.store.org(orgId).apiKeys.get(id)
        return key && this.expand(orgId, { keyId: key.id, memberId: keyMemberId(key) }, true)
      }
    }
  }

  /** A caller with its member's role and teams, when the rules can use them. */
  private async expand(orgId: string, caller: Caller, withFacts: boolean): Promise<Subject> {
    const subject = withoutMemberFacts(caller)
    if (!withFacts || !caller.memberId) return subject
    const facts = await this.memberFacts(orgId, caller.memberId)
    return { ...subject, role: caller.role ?? facts.role, teamIds: facts.teamIds }
  }

  /** A member's role and teams, as rules on a member, a team or a role read them. */
  memberFacts(orgId: string, memberId: string): Promise<MemberFacts> {
    return this.members.load(`${orgId}:${memberId}`, async () => {
      const org = this.store.org(orgId)
      const [membership, teams] = await Promise.all([org.memberships.get(memberId), org.teams.listForUser(memberId)])
      return { role: membership?.role, teamIds: teams.map((team) => team.id) }
    })
  }

  /**
   * The first of `resources` the caller may not use, with the decision, or undefined when it may use
   * them all. An organisation with no rules on a kind (and an allowing default) is not asked further.
   */
  async refusal(principal: Principal, resources: readonly Resource[]): Promise<Refusal | undefined> {
    const policy = await this.policyOf(principal.orgId)
    if (!governsAny(policy, resources)) return undefined
    return firstDenial(policy, await this.subjectOf(principal, policy), resources)
  }

  /**
   * Throws (or rejects with) the caller's 403 `access_denied` when a rule (or the default) denies one of
   * `resources`. Answered at once when the organisation's rules are held and either govern none of
   * them or name no team or role (whose members would have to be looked up).
   */
  require(principal: Principal, resources: readonly Resource[]): ValueOrPromise<void> {
    const policy = this.policyOf(principal.orgId)
    if (!(policy instanceof Promise) && !governsAny(policy, resources)) return
    if (policy instanceof Promise || policy.needsMemberFacts) return this.refusal(principal, resources).then(throwIfDenied)
    throwIfDenied(firstDenial(policy, withoutMemberFacts(callerOf(principal)), resources))
  }
}
