import { auditEntry } from '../../audit/entry'
import type { Authenticator } from '../../auth/authenticator'
import type { CredentialIssuer } from '../../auth/issuer'
import { verifyPassword } from '../../auth/passwords'
import type { Principal } from '../../auth/principal'
import { badRequest, unauthorized } from '../../errors'
import type { Store } from '../../store/store'

export interface LoginInput {
  email: string
  password: string
  orgId?: string
}

export class AuthService {
  constructor(
    private readonly store: Store,
    private readonly issuer: CredentialIssuer,
    private readonly authenticator: Authenticator,
  ) {}

  async login(input: LoginInput, sourceIp: string | null) {
    const user = await this.store.users.findByEmail(input.email)
    const passwordOk = await verifyPassword(input.password, user?.passwordHash ?? null)
    if (!user || !passwordOk) throw unauthorized('the email or the password is wrong')

    const memberships = await this.store.memberships.listForUser(user.id)
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

    const session = await this.issuer.session(this.store, user.id, membership.orgId)
    await this.store.audit.append(
      auditEntry({ kind: 'session', id: user.id, orgId: membership.orgId }, 'auth.login', `session:${session.sessionId}`, {
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
  async logout(principal: Principal, token: string): Promise<void> {
    if (principal.kind !== 'session' || principal.sessionId === undefined) {
      throw badRequest('only a session can log out; revoke an API key with DELETE /v1/api-keys/{apiKeyId}')
    }
    await this.store.sessions.revoke(principal.sessionId, new Date())
    await this.authenticator.forget(token)
  }
}
