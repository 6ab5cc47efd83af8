import type { Authenticator } from '../../auth/authenticator'
import type { Principal } from '../../auth/principal'
import { badRequest, notFound } from '../../errors'
import type { Store } from '../../store/store'

/** The `ownership` actions (spec 2.4): only the Owner holds the permission. */
export class OwnershipService {
  constructor(
    private readonly store: Store,
    private readonly authenticator: Authenticator,
  ) {}

  /** Hands ownership to another member in one transaction: there is exactly one Owner before and after; the old Owner becomes Admin. */
  async transfer(principal: Principal, userId: string) {
    if (principal.userId === undefined) throw badRequest('ownership is transferred by the Owner in person, with a session')
    if (userId === principal.userId) throw badRequest('you already own this organization')
    if (!(await this.store.org(principal.orgId).memberships.get(userId))) throw notFound('member')
    await this.store.transaction(async (tx) => {
      await tx.org(principal.orgId).memberships.setRole(principal.userId as string, 'admin')
      await tx.org(principal.orgId).memberships.setRole(userId, 'owner')
    })
    for (const user of [principal.userId, userId]) {
      await this.authenticator.forgetSessions(await this.store.org(principal.orgId).sessions.listLiveOf(user))
    }
    return { id: userId, ownerId: userId, previousOwnerId: principal.userId }
  }

  /**
   * Deletes the organisation and all its data (hard delete, no tombstone): members, roles, teams, keys,
   * provider keys, rules, request log, bodies and audit log. Its keys and sessions stop working at once.
   */
  async deleteOrganization(principal: Principal) {
    const orgId = principal.orgId
    const keyIds = (await this.store.org(orgId).apiKeys.list()).map((k) => k.id)
    const sessionIds = await this.store.org(orgId).sessions.listIds()
    if (!(await this.store.transaction((tx) => tx.organizations.deleteWithData(orgId)))) throw notFound('organization')
    await this.authenticator.forgetKeys(keyIds)
    await this.authenticator.forgetSessions(sessionIds)
    return { id: orgId, deleted: true as const }
  }
}
