import { auditEntry } from '../../audit/entry'
import { userForEmail } from '../../auth/accounts'
import type { Authenticator } from '../../auth/authenticator'
import type { CredentialIssuer } from '../../auth/issuer'
import { hashPassword } from '../../auth/passwords'
import { isBuiltInRole } from '../../auth/permissions'
import type { Principal } from '../../auth/principal'
import { badRequest, conflict, forbidden, notFound } from '../../errors'
import type { OrgRepositories, Store } from '../../store/store'
import type { InviteInput, UpdateMemberInput } from './model'

export interface AddMemberInput {
  orgId: string
  email: string
  role: string
  password?: string
}

/** The roles `add_member` and `update_member` may give: never `owner`, which moves only by transfer. */
async function assignableRole(org: OrgRepositories, role: string): Promise<string> {
  if (role === 'owner') throw badRequest('ownership moves only by transfer (POST /v1/organization/{id}/update_owner)')
  if (isBuiltInRole(role)) return role
  const custom = await org.roles.get(role)
  if (!custom || custom.archivedAt !== null)
    throw badRequest(`role ${role} is not admin, member or a custom role of this organization`)
  return role
}

export class MembersService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
    private readonly authenticator: Authenticator,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * `add_member`: a person joins with a role. Someone new (or without a password yet) gets a one-time
   * invite token, shown once, that POST /v1/auth/accept-invite turns into a password and a session.
   */
  async invite(principal: Principal, input: InviteInput) {
    const role = await assignableRole(this.store.org(principal.orgId), input.role)
    return this.store.transaction(async (tx) => {
      const org = tx.org(principal.orgId)
      const userId = await userForEmail(tx, input.email, this.now)
      if (await org.memberships.get(userId)) throw conflict(`${input.email} is already a member of this organization`)
      await org.memberships.add({ userId, role, createdAt: new Date(this.now()) })
      const user = await tx.users.get(userId)
      const invite = user?.passwordHash ? undefined : await this.issuer.invite(org, userId)
      return {
        id: userId,
        userId,
        role,
        ...(invite ? { inviteToken: invite.inviteToken, inviteExpiresAt: invite.expiresAt.toISOString() } : {}),
      }
    })
  }

  /** Every member of the caller's organisation: the Owner first, then by the time they joined. */
  async list(principal: Principal) {
    const rows = await this.store.org(principal.orgId).memberships.listWithEmails()
    const ownerFirst = (row: { role: string }) => (row.role === 'owner' ? 0 : 1)
    return rows
      .sort((a, b) => ownerFirst(a) - ownerFirst(b))
      .map((row) => ({ userId: row.userId, email: row.email, role: row.role, joinedAt: row.createdAt.toISOString() }))
  }

  /** `update_member`: a new role, in force on the member's next request. */
  async updateRole(principal: Principal, input: UpdateMemberInput) {
    const org = this.store.org(principal.orgId)
    await this.guard(principal, input.userId, 'change the role of')
    const role = await assignableRole(org, input.role)
    await org.memberships.setRole(input.userId, role)
    await this.authenticator.forgetSessions(await org.sessions.listLiveOf(input.userId))
    return { id: input.userId, userId: input.userId, role }
  }

  /** `remove_member`: the membership goes, and every session the person had here ends at once. */
  async remove(principal: Principal, userId: string) {
    const target = await this.store.org(principal.orgId).memberships.get(userId)
    if (!target) throw notFound('member')
    if (target.role === 'owner') throw forbidden('the Owner cannot be removed; transfer ownership first')
    const ended = await this.store.transaction(async (tx) => {
      const org = tx.org(principal.orgId)
      await org.memberships.remove(userId)
      return org.sessions.revokeAllOf(userId, new Date(this.now()))
    })
    await this.authenticator.forgetSessions(ended)
    return { id: userId, userId, removed: true as const }
  }

  /** The invariants of spec 2.4 that concern one member: no one changes their own role; the Owner's moves only by transfer. */
  private async guard(principal: Principal, userId: string, what: string): Promise<void> {
    const target = await this.store.org(principal.orgId).memberships.get(userId)
    if (!target) throw notFound('member')
    if (principal.userId === userId) throw forbidden(`nobody can ${what} themselves`)
    if (target.role === 'owner') throw forbidden(`nobody can ${what} the Owner; ownership moves only by transfer`)
  }

  /** Adds a person to an organisation with a role and opens a session for them (the CLI's `member add`). */
  async add(input: AddMemberInput): Promise<{ userId: string; sessionToken: string }> {
    if (!(await this.store.organizations.get(input.orgId))) throw notFound('organization')
    const org = this.store.org(input.orgId)
    // The CLI may seat an Owner, but only where there is none: there is exactly one (spec 2.4).
    if (input.role === 'owner') {
      if (await org.memberships.owner()) throw conflict('the organization already has an owner; ownership moves only by transfer')
    } else {
      await assignableRole(org, input.role)
    }
    const passwordHash = input.password ? await hashPassword(input.password) : undefined
    return this.store.transaction(async (tx) => {
      const within = tx.org(input.orgId)
      const userId = await userForEmail(tx, input.email, this.now)
      if (await within.memberships.get(userId)) throw conflict(`${input.email} is already a member of this organization`)
      if (passwordHash) await tx.users.setPasswordHash(userId, passwordHash)
      await within.memberships.add({ userId, role: input.role, createdAt: new Date(this.now()) })
      const session = await this.issuer.session(within, userId)
      await within.audit.append(
        auditEntry({ kind: 'cli', id: null, orgId: input.orgId }, 'member.add', `user:${userId}`, {
          at: new Date(this.now()),
          detail: { role: input.role },
        }),
      )
      return { userId, sessionToken: session.sessionToken }
    })
  }
}
