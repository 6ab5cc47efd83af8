import type { Principal } from '../auth/principal'
import type { Logger } from '../log'
import { errorMessage } from '../store/faults'
import type { Store } from '../store/store'
import { actorOf, auditEntry } from './entry'

export interface WriteAttempt {
  method: string
  /** The route pattern (`/v1/api-keys/:apiKeyId`): with the method, the entry's action. */
  route: string
  params: Record<string, string | undefined> | undefined
  status: number
  /** The answer's body: only its `data.id` and `data.prefix` are read, never anything else. */
  response: unknown
  sourceIp: string | null
  /** What the route says it changed, when its answer names nothing (a setting of the whole organisation). */
  target?: string
}

/** The routes whose `:id` is the caller's own organisation. */
const ORGANIZATION_ROUTE = '/v1/organization/:id'

/** Only names are read from an answer: a secret shown once (an API key) must never reach the log. */
function named(response: unknown): { id?: string; prefix?: string } {
  const data = (response as { data?: unknown } | null)?.data
  if (typeof data !== 'object' || data === null) return {}
  const { id, prefix } = data as { id?: unknown; prefix?: unknown }
  return { ...(typeof id === 'string' ? { id } : {}), ...(typeof prefix === 'string' ? { prefix } : {}) }
}

/**
 * The one mechanism that writes the audit log for the management API: every write request of an
 * authenticated caller leaves an entry (actor, principal kind, action, target, organisation, time,
 * source address, outcome), whether it succeeded or was refused. Handlers add nothing; the request
 * body is never read, so a secret in it cannot end up here.
 */
export class AuditRecorder {
  constructor(
    private readonly store: Store,
    private readonly log: Logger,
    private readonly now: () => number = Date.now,
  ) {}

  async record(principal: Principal, attempt: WriteAttempt): Promise<void> {
    const { id, prefix } = named(attempt.response)
    // The organisation's own `:id` says nothing the entry does not already hold; another route's `:id` names its record.
    const ownOrg = attempt.route.startsWith(ORGANIZATION_ROUTE)
    const params = Object.fromEntries(Object.entries(attempt.params ?? {}).filter(([name]) => !(ownOrg && name === 'id')))
    const target = prefix ?? id ?? (Object.values(params).filter(Boolean).join('/') || attempt.target || null)
    const entry = auditEntry(actorOf(principal), `${attempt.method} ${attempt.route}`, target, {
      at: new Date(this.now()),
      sourceIp: attempt.sourceIp,
      outcome: attempt.status < 400 ? 'success' : 'failure',
      detail: { status: attempt.status, ...(Object.keys(params).length > 0 ? { params } : {}), ...(id ? { id } : {}) },
    })
    await this.store
      .org(principal.orgId)
      .audit.append(entry)
      .catch((error: unknown) => {
        // The change has happened; losing its entry is loud, never silent.
        this.log.error('audit entry not written', { action: entry.action, orgId: entry.orgId, error: errorMessage(error) })
      })
  }
}
