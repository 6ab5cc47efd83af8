import { auditEntry } from '../../audit/entry'
import { userForEmail } from '../../auth/accounts'
import type { CredentialIssuer } from '../../auth/issuer'
import { hashPassword } from '../../auth/passwords'
import { isBuiltInRole } from '../../auth/permissions'
import { badRequest, conflict, notFound } from '../../errors'
import type { Store } from '../../store/store'

export interface AddMemberInput {
  orgId: string
  email: string
  role: string
  password?: string
}

export class MembersService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
  ) {}

  /** Adds a person to an organisation with a role and opens a session for them (the CLI's `member add`). */
  async add(input: AddMemberInput): Promise<{ userId: string; sessionToken: string }> {
    const org = await this.store.organizations.get(input.orgId)
    if (!org) throw notFound('organization')
    if (input.role === 'owner') {
      // Exactly one Owner per organisation (spec 2.4): ownership moves by transfer, not by adding.
      if (await this.store.memberships.ownerOf(org.id))
        throw conflict('the organization already has an owner; ownership moves only by transfer')
    } else if (!isBuiltInRole(input.role)) {
      const custom = await this.store.roles.get(org.id, input.role)
      if (!custom || custom.archivedAt !== null)
        throw badRequest(`role ${input.role} is not owner, admin, member or a custom role of this organization`)
    }
    const passwordHash = input.password ? await hashPassword(input.password) : undefined
    return this.store.transaction(async (tx) => {
      const userId = await userForEmail(tx, input.email)
      if (await tx.memberships.get(org.id, userId)) throw conflict(`${input.email} is already a member of this organization`)
      if (passwordHash) await tx.users.setPasswordHash(userId, passwordHash)
      await tx.memberships.add({ orgId: org.id, userId, role: input.role, createdAt: new Date() })
      const session = await this.issuer.session(tx, userId, org.id)
      await tx.audit.append(
        auditEntry({ kind: 'cli', id: null, orgId: org.id }, 'member.add', `user:${userId}`, { detail: { role: input.role } }),
      )
      return { userId, sessionToken: session.sessionToken }
    })
  }
}
