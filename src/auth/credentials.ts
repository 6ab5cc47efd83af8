import { equalInConstantTime, hmacSha256 } from '../util/digest'
import { randomBytes } from '../util/random'

/**
 * Credential formats. A credential is `<prefix><id>_<secret>`: the id finds the row, the secret is
 * checked against its HMAC in constant time, and `<prefix><id>` is safe to show (lists, logs, audit).
 */
export const CREDENTIAL_KINDS = {
  api_key: 'gw-sk-',
  session: 'gw-ses-',
  /** A one-time invitation to set a password; never a bearer credential. */
  invite: 'gw-inv-',
} as const

export type CredentialKind = keyof typeof CREDENTIAL_KINDS

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789'
const ID_LENGTH = 12
const SECRET_LENGTH = 40 // ~238 bits

function randomToken(length: number): string {
  // 248 = 62 * 4: rejecting bytes above it keeps every character equally likely.
  let out = ''
  while (out.length < length) {
    for (const byte of randomBytes(length * 2)) {
      if (byte < 248 && out.length < length) out += ALPHABET[byte % 62]
    }
  }
  return out
}

export interface IssuedCredential {
  id: string
  /** Shown once, to the caller that created it; never stored. */
  token: string
  /** What may be shown later: the kind's prefix and the id. */
  displayPrefix: string
  secretHash: string
}

export interface ParsedCredential {
  kind: CredentialKind
  id: string
  secret: string
}

const TOKEN_PATTERN = new RegExp(`^(gw-sk-|gw-ses-|gw-inv-)([A-Za-z0-9]{${ID_LENGTH}})_([A-Za-z0-9]{${SECRET_LENGTH}})$`)
const KIND_BY_PREFIX = new Map<string, CredentialKind>(
  Object.entries(CREDENTIAL_KINDS).map(([kind, prefix]): [string, CredentialKind] => [prefix, kind as CredentialKind]),
)

export function parseCredential(token: string): ParsedCredential | undefined {
  const match = TOKEN_PATTERN.exec(token)
  if (!match) return undefined
  const [, prefix, id, secret] = match as unknown as [string, string, string, string]
  return { kind: KIND_BY_PREFIX.get(prefix) as CredentialKind, id, secret }
}

export class CredentialHasher {
  constructor(private readonly hmacKey: string) {}

  hash(kind: CredentialKind, id: string, secret: string): string {
    // The kind and id are part of the MAC input: a hash is only valid for the row it was made for.
    return hmacSha256(this.hmacKey, `${kind}:${id}:${secret}`, 'base64url')
  }

  matches(credential: ParsedCredential, storedHash: string): boolean {
    return equalInConstantTime(this.hash(credential.kind, credential.id, credential.secret), storedHash)
  }

  issue(kind: CredentialKind): IssuedCredential {
    const id = randomToken(ID_LENGTH)
    const secret = randomToken(SECRET_LENGTH)
    const displayPrefix = `${CREDENTIAL_KINDS[kind]}${id}`
    return { id, token: `${displayPrefix}_${secret}`, displayPrefix, secretHash: this.hash(kind, id, secret) }
  }
}
