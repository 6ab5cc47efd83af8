import { globMatches } from '../util/glob'

export const SUBJECT_KINDS = ['org', 'team', 'member', 'role', 'key'] as const
export const RESOURCE_KINDS = ['provider', 'model', 'mcp_server', 'mcp_tool', 'agent'] as const
export type SubjectKind = (typeof SUBJECT_KINDS)[number]
export type ResourceKind = (typeof RESOURCE_KINDS)[number]
export type Effect = 'allow' | 'deny'

/** One access rule as the evaluator reads it; `subjectId` is '' for the organisation. */
export interface AccessRule {
  id: string
  subjectKind: SubjectKind
  subjectId: string
  resourceKind: ResourceKind
  /** A glob: `*` is any run of characters. */
  resourceId: string
  effect: Effect
  reason: string | null
}

/** The caller as rules see it: every subject it stands for. */
export interface Subject {
  memberId?: string
  teamIds: readonly string[]
  /** `owner`, `admin`, `member` or a custom role's id. */
  role?: string
  keyId?: string
}

export interface Resource {
  kind: ResourceKind
  id: string
}

export interface Decision {
  decision: Effect
  /** The rule that decided; null when the default did. */
  matchedRuleId: string | null
  /** The rules on the resource's kind that were looked at. */
  rulesEvaluated: number
  /** The deciding rule's reason, when it gave one. */
  reason: string | null
}

const appliesTo = (rule: AccessRule, subject: Subject): boolean => {
  switch (rule.subjectKind) {
    case 'org':
      return true
    case 'team':
      return subject.teamIds.includes(rule.subjectId)
    case 'member':
      return subject.memberId === rule.subjectId
    case 'role':
      return subject.role === rule.subjectId
    case 'key':
      return subject.keyId === rule.subjectId
  }
}

/**
 * An organisation's rules and defaults, compiled once: the rules of each resource kind apart, so a
 * decision reads only those of its kind. A matching deny wins, then a matching allow, then the kind's
 * default (allow unless the organisation set deny): deny-overrides, so no rule can be shadowed by
 * another's order, and adding an allow can never open what a deny closes.
 */
export class AccessPolicy {
  private readonly byKind: ReadonlyMap<ResourceKind, readonly AccessRule[]>
  /** Whether any rule names a team or a role: only then must a call's teams and role be looked up. */
  readonly needsMemberFacts: boolean

  constructor(
    rules: readonly AccessRule[],
    private readonly defaults: Partial<Record<ResourceKind, Effect>>,
  ) {
    const byKind = new Map<ResourceKind, AccessRule[]>()
    for (const rule of rules) {
      const list = byKind.get(rule.resourceKind) ?? []
      // Denies first: the first deny that matches decides, and allows are read only when none does.
      if (rule.effect === 'deny') list.unshift(rule)
      else list.push(rule)
      byKind.set(rule.resourceKind, list)
    }
    this.byKind = byKind
    this.needsMemberFacts = rules.some((rule) => rule.subjectKind === 'team' || rule.subjectKind === 'role')
  }

  /** Whether the organisation says anything about this kind: when not, everything of it is allowed unasked. */
  governs(kind: ResourceKind): boolean {
    return this.byKind.has(kind) || this.defaults[kind] === 'deny'
  }

  decide(subject: Subject, resource: Resource): Decision {
    const rules = this.byKind.get(resource.kind) ?? []
    let allowed: AccessRule | undefined
    let evaluated = 0
    for (const rule of rules) {
      evaluated += 1
      if (!appliesTo(rule, subject) || !globMatches(rule.resourceId, resource.id)) continue
      if (rule.effect === 'deny')
        return { decision: 'deny', matchedRuleId: rule.id, rulesEvaluated: evaluated, reason: rule.reason }
      allowed ??= rule
    }
    if (allowed) return { decision: 'allow', matchedRuleId: allowed.id, rulesEvaluated: evaluated, reason: allowed.reason }
    return { decision: this.defaults[resource.kind] ?? 'allow', matchedRuleId: null, rulesEvaluated: evaluated, reason: null }
  }
}
