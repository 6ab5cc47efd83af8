import type { Principal } from '../auth/principal'
import type { AuditEntry } from '../store/repositories/audit'

/** Who did it, as the audit log names them. */
export interface Actor {
  kind: AuditEntry['principalKind']
  id: string | null
  orgId: string
}

export const actorOf = (principal: Principal): Actor => ({ kind: principal.kind, id: principal.actorId, orgId: principal.orgId })

/**
 * Builds an audit entry. `target` names a record by kind and id (`session:<id>`, `api_key:<prefix>`),
 * never by anything secret; `detail` is for non-secret facts only; `at` is when it happened, by the caller's clock.
 */
export const auditEntry = (
  actor: Actor,
  action: string,
  target: string | null,
  extra: { at: Date; sourceIp?: string | null; outcome?: AuditEntry['outcome']; detail?: Record<string, unknown> },
): AuditEntry => ({
  id: crypto.randomUUID(),
  orgId: actor.orgId,
  actorId: actor.id,
  principalKind: actor.kind,
  action,
  target,
  sourceIp: extra.sourceIp ?? null,
  outcome: extra.outcome ?? 'success',
  detail: extra.detail ?? null,
  createdAt: extra.at,
})
