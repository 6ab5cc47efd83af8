/**
 * What a fake Bedrock needs: frames of an AWS event stream, written by AWS's own codec, and a check
 * of a request's SigV4 signature by signing the received request again with AWS's own signer.
 */
import { timingSafeEqual } from 'node:crypto'
import { EventStreamCodec, type MessageHeaders } from '@smithy/eventstream-codec'
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import { fromUtf8, toUtf8 } from '@smithy/util-utf8'

const codec = new EventStreamCodec(toUtf8, fromUtf8)

const stringHeaders = (headers: Record<string, string>): MessageHeaders =>
  Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, { type: 'string' as const, value }]))

/** One ConverseStream event as Bedrock frames it: the payload is the event itself, not wrapped in its name. */
export const eventFrame = (eventType: string, payload: unknown): Uint8Array =>
  codec.encode({
    headers: stringHeaders({ ':message-type': 'event', ':event-type': eventType, ':content-type': 'application/json' }),
    body: fromUtf8(JSON.stringify(payload)),
  })

/** A modelled exception mid-stream (`throttlingException`, ...), with its `{message}` payload. */
export const exceptionFrame = (exceptionType: string, message: string): Uint8Array =>
  codec.encode({
    headers: stringHeaders({
      ':message-type': 'exception',
      ':exception-type': exceptionType,
      ':content-type': 'application/json',
    }),
    body: fromUtf8(JSON.stringify({ message })),
  })

/** An unmodelled error: its code and message travel as headers. */
export const errorFrame = (code: string, message: string): Uint8Array =>
  codec.encode({
    headers: stringHeaders({ ':message-type': 'error', ':error-code': code, ':error-message': message }),
    body: new Uint8Array(),
  })

/** Frames joined into one body, as an HTTP response carries them. */
export const joinFrames = (frames: Uint8Array[]): Uint8Array => new Uint8Array(Buffer.concat(frames))

export interface VerifyOptions {
  /** The region the fake serves: a request signed for another is refused, as AWS refuses it. */
  region: string
  now?: () => number
  /** How far `x-amz-date` may be from now; AWS allows about five minutes. */
  maxSkewMs?: number
}

export type Verdict = { ok: true; accessKeyId: string } | { ok: false; reason: string }

const AUTHORIZATION =
  /^AWS4-HMAC-SHA256 Credential=([^/]+)\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$/

/** The signer re-creates these from the credentials, the date and the received body. */
const GENERATED = new Set(['x-amz-date', 'x-amz-security-token', 'x-amz-content-sha256'])

/** `20250601T120000Z` as a Date (`new Date` does not read the compact form). */
function amzDate(value: string): Date | undefined {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})Z$/.exec(value)
  if (!match) return undefined
  const [, year, month, day, hour, minute, second] = match
  const date = new Date(`${year}-${month}-${day}T${hour}:${minute}:${second}Z`)
  return Number.isNaN(date.getTime()) ? undefined : date
}

/**
 * Checks a received request's SigV4 signature the way AWS does: the request is signed again, from
 * what arrived (method, raw path, the signed headers, the body's own hash), with the secret looked up
 * by the access key, and the two `authorization` values compared. A changed body or header, another
 * secret, region or service, or a date too far from now fails. The request's body is read from a clone.
 */
export async function verifySigV4(
  request: Request,
  secretOf: (accessKeyId: string) => string | undefined,
  options: VerifyOptions,
): Promise<Verdict> {
  const authorization = request.headers.get('authorization') ?? ''
  const parts = AUTHORIZATION.exec(authorization)
  if (!parts) return { ok: false, reason: 'no SigV4 authorization header' }
  const [, accessKeyId = '', shortDate, region, service, signedList = ''] = parts
  if (service !== 'bedrock') return { ok: false, reason: `signed for the service ${service}` }
  if (region !== options.region) return { ok: false, reason: `signed for the region ${region}` }
  const stamp = request.headers.get('x-amz-date') ?? ''
  const signingDate = amzDate(stamp)
  if (!signingDate || stamp.slice(0, 8) !== shortDate) return { ok: false, reason: 'a missing or inconsistent x-amz-date' }
  const skew = Math.abs((options.now?.() ?? Date.now()) - signingDate.getTime())
  if (skew > (options.maxSkewMs ?? 5 * 60_000)) return { ok: false, reason: 'the signature has expired' }
  const secretAccessKey = secretOf(accessKeyId)
  if (secretAccessKey === undefined) return { ok: false, reason: 'an unknown access key' }

  const signed = signedList.split(';')
  const headers: Record<string, string> = {}
  for (const name of signed) {
    if (GENERATED.has(name)) continue
    const value = request.headers.get(name)
    if (value === null) return { ok: false, reason: `the signed header ${name} is missing` }
    headers[name] = value
  }
  const url = new URL(request.url)
  const sessionToken = request.headers.get('x-amz-security-token') ?? undefined
  const signer = new SignatureV4({
    credentials: { accessKeyId, secretAccessKey, ...(sessionToken === undefined ? {} : { sessionToken }) },
    region,
    service,
    // AWS's own hash, not gw's, so that a fault in gw's hashing cannot agree with itself here.
    sha256: Hash.bind(null, 'sha256'),
    applyChecksum: signed.includes('x-amz-content-sha256'),
  })
  const again = await signer.sign(
    {
      method: request.method,
      protocol: url.protocol,
      hostname: url.hostname,
      path: url.pathname,
      query: queryOf(url),
      headers,
      body: new Uint8Array(await request.clone().arrayBuffer()),
    },
    { signingDate },
  )
  const expected = Buffer.from(String(again.headers.authorization ?? ''))
  const received = Buffer.from(authorization)
  return expected.length === received.length && timingSafeEqual(expected, received)
    ? { ok: true, accessKeyId }
    : { ok: false, reason: 'the signature does not match' }
}

/** The query as AWS's signer takes it: a name given twice keeps both values. */
export function queryOf(url: URL): Record<string, string | string[]> {
  const query: Record<string, string | string[]> = {}
  for (const name of new Set(url.searchParams.keys())) {
    const values = url.searchParams.getAll(name)
    query[name] = values.length === 1 ? (values[0] as string) : values
  }
  return query
}
