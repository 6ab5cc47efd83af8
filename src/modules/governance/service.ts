import { isBuiltInRole } from '../../auth/permissions'
import type { Principal } from '../../auth/principal'
import { badRequest, notFound } from '../../errors'
import type { AccessPolicies } from '../../governance/policies'
import { type Effect, RESOURCE_KINDS, type ResourceKind, type SubjectKind } from '../../governance/rules'
import type { AccessRuleRow } from '../../store/repositories/access-rules'
import type { Clock, Store } from '../../store/store'
import { type DefaultsInput, type DryRunInput, MAX_RULES, type RuleChange, type RuleInput } from './model'

type SubjectInput = RuleInput['subject']
type RuleFields = Pick<AccessRuleRow, 'subjectKind' | 'subjectId' | 'resourceKind' | 'resourceId' | 'effect' | 'reason'>

const view = (row: AccessRuleRow) => ({
  id: row.id,
  subject: { kind: row.subjectKind, id: row.subjectKind === 'org' ? null : row.subjectId },
  resource: { kind: row.resourceKind, id: row.resourceId },
  effect: row.effect,
  reason: row.reason,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

/**
 * Governance (spec 4.6 `governance.write`; the reads `org.read`): an organisation's access rules and
 * the default of each resource kind, and a dry run of them with the evaluator the gateway enforces
 * with. Every write drops the compiled rules on every instance (`AccessPolicies.changed`), so the next
 * call anywhere is decided by the new rules. On every tier: a security control is not sold.
 */
export class GovernanceService {
  constructor(
    private readonly store: Store,
    private readonly policies: AccessPolicies,
    private readonly now: Clock = Date.now,
  ) {}

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).accessRules.list()).map(view)
  }

  async create(principal: Principal, input: RuleInput) {
    const rules = this.store.org(principal.orgId).accessRules
    const fields = await this.checked(principal.orgId, input)
    // Checked before the insert, not in one statement with it: two creates racing at the bound may
    // both pass, which costs a rule or two over it, never a wrong decision.
    if ((await rules.count()) >= MAX_RULES)
      throw badRequest(
        `this organization has ${MAX_RULES} access rules, the most it may have: delete one, or cover more with a glob`,
      )
    const now = new Date(this.now())
    // Time-ordered ids: rules made within one millisecond still list in the order they were made.
    const row: AccessRuleRow = { id: Bun.randomUUIDv7(), orgId: principal.orgId, ...fields, createdAt: now, updatedAt: now }
    await rules.create(row)
    await this.policies.changed(principal.orgId)
    return view(row)
  }

  async update(principal: Principal, id: string, change: RuleChange) {
    const rules = this.store.org(principal.orgId).accessRules
    // An unknown rule (another organisation's included) is 404 whatever the body holds.
    const existing = await rules.get(id)
    if (!existing) throw notFound('access rule')
    if (Object.values(change).every((value) => value === undefined))
      throw badRequest('nothing to change: send at least one of subject, resource, effect, reason')
    const fields = await this.checked(principal.orgId, {
      subject: change.subject ?? {
        kind: existing.subjectKind,
        ...(existing.subjectKind === 'org' ? {} : { id: existing.subjectId }),
      },
      resource: change.resource ?? { kind: existing.resourceKind, id: existing.resourceId },
      effect: change.effect ?? existing.effect,
      reason: change.reason === undefined ? existing.reason : change.reason,
    })
    const updated = await rules.update(id, { ...fields, updatedAt: new Date(this.now()) })
    if (!updated) throw notFound('access rule')
    await this.policies.changed(principal.orgId)
    return view(updated)
  }

  async remove(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).accessRules.delete(id))) throw notFound('access rule')
    await this.policies.changed(principal.orgId)
    return { id, deleted: true as const }
  }

  async defaults(principal: Principal): Promise<Record<ResourceKind, Effect>> {
    const set = await this.store.org(principal.orgId).accessDefaults.list()
    const effects = new Map(set.map((row) => [row.resourceKind, row.effect]))
    return Object.fromEntries(RESOURCE_KINDS.map((kind) => [kind, effects.get(kind) ?? 'allow'])) as Record<ResourceKind, Effect>
  }

  async putDefaults(principal: Principal, input: DefaultsInput) {
    const defaults = this.store.org(principal.orgId).accessDefaults
    const now = new Date(this.now())
    for (const kind of RESOURCE_KINDS) {
      const effect = input[kind]
      if (effect !== undefined) await defaults.set(kind, effect, now)
    }
    await this.policies.changed(principal.orgId)
    return this.defaults(principal)
  }

  /** What the gateway would decide for this subject and resource now: the same rules, the same evaluator. */
  async dryRun(principal: Principal, input: DryRunInput) {
    const { kind, id } = await this.checkedSubject(principal.orgId, input.subject)
    const subject = await this.policies.subjectFor(principal.orgId, kind, id)
    // The subject was found a moment ago; a key deleted since is as unknown as one never made.
    if (!subject) throw unknownSubject(kind, id)
    const policy = await this.policies.policyOf(principal.orgId)
    return policy.decide(subject, input.resource)
  }

  entitlement(principal: Principal) {
    return {
      tier: principal.tier,
      accessRules: true,
      mcpGateway: true,
      a2a: true,
      maxRules: MAX_RULES,
      requiredTier: 'free',
    }
  }

  /** What the schema cannot say: that the subject is this organisation's own. */
  private async checked(orgId: string, input: RuleInput): Promise<RuleFields> {
    const { kind, id } = await this.checkedSubject(orgId, input.subject)
    return {
      subjectKind: kind,
      subjectId: id,
      resourceKind: input.resource.kind,
      resourceId: input.resource.id,
      effect: input.effect,
      // An empty reason says nothing: stored as none.
      reason: input.reason ? input.reason : null,
    }
  }

  /** The subject's kind and id as stored ('' for the organisation); 400 for an id this organisation does not hold. */
  private async checkedSubject(orgId: string, subject: SubjectInput): Promise<{ kind: SubjectKind; id: string }> {
    if (subject.kind === 'org') return { kind: 'org', id: '' }
    const id = subject.id
    if (id === undefined) throw badRequest(`subject.id is required for a ${subject.kind}: name the ${idOf[subject.kind]}`)
    if (!(await this.holds(orgId, subject.kind, id))) throw unknownSubject(subject.kind, id)
    return { kind: subject.kind, id }
  }

  private async holds(orgId: string, kind: Exclude<SubjectKind, 'org'>, id: string): Promise<boolean> {
    const org = this.store.org(orgId)
    switch (kind) {
      case 'team':
        return (await org.teams.get(id)) !== undefined
      case 'member':
        return (await org.memberships.get(id)) !== undefined
      case 'key':
        return (await org.apiKeys.get(id)) !== undefined
      case 'role':
        // An archived role still names the members who hold it, so rules on it still apply to them.
        return isBuiltInRole(id) || (await org.roles.get(id)) !== undefined
    }
  }
}

const idOf: Record<Exclude<SubjectKind, 'org'>, string> = {
  team: "team's id",
  member: "member's user id",
  role: "role: owner, admin, member or a custom role's id",
  key: "API key's id",
}

const unknownSubject = (kind: SubjectKind, id: string) =>
  badRequest(
    kind === 'role'
      ? `subject.id: ${JSON.stringify(id)} is not owner, admin, member or a custom role of this organization`
      : `subject.id: no ${kind === 'key' ? 'API key' : kind} ${JSON.stringify(id)} in this organization`,
  )
