import { hmacSha256 } from '../util/digest'

/**
 * Encryption of stored secrets (provider keys, webhook and SSO secrets, tokens): AES-256-GCM under a
 * key derived from the server secret with HKDF-SHA256. Each value gets a fresh 96-bit nonce, and its
 * context (the row it belongs to) as associated data, so a ciphertext copied to another row does not
 * decrypt. Stored form: `v1.<nonce>.<tag>.<ciphertext>`, base64url parts.
 *
 * Web Crypto encrypts, and the native HMAC derives: neither needs node:crypto, whose evaluation costs
 * every start of the executable about 1.5 ms, and `gw serve` opens its credential key before it
 * listens. Web Crypto's own HKDF would cost that start a further round trip to its worker thread.
 */
const VERSION = 'v1'
const NONCE_BYTES = 12
const TAG_BYTES = 16
const utf8 = new TextEncoder()
const fromUtf8 = new TextDecoder()

const base64url = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('base64url')

/**
 * HKDF-SHA256 (RFC 5869) for a key of one hash's length: the extract, then the expand's first and only
 * block. What node:crypto's `hkdfSync('sha256', secret, salt, info, 32)` answers (a test holds them equal).
 */
export function hkdfSha256Key(secret: string, salt: string, info: string): Uint8Array<ArrayBuffer> {
  const pseudorandomKey = hmacSha256(salt, secret)
  return new Uint8Array(hmacSha256(pseudorandomKey, Buffer.concat([utf8.encode(info), Uint8Array.of(1)])))
}

const vaultKey = (serverSecret: string): Promise<CryptoKey> =>
  crypto.subtle.importKey('raw', hkdfSha256Key(serverSecret, 'gw vault', 'aes-256-gcm v1'), 'AES-GCM', false, [
    'encrypt',
    'decrypt',
  ])

export class Vault {
  /**
   * Imported as the vault is made, not when first used: Web Crypto imports on its own thread, so the
   * start's next steps (the database opened, the migrations checked) run while it does.
   */
  private readonly key: Promise<CryptoKey>

  constructor(serverSecret: string) {
    this.key = vaultKey(serverSecret)
    // Whoever seals or opens sees a failure; a vault never used must not leave it unhandled.
    this.key.catch(() => undefined)
  }

  async seal(plaintext: string, context: string): Promise<string> {
    const nonce = crypto.getRandomValues(new Uint8Array(NONCE_BYTES))
    const sealed = new Uint8Array(
      await crypto.subtle.encrypt(
        { name: 'AES-GCM', iv: nonce, additionalData: utf8.encode(context), tagLength: TAG_BYTES * 8 },
        await this.key,
        utf8.encode(plaintext),
      ),
    )
    // Web Crypto appends the tag to the ciphertext; the stored form keeps it apart.
    const body = sealed.subarray(0, sealed.length - TAG_BYTES)
    const tag = sealed.subarray(sealed.length - TAG_BYTES)
    return [VERSION, base64url(nonce), base64url(tag), base64url(body)].join('.')
  }

  /** Fails when the value was not sealed by this server secret, or not for this context. */
  async open(sealed: string, context: string): Promise<string> {
    const [version, nonce, tag, body] = sealed.split('.')
    if (version !== VERSION || !nonce || !tag || body === undefined) throw new Error('not a sealed value of this vault')
    const opened = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: Buffer.from(nonce, 'base64url'), additionalData: utf8.encode(context), tagLength: TAG_BYTES * 8 },
      await this.key,
      Buffer.concat([Buffer.from(body, 'base64url'), Buffer.from(tag, 'base64url')]),
    )
    return fromUtf8.decode(opened)
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
