import { afterAll, describe, expect, test } from 'bun:test'
import { createHash, createHmac } from 'node:crypto'
import { Hash } from '@smithy/hash-node'
import { SignatureV4 } from '@smithy/signature-v4'
import fc from 'fast-check'
import { bedrockModelPath, signBedrockRequest } from '../src/gateway/providers/bedrock/sign'
import { queryOf, type Verdict, verifySigV4 } from './support/bedrock'
import { FUZZ_SEEDS } from './support/fuzz-seeds'

const NOW = Date.UTC(2026, 10, 26, 12, 0, 0)
const now = () => NOW
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY' }
const secrets: Record<string, string> = { [credentials.accessKeyId]: credentials.secretAccessKey }
const secretOf = (accessKeyId: string) => secrets[accessKeyId]
const MODEL = 'us.anthropic.claude-sonnet-4-20250514-v1:0'
const BODY = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] })

/** A fake Bedrock: it answers with what the verifier made of the request it received. */
const server = Bun.serve({
  port: 0,
  fetch: async (request) => Response.json(await verifySigV4(request, secretOf, { region: 'us-east-1', now })),
})
afterAll(() => server.stop(true))
const base = `http://localhost:${server.port}`

const signed = (overrides: Partial<Parameters<typeof signBedrockRequest>[0]> = {}) =>
  signBedrockRequest({
    url: `${base}${bedrockModelPath(MODEL, true)}`,
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/vnd.amazon.eventstream' },
    body: BODY,
    credentials,
    region: 'us-east-1',
    now,
    ...overrides,
  })

const send = async (headers: Headers, body: string = BODY, path = bedrockModelPath(MODEL, true)): Promise<Verdict> =>
  (await (await fetch(`${base}${path}`, { method: 'POST', headers, body })).json()) as Verdict

describe('the path of a Converse call', () => {
  test('the model id is encoded once: ":" in a version, "/" in an ARN, and the characters encodeURIComponent leaves', () => {
    expect(bedrockModelPath(MODEL, false)).toBe('/model/us.anthropic.claude-sonnet-4-20250514-v1%3A0/converse')
    expect(bedrockModelPath('arn:aws:bedrock:us-east-1:123456789012:inference-profile/us.meta.llama3', true)).toBe(
      '/model/arn%3Aaws%3Abedrock%3Aus-east-1%3A123456789012%3Ainference-profile%2Fus.meta.llama3/converse-stream',
    )
    expect(bedrockModelPath("odd!'()*", false)).toBe('/model/odd%21%27%28%29%2A/converse')
  })
})

describe('signing a Bedrock request', () => {
  test('the signature headers: host, date, body hash, and a credential scoped to the region and "bedrock"', async () => {
    const headers = signed()
    expect(headers.get('host')).toBe(`localhost:${server.port}`)
    expect(headers.get('x-amz-date')).toBe('20261126T120000Z')
    expect(headers.get('x-amz-content-sha256')).toBe(createHash('sha256').update(BODY).digest('hex'))
    expect(headers.get('x-amz-security-token')).toBeNull()
    expect(headers.get('content-type')).toBe('application/json')
    expect(headers.get('authorization')).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261126\/us-east-1\/bedrock\/aws4_request, SignedHeaders=accept;content-type;host;x-amz-content-sha256;x-amz-date, Signature=[0-9a-f]{64}$/,
    )
  })

  test('the signature is the one AWS computes: the path encoded a second time in the canonical request', async () => {
    // An independent SigV4 over the same request, written out step by step as AWS documents it.
    const headers = signed()
    const hmac = (key: string | Buffer, text: string) => createHmac('sha256', key).update(text).digest()
    const hex = (text: string) => createHash('sha256').update(text).digest('hex')
    const signedNames = ['accept', 'content-type', 'host', 'x-amz-content-sha256', 'x-amz-date']
    const canonical = [
      'POST',
      '/model/us.anthropic.claude-sonnet-4-20250514-v1%253A0/converse-stream',
      '',
      ...signedNames.map((name) => `${name}:${headers.get(name)}`),
      '',
      signedNames.join(';'),
      hex(BODY),
    ].join('\n')
    const scope = '20261126/us-east-1/bedrock/aws4_request'
    const toSign = ['AWS4-HMAC-SHA256', '20261126T120000Z', scope, hex(canonical)].join('\n')
    let key = hmac(`AWS4${credentials.secretAccessKey}`, '20261126')
    for (const part of ['us-east-1', 'bedrock', 'aws4_request']) key = hmac(key, part)
    const signature = createHmac('sha256', key).update(toSign).digest('hex')
    expect(headers.get('authorization')).toEndWith(`Signature=${signature}`)
  })

  test('temporary credentials send and sign their session token', async () => {
    const headers = signed({ credentials: { ...credentials, sessionToken: 'FwoGZXIvYXdzEXAMPLE' } })
    expect(headers.get('x-amz-security-token')).toBe('FwoGZXIvYXdzEXAMPLE')
    expect(headers.get('authorization')).toContain(';x-amz-security-token,')
    expect(await send(headers)).toEqual({ ok: true, accessKeyId: 'AKIDEXAMPLE' })
  })

  test("a header given under a name the signature writes itself is neither sent nor signed twice: the signature's own goes", async () => {
    const headers = signed({
      headers: {
        'content-type': 'application/json',
        host: 'elsewhere.example',
        authorization: 'Bearer forged',
        'x-amz-date': 'x',
      },
    })
    expect(headers.get('host')).toBe(`localhost:${server.port}`)
    expect(headers.get('x-amz-date')).toBe('20261126T120000Z')
    expect(headers.get('authorization')).toContain('SignedHeaders=content-type;host;x-amz-content-sha256;x-amz-date,')
    expect(await send(headers)).toEqual({ ok: true, accessKeyId: 'AKIDEXAMPLE' })
  })

  test('a Uint8Array body signs as its bytes', async () => {
    const bytes = new TextEncoder().encode(BODY)
    const headers = signed({ body: bytes })
    expect(headers.get('x-amz-content-sha256')).toBe(createHash('sha256').update(BODY).digest('hex'))
  })
})

/** The same request signed by AWS's own signer and hash: what gw's signature must equal. */
async function awsSigned(request: Parameters<typeof signBedrockRequest>[0]): Promise<Record<string, string>> {
  const url = new URL(request.url)
  const headers: Record<string, string> = {}
  for (const [name, value] of new Headers(request.headers)) headers[name] = value
  headers.host = url.host
  const signer = new SignatureV4({
    credentials: request.credentials,
    region: request.region,
    service: 'bedrock',
    sha256: Hash.bind(null, 'sha256'),
  })
  const signed = await signer.sign(
    {
      method: request.method,
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
  return signed.headers as Record<string, string>
}

const modelId = fc.oneof(
  fc.constantFrom(
    MODEL,
    'anthropic.claude-3-haiku-20240307-v1:0',
    'arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/a1b2',
  ),
  fc.string({ unit: 'grapheme', minLength: 1, maxLength: 40 }),
)
const queryPart = fc.string({ unit: 'grapheme', maxLength: 8 })
const requests = fc.record({
  // The URL parser resolves `.` and `..`; AWS's signer drops the empty segments of `//`.
  prefix: fc.constantFrom('', '/bedrock', '/a/./b/../c', '/x//y/'),
  model: modelId,
  stream: fc.boolean(),
  query: fc.array(fc.tuple(queryPart, queryPart), { maxLength: 4 }),
  body: fc.oneof(fc.string({ unit: 'grapheme', maxLength: 200 }), fc.uint8Array({ maxLength: 200 })),
  region: fc.constantFrom('us-east-1', 'eu-central-2', 'ap-southeast-4'),
  sessionToken: fc.option(fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 40 }), { nil: undefined }),
  extraHeader: fc.option(fc.constantFrom('  two  spaces ', 'tab\there', 'plain'), { nil: undefined }),
  at: fc.integer({ min: Date.UTC(2020, 0, 1), max: Date.UTC(2035, 0, 1) }),
})

describe("gw's signature is AWS's", () => {
  test("random requests (model ids, path prefixes, queries, bodies, regions, session tokens) get exactly the headers AWS's signer writes", async () => {
    for (const seed of FUZZ_SEEDS)
      await fc.assert(
        fc.asyncProperty(requests, async (draw) => {
          const url = new URL(
            `https://bedrock-runtime.${draw.region}.amazonaws.com${draw.prefix}${bedrockModelPath(draw.model, draw.stream)}`,
          )
          for (const [name, value] of draw.query) url.searchParams.append(name, value)
          const request = {
            url,
            method: 'POST',
            headers: {
              'content-type': 'application/json',
              accept: 'application/json',
              ...(draw.extraHeader === undefined ? {} : { 'x-gw-extra': draw.extraHeader }),
            },
            body: draw.body,
            credentials: { ...credentials, ...(draw.sessionToken === undefined ? {} : { sessionToken: draw.sessionToken }) },
            region: draw.region,
            now: () => draw.at,
          }
          const ours = Object.fromEntries(signBedrockRequest(request))
          const theirs = Object.fromEntries(new Headers(await awsSigned(request)))
          expect(ours).toEqual(theirs)
        }),
        { numRuns: 300, seed },
      )
  })
})

describe('the fake server verifies what it received', () => {
  test('a request signed and sent as it is passes', async () => {
    expect(await send(signed())).toEqual({ ok: true, accessKeyId: 'AKIDEXAMPLE' })
  })

  test('a changed body fails', async () => {
    expect(await send(signed(), BODY.replace('hi', 'ho'))).toEqual({ ok: false, reason: 'the signature does not match' })
  })

  test('a changed signed header fails', async () => {
    const headers = signed()
    headers.set('accept', 'application/json')
    expect(await send(headers)).toEqual({ ok: false, reason: 'the signature does not match' })
  })

  test('another path (the model id encoded twice) fails', async () => {
    const twice = `/model/${encodeURIComponent(encodeURIComponent(MODEL))}/converse-stream`
    expect(await send(signed(), BODY, twice)).toEqual({ ok: false, reason: 'the signature does not match' })
  })

  test('the wrong secret fails; an unknown access key fails', async () => {
    const wrong = signed({ credentials: { ...credentials, secretAccessKey: 'not-the-secret' } })
    expect(await send(wrong)).toEqual({ ok: false, reason: 'the signature does not match' })
    const stranger = signed({ credentials: { ...credentials, accessKeyId: 'AKIDSTRANGER' } })
    expect(await send(stranger)).toEqual({ ok: false, reason: 'an unknown access key' })
  })

  test('another region fails', async () => {
    expect(await send(signed({ region: 'eu-west-1' }))).toEqual({ ok: false, reason: 'signed for the region eu-west-1' })
  })

  test('a stale date fails, and so does a date changed after signing', async () => {
    const stale = signed({ now: () => NOW - 10 * 60_000 })
    expect(await send(stale)).toEqual({ ok: false, reason: 'the signature has expired' })
    const moved = signed()
    moved.set('x-amz-date', '20261126T120100Z')
    expect(await send(moved)).toEqual({ ok: false, reason: 'the signature does not match' })
  })

  test('an unsigned request fails', async () => {
    expect(await send(new Headers({ 'content-type': 'application/json' }))).toEqual({
      ok: false,
      reason: 'no SigV4 authorization header',
    })
  })
})
