import type { Repositories } from '../store/store'
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

  async session(repos: Pick<Repositories, 'sessions'>, userId: string, orgId: string): Promise<IssuedSession> {
    const issued = this.hasher.issue('session')
    const createdAt = new Date(this.now())
    const expiresAt = new Date(createdAt.getTime() + SESSION_LIFETIME_MS)
    await repos.sessions.create({
      id: issued.id,
      userId,
      orgId,
      secretHash: issued.secretHash,
      createdAt,
      expiresAt,
      revokedAt: null,
    })
    return { sessionId: issued.id, sessionToken: issued.token, expiresAt }
  }

  /** A one-time token that lets an invited person set their password (and so log in). */
  async invite(repos: Pick<Repositories, 'invites'>, userId: string, orgId: string): Promise<IssuedInvite> {
    const issued = this.hasher.issue('invite')
    const createdAt = new Date(this.now())
    const expiresAt = new Date(createdAt.getTime() + INVITE_LIFETIME_MS)
    await repos.invites.create({
      id: issued.id,
      orgId,
      userId,
      secretHash: issued.secretHash,
      createdAt,
      expiresAt,
      usedAt: null,
    })
    return { inviteToken: issued.token, expiresAt }
  }

  async apiKey(
    repos: Pick<Repositories, 'apiKeys'>,
    key: {
      orgId: string
      name: string
      scopes: string[]
      createdByUserId: string | null
      expiresAt?: Date | null
      providerKeyId?: string | null
    },
  ): Promise<IssuedApiKey> {
    const issued = this.hasher.issue('api_key')
    await repos.apiKeys.create({
      id: issued.id,
      orgId: key.orgId,
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
