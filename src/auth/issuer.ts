import type { OrgRepositories } from '../store/store'
import type { CredentialHasher } from './credentials'

const SESSION_LIFETIME_MS = 14 * 24 * 3600 * 1000

export interface IssuedSession {
  sessionId: string
  sessionToken: string
  expiresAt: Date
}

export interface IssuedInvite {
  inviteToken: string
  expiresAt: Date
}

const INVITE_LIFETIME_MS = 7 * 24 * 3600 * 1000

export interface IssuedApiKey {
  apiKeyId: string
  apiKey: string
  prefix: string
}

/** Creates credentials; the token is returned to be shown once and only its HMAC is stored. */
export class CredentialIssuer {
  constructor(
    private readonly hasher: CredentialHasher,
    private readonly now: () => number = Date.now,
  ) {}

  /** A session in the organisation the repositories are bound to. */
  async session(org: Pick<OrgRepositories, 'sessions'>, userId: string): Promise<IssuedSession> {
    const issued = this.hasher.issue('session')
    const createdAt = new Date(this.now())
    const expiresAt = new Date(createdAt.getTime() + SESSION_LIFETIME_MS)
    await org.sessions.create({
      id: issued.id,
      userId,
      secretHash: issued.secretHash,
      createdAt,
      expiresAt,
      revokedAt: null,
    })
    return { sessionId: issued.id, sessionToken: issued.token, expiresAt }
  }

  /** A one-time token that lets an invited person set their password (and so log in). */
  async invite(org: Pick<OrgRepositories, 'invites'>, userId: string): Promise<IssuedInvite> {
    const issued = this.hasher.issue('invite')
    const createdAt = new Date(this.now())
    const expiresAt = new Date(createdAt.getTime() + INVITE_LIFETIME_MS)
    await org.invites.create({
      id: issued.id,
      userId,
      secretHash: issued.secretHash,
      createdAt,
      expiresAt,
      usedAt: null,
    })
    return { inviteToken: issued.token, expiresAt }
  }

  async apiKey(
    org: Pick<OrgRepositories, 'apiKeys'>,
    key: {
      name: string
      scopes: string[]
      createdByUserId: string | null
      expiresAt?: Date | null
      providerKeyId?: string | null
    },
  ): Promise<IssuedApiKey> {
    const issued = this.hasher.issue('api_key')
    await org.apiKeys.create({
      id: issued.id,
      name: key.name,
      prefix: issued.displayPrefix,
      secretHash: issued.secretHash,
      scopes: key.scopes,
      providerKeyId: key.providerKeyId ?? null,
      createdByUserId: key.createdByUserId,
      createdAt: new Date(this.now()),
      expiresAt: key.expiresAt ?? null,
      revokedAt: null,
      lastUsedAt: null,
    })
    return { apiKeyId: issued.id, apiKey: issued.token, prefix: issued.displayPrefix }
  }
}
