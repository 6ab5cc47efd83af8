import { auditEntry } from '../../audit/entry'
import type { Authenticator } from '../../auth/authenticator'
import { type CredentialHasher, parseCredential } from '../../auth/credentials'
import type { CredentialIssuer } from '../../auth/issuer'
import { hashPassword, verifyPassword } from '../../auth/passwords'
import type { Principal } from '../../auth/principal'
import { badRequest, forbidden, unauthorized } from '../../errors'
import type { Store } from '../../store/store'
import type { LoginInput } from './model'

export class AuthService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
    private readonly authenticator: Authenticator,
    private readonly hasher: CredentialHasher,
    private readonly now: () => number = Date.now,
  ) {}

  /** Turns a one-time invite into a password and a session; a used, expired or wrong token is 401. */
  async acceptInvite(token: string, password: string, sourceIp: string | null) {
    const credential = parseCredential(token)
    const invite = credential?.kind === 'invite' ? await this.store.inviteTokens.get(credential.id) : undefined
    const valid =
      credential !== undefined &&
      invite !== undefined &&
      this.hasher.matches(credential, invite.secretHash) &&
      invite.usedAt === null &&
      invite.expiresAt.getTime() > this.now()
    if (!valid || !invite) throw unauthorized('the invite is unknown, used or expired')
    if (!(await this.store.org(invite.orgId).memberships.get(invite.userId)))
      throw unauthorized('the invite is unknown, used or expired')
    const passwordHash = await hashPassword(password)
    const session = await this.store.transaction(async (tx) => {
      if (!(await tx.inviteTokens.consume(invite.id, new Date(this.now()))))
        throw unauthorized('the invite is unknown, used or expired')
      await tx.users.setPasswordHash(invite.userId, passwordHash)
      const org = tx.org(invite.orgId)
      const issued = await this.issuer.session(org, invite.userId)
      await org.audit.append(
        auditEntry({ kind: 'session', id: invite.userId, orgId: invite.orgId }, 'auth.accept_invite', `user:${invite.userId}`, {
          at: new Date(this.now()),
          sourceIp,
        }),
      )
      return issued
    })
    return {
      sessionToken: session.sessionToken,
      expiresAt: session.expiresAt.toISOString(),
      userId: invite.userId,
      orgId: invite.orgId,
    }
  }

  async login(input: LoginInput, sourceIp: string | null) {
    const user = await this.store.users.findByEmail(input.email)
    const passwordOk = await verifyPassword(input.password, user?.passwordHash ?? null)
    if (!user || !passwordOk) throw unauthorized('the email or the password is wrong')

    const memberships = await this.store.userMemberships.listForUser(user.id)
    const membership =
      input.orgId !== undefined
        ? memberships.find((m) => m.orgId === input.orgId)
        : memberships.length === 1
          ? memberships[0]
          : undefined
    if (!membership) {
      if (input.orgId !== undefined || memberships.length === 0)
        throw unauthorized('this user is not a member of that organization')
      throw badRequest('this user belongs to several organizations; pass orgId', { orgIds: memberships.map((m) => m.orgId) })
    }

    const org = this.store.org(membership.orgId)
    if ((await org.sso.get())?.enforced) {
      throw forbidden('this organization requires single sign-on; password login is off for its members')
    }
    const session = await this.issuer.session(org, user.id)
    await org.audit.append(
      auditEntry({ kind: 'session', id: user.id, orgId: membership.orgId }, 'auth.login', `session:${session.sessionId}`, {
        at: new Date(this.now()),
        sourceIp,
      }),
    )
    return {
      sessionToken: session.sessionToken,
      expiresAt: session.expiresAt.toISOString(),
      userId: user.id,
      orgId: membership.orgId,
    }
  }

  /** Ends the calling session at once, on this instance and (through the database) on every other. */
  async logout(principal: Principal, token: string) {
    if (principal.kind !== 'session' || principal.sessionId === undefined) {
      throw badRequest('only a session can log out; revoke an API key with DELETE /v1/api-keys/{apiKeyId}')
    }
    await this.store.credentials.revokeSession(principal.sessionId, new Date(this.now()))
    await this.authenticator.forget(token)
    return { loggedOut: true as const }
  }
}
