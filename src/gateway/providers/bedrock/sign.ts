/**
 * AWS Signature Version 4 for Bedrock calls. gw signs with a few lines of its own rather than
 * AWS's own signer (`@smithy/signature-v4`): that signer is general (any service, presigning, chunked
 * bodies, awaited hashes) and cost each Bedrock call about 60 µs of the event loop, a third more than a
 * whole translated call to Anthropic. What this writes is held to AWS's signer, not to our reading of
 * AWS's documents: a property test signs random requests both ways and requires the same headers, and
 * the fake Bedrock re-signs every request it receives with AWS's signer and AWS's hash.
 */
import { hmacSha256, hmacSha256Keyed, sha256 } from '../../../util/digest'
import { remembered } from '../../../util/remembered'
import { TtlCache } from '../../../util/ttl-cache'

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
  /** Further headers to send and sign, their names in lower case. */
  headers?: Readonly<Record<string, string>>
  /** The exact bytes sent: the signature covers their hash. */
  body: string | Uint8Array
  credentials: AwsCredentials
  region: string
  now?: () => number
}

/** The name Bedrock Runtime signs under (its endpoint is `bedrock-runtime`, its signing name is not). */
export const BEDROCK_SIGNING_NAME = 'bedrock'
const ALGORITHM = 'AWS4-HMAC-SHA256'

/** Bedrock Runtime's two ways to call a model: Converse (one format for all) or InvokeModel (the model's own). */
export type BedrockApi = 'converse' | 'invoke'

const OPERATIONS: Record<BedrockApi, { whole: string; stream: string }> = {
  converse: { whole: 'converse', stream: 'converse-stream' },
  invoke: { whole: 'invoke', stream: 'invoke-with-response-stream' },
}

/**
 * The path of a call. The model id is encoded once, as AWS's SDK does (`:` in a versioned id and `/` in
 * an ARN included); the signature encodes the path again for its canonical form, as AWS's servers do,
 * so encoding it twice here would sign a path AWS never sees.
 */
export function bedrockModelPath(modelId: string, stream: boolean, api: BedrockApi = 'converse'): string {
  const operation = OPERATIONS[api]
  return `/model/${encodedModelId(modelId)}/${stream ? operation.stream : operation.whole}`
}

/** RFC 3986 encoding, as SigV4 wants it: everything but letters, digits and `-_.~`. */
const uriEncode = (value: string): string =>
  encodeURIComponent(value).replace(/[!'()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`)

const encodedModelId = remembered(uriEncode)

/**
 * The day's signer for a secret and region: its key is four HMACs, the same all day, so derived (and
 * keyed into a hasher) once. Kept by the secret itself, so a rotated secret gets its own; bounded, and
 * no key outlives its day.
 */
const signers = new TtlCache<string, (stringToSign: string) => string>(256, 24 * 60 * 60_000)

function signerFor(secretAccessKey: string, day: string, region: string): (stringToSign: string) => string {
  const cacheKey = `${day}\n${region}\n${secretAccessKey}`
  let signer = signers.get(cacheKey)
  if (signer === undefined) {
    const key = hmacSha256(
      hmacSha256(hmacSha256(hmacSha256(`AWS4${secretAccessKey}`, day), region), BEDROCK_SIGNING_NAME),
      'aws4_request',
    )
    signer = hmacSha256Keyed(key)
    signers.set(cacheKey, signer)
  }
  return signer
}

/**
 * The canonical path: empty segments dropped (the URL parser has resolved `.` and `..` already), then
 * every segment encoded once more (so the `%` of the path as sent becomes `%25`), as every AWS service
 * but S3 reads it.
 */
function canonicalPath(path: string): string {
  const segments = path
    .split('/')
    .filter((segment) => segment !== '')
    .map(uriEncode)
  const trailing = segments.length > 0 && path.endsWith('/') ? '/' : ''
  return `/${segments.join('/')}${trailing}`
}

/** The query's names and values encoded, sorted by name and then value (not as `name=value` strings: `a-b` sorts before `a=`). */
function canonicalQuery(url: URL): string {
  if (url.search === '') return ''
  const pairs: [string, string][] = []
  for (const [name, value] of url.searchParams) pairs.push([uriEncode(name), uriEncode(value)])
  pairs.sort(([a, x], [b, y]) => (a === b ? compare(x, y) : compare(a, b)))
  return pairs.map(([name, value]) => `${name}=${value}`).join('&')
}

const compare = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0)

/** What a URL gives a signature: its host, and its path and query as the canonical request writes them. */
interface SignedTarget {
  host: string
  /** The canonical request's second and third lines. */
  resource: string
}

const targetOf = (url: URL): SignedTarget => ({
  host: url.host,
  resource: `${canonicalPath(url.pathname)}\n${canonicalQuery(url)}`,
})

/** A deployment calls a handful of URLs (a model, whole or streamed), so each is parsed and encoded once. */
const targetOfUrl = remembered((url) => targetOf(new URL(url)))

/** Anything `canonicalValue` would change; most values have none, and are signed as they are. */
const UNCANONICAL = /[\r\n\t]| {2}|^ | $/

/** A header's value as signed: line breaks made spaces, runs of spaces and tabs one space, no space at either end. */
const canonicalValue = (value: string): string =>
  UNCANONICAL.test(value)
    ? value
        .replace(/[\r\n]/g, ' ')
        .replace(/[ \t]+/g, ' ')
        .replace(/^ | $/g, '')
    : value

let dateSecond = Number.NaN
let dateText = ''
/** `20261126`: the day of `dateText`, written with it. */
let dayText = ''

/** `20261126T120000Z`: the request's time, to the second (written once a second, however many calls it signs); `dayText` is its day. */
function amzDate(at: number): string {
  const second = Math.floor(at / 1000)
  if (second !== dateSecond) {
    dateSecond = second
    dateText = new Date(second * 1000).toISOString().replace(/[-:]|\.\d{3}/g, '')
    dayText = dateText.slice(0, 8)
  }
  return dateText
}

/** The headers a signature writes itself: one given under these names is not sent or signed twice. */
const SIGNATURE_OWN = new Set(['host', 'x-amz-content-sha256', 'x-amz-date', 'x-amz-security-token', 'authorization'])

/** The signature's own headers, whose values change with each request: their places among a layout's parts. */
const OWN = { host: 0, payloadHash: 1, date: 2, sessionToken: 3 } as const
type Own = (typeof OWN)[keyof typeof OWN]

/**
 * How the requests that give one set of headers are signed: the canonical header lines in order, the
 * given ones written out once and the signature's own left as places, the list of signed names, and
 * the given headers as sent. Made once for each set a caller gives (the Bedrock adapter gives one of
 * two, whole or streamed), so a request's signature sorts and canonicalises nothing.
 */
interface Layout {
  parts: ReadonlyArray<string | Own>
  signedHeaders: string
  sent: Headers
}

const OWN_NAMES: ReadonlyArray<readonly [string, Own]> = [
  ['host', OWN.host],
  ['x-amz-content-sha256', OWN.payloadHash],
  ['x-amz-date', OWN.date],
]
const TOKEN_NAME: readonly [string, Own] = ['x-amz-security-token', OWN.sessionToken]

function layoutOf(given: Readonly<Record<string, string>>, withToken: boolean): Layout {
  const sent = new Headers()
  const entries: Array<readonly [string, string | Own]> = withToken ? [...OWN_NAMES, TOKEN_NAME] : [...OWN_NAMES]
  for (const name in given) {
    if (SIGNATURE_OWN.has(name)) continue
    const value = given[name] as string
    sent.set(name, value)
    entries.push([name, `${name}:${canonicalValue(value)}\n`])
  }
  entries.sort(byName)
  const parts: Array<string | Own> = []
  for (const [, part] of entries) {
    const last = parts.length - 1
    // Neighbouring given lines are one string: fewer pieces to join for each request.
    if (typeof part === 'string' && typeof parts[last] === 'string') parts[last] += part
    else parts.push(part)
  }
  return { parts, signedHeaders: entries.map(([name]) => name).join(';'), sent }
}

/** Layouts by the object of headers given, with and without a session token; a caller's constant object is laid out once. */
const layouts = new WeakMap<object, { plain?: Layout; withToken?: Layout }>()
const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({})

function layoutFor(given: Readonly<Record<string, string>>, withToken: boolean): Layout {
  let known = layouts.get(given)
  if (known === undefined) {
    known = {}
    layouts.set(given, known)
  }
  if (withToken) {
    known.withToken ??= layoutOf(given, true)
    return known.withToken
  }
  known.plain ??= layoutOf(given, false)
  return known.plain
}

const byName = (a: readonly [string, unknown], b: readonly [string, unknown]): number => compare(a[0], b[0])

/**
 * The request's headers with its signature added: `host`, `x-amz-date`, `x-amz-content-sha256`, the
 * session token when there is one, and `authorization`, every header given signed with them. Nothing
 * may change the body or a signed header after this. Give the same object of headers for requests
 * alike (a module's constant): how they sign is worked out once for it.
 */
export function signBedrockRequest(request: BedrockRequest): Headers {
  const { host, resource } = typeof request.url === 'string' ? targetOfUrl(request.url) : targetOf(request.url)
  const { accessKeyId, secretAccessKey, sessionToken } = request.credentials
  const date = amzDate(request.now?.() ?? Date.now())
  const day = dayText
  const payloadHash = sha256(request.body, 'hex')
  const token = sessionToken ? canonicalValue(sessionToken) : undefined
  const layout = layoutFor(request.headers ?? NO_HEADERS, token !== undefined)
  let canonicalHeaders = ''
  for (const part of layout.parts) {
    if (typeof part === 'string') canonicalHeaders += part
    else if (part === OWN.host) canonicalHeaders += `host:${host}\n`
    else if (part === OWN.payloadHash) canonicalHeaders += `x-amz-content-sha256:${payloadHash}\n`
    else if (part === OWN.date) canonicalHeaders += `x-amz-date:${date}\n`
    else canonicalHeaders += `x-amz-security-token:${token}\n`
  }
  const { signedHeaders } = layout
  const canonicalRequest = `${request.method.toUpperCase()}\n${resource}\n${canonicalHeaders}\n${signedHeaders}\n${payloadHash}`
  const scope = `${day}/${request.region}/${BEDROCK_SIGNING_NAME}/aws4_request`
  const stringToSign = `${ALGORITHM}\n${date}\n${scope}\n${sha256(canonicalRequest, 'hex')}`
  const signature = signerFor(secretAccessKey, day, request.region)(stringToSign)
  const headers = new Headers(layout.sent)
  headers.set('host', host)
  headers.set('x-amz-date', date)
  headers.set('x-amz-content-sha256', payloadHash)
  if (sessionToken) headers.set('x-amz-security-token', sessionToken)
  headers.set(
    'authorization',
    `${ALGORITHM} Credential=${accessKeyId}/${scope}, SignedHeaders=${signedHeaders}, Signature=${signature}`,
  )
  return headers
}
