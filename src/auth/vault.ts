import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto'

/**
 * Encryption of stored secrets (provider keys, later SSO client secrets): AES-256-GCM under a key
 * derived from the server secret with HKDF-SHA256. Each value gets a fresh 96-bit nonce, and its
 * context (the row it belongs to) as associated data, so a ciphertext copied to another row does not
 * decrypt. Stored form: `v1.<nonce>.<tag>.<ciphertext>`, base64url parts.
 */
const VERSION = 'v1'

export class Vault {
  private readonly key: Buffer

  constructor(serverSecret: string) {
    this.key = Buffer.from(hkdfSync('sha256', serverSecret, 'gw vault', 'aes-256-gcm v1', 32))
  }

  seal(plaintext: string, context: string): string {
    const nonce = randomBytes(12)
    const cipher = createCipheriv('aes-256-gcm', this.key, nonce)
    cipher.setAAD(Buffer.from(context))
    const body = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()])
    return [VERSION, nonce, cipher.getAuthTag(), body].map((p) => (typeof p === 'string' ? p : p.toString('base64url'))).join('.')
  }

  open(sealed: string, context: string): string {
    const [version, nonce, tag, body] = sealed.split('.')
    if (version !== VERSION || !nonce || !tag || body === undefined) throw new Error('not a sealed value of this vault')
    const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(nonce, 'base64url'))
    decipher.setAAD(Buffer.from(context))
    decipher.setAuthTag(Buffer.from(tag, 'base64url'))
    return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
  }
}

/** What reads show of a secret: its first and last four characters, or nothing for a short one. */
export const maskSecret = (secret: string): string => (secret.length >= 12 ? `${secret.slice(0, 4)}…${secret.slice(-4)}` : '…')

/** What each sealed value is bound to: a ciphertext only opens as the row it was made for. */
export const sealContexts = {
  providerKey: (key: { orgId: string; id: string }) => `provider_key:${key.orgId}:${key.id}`,
  serverKey: (name: string) => `server_key:${name}`,
  ssoClientSecret: (orgId: string) => `sso_client_secret:${orgId}`,
  webhookSecret: (webhook: { orgId: string; id: string }) => `webhook_secret:${webhook.orgId}:${webhook.id}`,
  integrationSecrets: (integration: { orgId: string; id: string }) =>
    `integration_secrets:${integration.orgId}:${integration.id}`,
  mcpServerToken: (server: { orgId: string; id: string }) => `mcp_server_token:${server.orgId}:${server.id}`,
  a2aAgentKey: (agent: { orgId: string; id: string }) => `a2a_agent_key:${agent.orgId}:${agent.id}`,
}
