/**
 * A Google service account, as its JSON key file holds it: what Vertex AI calls are authenticated
 * with (an access token gw gets for it with a JWT it signs, RFC 7523).
 */
export interface ServiceAccount {
  clientEmail: string
  /** PKCS#8 PEM. */
  privateKey: string
  privateKeyId?: string
  /** Where access tokens come from. */
  tokenUri: string
  projectId?: string
}

const field = (record: Record<string, unknown>, name: string): string | undefined =>
  typeof record[name] === 'string' && record[name] !== '' ? (record[name] as string) : undefined

/** The service account a key file holds, or what is wrong with the text, in words a person can act on. */
export function readServiceAccount(text: string): ServiceAccount | string {
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return 'it is not JSON'
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return 'it is not a JSON object'
  const record = parsed as Record<string, unknown>
  if (record.type !== 'service_account') return 'its "type" is not "service_account" (user credentials are not supported)'
  const clientEmail = field(record, 'client_email')
  const privateKey = field(record, 'private_key')
  const tokenUri = field(record, 'token_uri')
  if (!clientEmail || !privateKey || !tokenUri) return 'it lacks client_email, private_key or token_uri'
  if (!/^https?:\/\//.test(tokenUri)) return 'its token_uri is not an http(s) URL'
  if (!privateKey.includes('PRIVATE KEY')) return 'its private_key is not a PEM private key'
  const privateKeyId = field(record, 'private_key_id')
  const projectId = field(record, 'project_id')
  return {
    clientEmail,
    privateKey,
    tokenUri,
    ...(privateKeyId ? { privateKeyId } : {}),
    ...(projectId ? { projectId } : {}),
  }
}
