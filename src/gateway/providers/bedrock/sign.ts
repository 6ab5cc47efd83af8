/**
 * AWS Signature Version 4 for Bedrock calls, by AWS's own signer: the canonical request, the signing
 * key chain and the header set are theirs to get right, not gw's to write again.
 */
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'

export interface AwsCredentials {
  accessKeyId: string
  secretAccessKey: string
  /** Present for temporary credentials (an assumed role, SSO); sent as `x-amz-security-token`. */
  sessionToken?: string
}

export interface BedrockRequest {
  /** The full URL, its path as `bedrockModelPath` writes it. */
  url: string | URL
  method: string
  headers?: Headers | Record<string, string>
  /** The exact bytes sent: the signature covers their hash. */
  body: string | Uint8Array
  credentials: AwsCredentials
  region: string
  now?: () => number
}

/** The name Bedrock Runtime signs under (its endpoint is `bedrock-runtime`, its signing name is not). */
export const BEDROCK_SIGNING_NAME = 'bedrock'

/**
 * SHA-256 through `node:crypto` (the AWS SDK's own choice on Node), which Bun and Deno both run
 * natively: the pure-JS hash takes about ten times as long over a long prompt.
 */
export const sha256 = Hash.bind(null, 'sha256')

/**
 * The path of a Converse call. The model id is encoded once, as AWS's SDK does (`:` in a versioned id
 * and `/` in an ARN included); the signer encodes the path again for its canonical form, as AWS's
 * servers do, so encoding it twice here would sign a path AWS never sees.
 */
export function bedrockModelPath(modelId: string, stream: boolean): string {
  const encoded = encodeURIComponent(modelId).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)
  return `/model/${encoded}/${stream ? 'converse-stream' : 'converse'}`
}

/**
 * The request's headers with its signature added: `host` (the signer signs only what it is given, and
 * the host must be in it), `x-amz-date`, `x-amz-content-sha256`, the session token when there is
 * one, and `authorization`. Nothing may change the body or a signed header after this.
 */
export async function signBedrockRequest(request: BedrockRequest): Promise<Headers> {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  for (const [name, value] of new Headers(request.headers)) headers[name] = value
  headers.host = url.host
  const signer = new SignatureV4({
    credentials: request.credentials,
    region: request.region,
    service: BEDROCK_SIGNING_NAME,
    sha256,
  })
  const signed = await signer.sign(
    {
      method: request.method.toUpperCase(),
      protocol: url.protocol,
      hostname: url.hostname,
      ...(url.port === '' ? {} : { port: Number(url.port) }),
      path: url.pathname,
      query: queryOf(url),
      headers,
      body: request.body,
    },
    { signingDate: new Date(request.now?.() ?? Date.now()) },
  )
  return new Headers(signed.headers)
}

/** The query as the signer sorts it into the canonical request: a name given twice keeps both values. */
export function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name)
    query[name] = values.length === 1 ? (values[0] as string) : values
  }
  return query
}
