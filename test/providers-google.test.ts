import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync, type KeyObject, sign } from 'node:crypto'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import type { LanguageModel } from 'ai'
import OpenAI from 'openai'
import type { AccessRuleRow } from '../src/store/repositories/access-rules'
import type { RequestRecord } from '../src/store/repositories/requests'
import {
  type FakeGoogle,
  GEMINI_CALL,
  GEMINI_TEXT,
  GEMINI_THOUGHT,
  GEMINI_USAGE,
  type GoogleCall,
  serviceAccountKeyFile,
  startFakeGoogle,
} from './support/fake-google'
import { ANTHROPIC_TEXT } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { readChatStream, streamTextThroughGw } from './support/sdk-runs'
import { serveHarness } from './support/serve'

/**
 * Gemini (the Gemini API) and Vertex AI (Gemini and Claude) through gw, end to end: the official
 * OpenAI and Anthropic SDKs and the AI SDK as callers, the operator's connections pointed at a fake of
 * Google that checks what Google checks (its API key, a token it issued for a JWT signed by the service
 * account's key, the request bodies), on every dialect this run reaches.
 */

const GEMINI = 'gemini/gemini-2.5-flash'
const BARE = 'gemini-2.5-flash'
const VERTEX_GEMINI = 'vertex/gemini-2.5-flash'
const VERTEX_CLAUDE = 'vertex/claude-sonnet-4-5@20250929'
/** Gemini 3 numbers its calls, and refuses a history without their signatures. */
const GEMINI_3 = 'gemini/gemini-3-pro-preview'

const TARGETS = [
  { model: GEMINI, provider: 'gemini', text: GEMINI_TEXT.join('') },
  { model: BARE, provider: 'gemini', text: GEMINI_TEXT.join('') },
  { model: VERTEX_GEMINI, provider: 'vertex', text: GEMINI_TEXT.join('') },
  { model: VERTEX_CLAUDE, provider: 'vertex', text: ANTHROPIC_TEXT.join('') },
] as const
const TOOL_TARGETS = [...TARGETS, { model: GEMINI_3, provider: 'gemini', text: GEMINI_TEXT.join('') }] as const

/** What Gemini 2.5 Flash costs for the fake's usage: 1000 tokens in at $0.30/M, 400 out at $2.50/M. */
const GEMINI_COST_NANO = GEMINI_USAGE.prompt * 300 + GEMINI_USAGE.candidates * 2_500
/** Claude Sonnet 4.5 at Anthropic's list price for the fake Anthropic provider's usage (1000 in, 500 out). */
const CLAUDE_COST_NANO = 1_000 * 3_000 + 500 * 15_000

const WEATHER_TOOL = {
  type: 'function' as const,
  function: {
    name: 'get_weather',
    description: 'The weather in a city',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}
const WEATHER_TOOL_ANTHROPIC = {
  name: 'get_weather',
  description: 'The weather in a city',
  input_schema: { type: 'object' as const, properties: { city: { type: 'string' } }, required: ['city'] },
}

/**
 * A service account of the test's: its RSA key pair made here, its key file pointing at the fake's
 * token endpoint. A forged one signs with a key other than the one Google holds for the account.
 */
function serviceAccount(google: FakeGoogle, name: string, forged = false): { email: string; keyFile: string } {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
  const email = `${name}@${google.project}.iam.gserviceaccount.com`
  google.trust(email, forged ? generateKeyPairSync('rsa', { modulusLength: 2048 }).publicKey : publicKey)
  const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
  return { email, keyFile: serviceAccountKeyFile(google, { clientEmail: email, privateKeyPem }) }
}

/** Whose assertion a token request carried (its `iss`). */
function issuerOf(call: GoogleCall): string | undefined {
  const claims = String(call.body.assertion ?? '').split('.')[1] ?? ''
  const parsed: unknown = JSON.parse(Buffer.from(claims, 'base64url').toString('utf8') || '{}')
  return typeof parsed === 'object' && parsed !== null ? String((parsed as Record<string, unknown>).iss) : undefined
}

/** What a promise rejects with, or undefined when it resolves. */
async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
    return undefined
  } catch (error) {
    return error
  }
}

describe('the fake Google refuses what Google refuses', () => {
  let google: FakeGoogle
  let signer: KeyObject
  const email = 'checker@fake-project.iam.gserviceaccount.com'
  beforeAll(async () => {
    google = await startFakeGoogle()
    const pair = generateKeyPairSync('rsa', { modulusLength: 2048 })
    signer = pair.privateKey
    google.trust(email, pair.publicKey)
  })
  afterAll(() => google.close())

  const b64url = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url')
  /** A JWT bearer assertion, good unless a test changes a claim or the key. */
  function jwt(claims: Record<string, unknown> = {}, key = signer): string {
    const now = Math.floor(Date.now() / 1000)
    const input = `${b64url({ alg: 'RS256', typ: 'JWT' })}.${b64url({
      iss: email,
      scope: 'https://www.googleapis.com/auth/cloud-platform',
      aud: google.tokenUri,
      iat: now,
      exp: now + 3_600,
      ...claims,
    })}`
    return `${input}.${sign('sha256', Buffer.from(input), key).toString('base64url')}`
  }
  const exchange = (assertion: string, grantType = 'urn:ietf:params:oauth:grant-type:jwt-bearer') =>
    fetch(google.tokenUri, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: grantType, assertion }).toString(),
    })
  const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
    fetch(`${google.url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: typeof body === 'string' ? body : JSON.stringify(body),
    })
  const hello = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }
  const geminiPath = '/v1beta/models/gemini-2.5-flash:generateContent'
  const vertexPath = (publisher: string, model: string, method: string, project = google.project, location = google.location) =>
    `/v1/projects/${project}/locations/${location}/publishers/${publisher}/models/${model}:${method}`
  const googleError = async (response: Response) => ({
    status: response.status,
    error: ((await response.json()) as { error: { code: number; status: string; message: string; details?: unknown[] } }).error,
  })

  test('the token endpoint: a token only for a well-made assertion signed by the account', async () => {
    const good = await exchange(jwt())
    expect(good.status).toBe(200)
    expect(await good.json()).toMatchObject({ token_type: 'Bearer', expires_in: 3_599 })
    const now = Math.floor(Date.now() / 1000)
    const refusals: Array<[Promise<Response>, string, string]> = [
      [exchange(jwt(), 'client_credentials'), 'unsupported_grant_type', 'Invalid grant_type'],
      [
        exchange(jwt({}, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey)),
        'invalid_grant',
        'Invalid JWT Signature.',
      ],
      [exchange(jwt({ iss: 'nobody@example.iam.gserviceaccount.com' })), 'invalid_grant', 'account not found'],
      [exchange(jwt({ aud: 'https://oauth2.googleapis.com/token' })), 'invalid_grant', 'Failed audience check'],
      [exchange(jwt({ scope: 'https://www.googleapis.com/auth/drive' })), 'invalid_grant', 'Invalid OAuth scope'],
      [exchange(jwt({ iat: now, exp: now + 7_200 })), 'invalid_grant', 'short-lived token'],
      [exchange(jwt({ iat: now - 4_000, exp: now - 400 })), 'invalid_grant', 'short-lived token'],
      [exchange(`${jwt().split('.').slice(0, 2).join('.')}.`), 'invalid_grant', 'Invalid JWT Signature.'],
      [exchange('not-a-jwt'), 'invalid_grant', 'Invalid JWT'],
    ]
    for (const [answer, error, description] of refusals) {
      const response = await answer
      expect(response.status).toBe(400)
      const body = (await response.json()) as { error: string; error_description: string }
      expect(body.error).toBe(error)
      expect(body.error_description).toContain(description)
    }
    expect(google.tokensIssued).toBe(1)
  })

  test("the Gemini API: its key, and Google's error shape", async () => {
    expect(await googleError(await post(geminiPath, hello))).toMatchObject({
      status: 403,
      error: { code: 403, status: 'PERMISSION_DENIED' },
    })
    const wrong = await googleError(await post(geminiPath, hello, { 'x-goog-api-key': 'AIzaWrong' }))
    expect(wrong).toMatchObject({
      status: 400,
      error: { status: 'INVALID_ARGUMENT', message: 'API key not valid. Please pass a valid API key.' },
    })
    expect(wrong.error.details).toMatchObject([{ reason: 'API_KEY_INVALID' }])
    expect((await post(`${geminiPath}?key=${google.apiKey}`, hello)).status).toBe(200)
    const unknown = await post('/v1beta/models/gemini%2F2.5:generateContent', hello, { 'x-goog-api-key': google.apiKey })
    expect(unknown.status).toBe(404)
    const limited = await googleError(
      await post(geminiPath, { contents: [{ parts: [{ text: 'fake:error:429' }] }] }, { 'x-goog-api-key': google.apiKey }),
    )
    expect(limited).toMatchObject({ status: 429, error: { status: 'RESOURCE_EXHAUSTED' } })
    expect(JSON.stringify(limited.error.details)).toContain('google.rpc.RetryInfo')
  })

  test('a generateContent body: what Google refuses, it refuses', async () => {
    const key = { 'x-goog-api-key': google.apiKey }
    const call = (parts: unknown[]) => ({ role: 'model', parts })
    const weather = { functionCall: { name: 'get_weather', args: { city: 'Paris' } } }
    const result = { functionResponse: { name: 'get_weather', response: { output: 'Sunny' } } }
    const question = { role: 'user', parts: [{ text: 'Weather?' }] }
    const refused: Array<[unknown, string]> = [
      [{ ...hello, model: 'gemini-2.5-flash' }, 'Unknown name "model"'],
      [{ ...hello, stream: true }, 'Unknown name "stream"'],
      [{ contents: [] }, 'contents is not specified'],
      [{ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'Please use a valid role: user, model.'],
      [{ contents: [{ role: 'user', parts: [] }] }, 'contents.parts must not be empty'],
      [
        { contents: [{ role: 'user', parts: [{ text: 'x', inlineData: { mimeType: 'image/png', data: 'AA==' } }] }] },
        "oneof field 'data'",
      ],
      [{ contents: [{ role: 'user', parts: [{ text: 'x', cache_control: {} }] }] }, 'Unknown name "cache_control"'],
      [{ contents: [question, call([weather]), { role: 'user', parts: [result] }] }, 'missing a thought_signature'],
      [
        { contents: [question, call([{ ...weather, thoughtSignature: 'Zm9yZ2Vk' }]), { role: 'user', parts: [result] }] },
        'Thought signature is not valid',
      ],
      [{ contents: [question, call([{ ...weather, thoughtSignature: 'not base64!' }])] }, 'Base64 decoding failed'],
      [
        { contents: [question, { role: 'user', parts: [{ functionResponse: { name: 'f', response: 'Sunny' } }] }] },
        'google.protobuf.Struct',
      ],
      [
        { ...hello, generationConfig: { thinkingConfig: { thinkingBudget: 10, thinkingLevel: 'LOW' } } },
        'thinking budget and thinking level',
      ],
      [{ ...hello, tools: [{ functionDeclarations: [{ name: 'bad name' }] }] }, 'Invalid function name'],
    ]
    for (const [body, message] of refused) {
      const answer = await googleError(await post(geminiPath, body, key))
      expect({ body, answer }).toMatchObject({ answer: { status: 400, error: { status: 'INVALID_ARGUMENT' } } })
      expect(answer.error.message).toContain(message)
    }
    // The calls it makes carry signatures it takes back; the results must answer every call.
    const first = (await (
      await post(geminiPath, { contents: [{ role: 'user', parts: [{ text: 'fake:tools fake:parallel' }] }] }, key)
    ).json()) as {
      candidates: Array<{ content: { parts: Array<Record<string, unknown>> } }>
    }
    const parts = first.candidates[0]?.content.parts ?? []
    expect(parts[0]?.thoughtSignature).toBe(google.signatures.at(-1))
    expect(parts[1]?.thoughtSignature).toBeUndefined()
    const twoCalls = { role: 'model', parts }
    const oneResult = await googleError(
      await post(geminiPath, { contents: [question, twoCalls, { role: 'user', parts: [result] }] }, key),
    )
    expect(oneResult.error.message).toContain('number of function response parts is equal to the number of function call parts')
    const both = { role: 'user', parts: [result, { functionResponse: { name: 'get_time', response: { output: '15:00' } } }] }
    expect((await post(geminiPath, { contents: [question, twoCalls, both] }, key)).status).toBe(200)
  })

  test('streams: data lines only, no [DONE]; usage on every Gemini API chunk and only on the last of Vertex', async () => {
    const token = ((await (await exchange(jwt())).json()) as { access_token: string }).access_token
    const events = async (response: Response) => (await response.text()).split('\r\n\r\n').filter((frame) => frame !== '')
    const gemini = await events(
      await post('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', hello, { 'x-goog-api-key': google.apiKey }),
    )
    expect(gemini.length).toBe(GEMINI_TEXT.length)
    for (const frame of gemini) {
      expect(frame.startsWith('data: {')).toBe(true)
      expect(JSON.parse(frame.slice(6)).usageMetadata.promptTokenCount).toBe(GEMINI_USAGE.prompt)
    }
    const vertex = await events(
      await post(`${vertexPath('google', 'gemini-2.5-flash', 'streamGenerateContent')}?alt=sse`, hello, {
        authorization: `Bearer ${token}`,
      }),
    )
    const usages = vertex.map((frame) => JSON.parse(frame.slice(6)).usageMetadata)
    expect(usages.slice(0, -1).every((usage) => usage.promptTokenCount === undefined)).toBe(true)
    expect(usages.at(-1)).toMatchObject({ promptTokenCount: GEMINI_USAGE.prompt, candidatesTokenCount: GEMINI_USAGE.candidates })
  })

  test('Vertex: a token the fake issued, its project and location; Claude without model and with vertex-2023-10-16', async () => {
    const token = ((await (await exchange(jwt())).json()) as { access_token: string }).access_token
    const bearer = { authorization: `Bearer ${token}` }
    const gemini = vertexPath('google', 'gemini-2.5-flash', 'generateContent')
    expect((await post(gemini, hello)).status).toBe(401)
    expect((await post(gemini, hello, { authorization: 'Bearer ya29.made-up' })).status).toBe(401)
    expect((await post(gemini, hello, bearer)).status).toBe(200)
    expect((await post(vertexPath('google', 'gemini-2.5-flash', 'generateContent', 'other-project'), hello, bearer)).status).toBe(
      403,
    )
    expect(
      (await post(vertexPath('google', 'gemini-2.5-flash', 'generateContent', google.project, 'europe-west4'), hello, bearer))
        .status,
    ).toBe(404)
    expect(await googleError(await post(gemini, { contents: [{ parts: [{ text: 'hi' }] }] }, bearer))).toMatchObject({
      status: 400,
      error: { message: 'Please use a valid role: user, model.' },
    })
    const claude = vertexPath('anthropic', 'claude-sonnet-4-5@20250929', 'rawPredict')
    const messages = { max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }
    const refusals: Array<[unknown, string]> = [
      [
        { ...messages, anthropic_version: 'vertex-2023-10-16', model: 'claude-sonnet-4-5' },
        'model: Extra inputs are not permitted',
      ],
      [messages, 'anthropic_version: Field required'],
      [{ ...messages, anthropic_version: '2023-06-01' }, "anthropic_version: Input should be 'vertex-2023-10-16'"],
    ]
    for (const [body, message] of refusals) {
      const response = await post(claude, body, bearer)
      expect(response.status).toBe(400)
      expect(await response.json()).toEqual({ type: 'error', error: { type: 'invalid_request_error', message } })
    }
    const answered = await post(claude, { ...messages, anthropic_version: 'vertex-2023-10-16' }, bearer)
    expect(await answered.json()).toMatchObject({ type: 'message', model: 'claude-sonnet-4-5@20250929' })
  })
})

describe.each(DIALECTS)('Google providers on %s', (dialect) => {
  let google: FakeGoogle
  let h: Harness
  /** The same fake, with a Gemini key Google does not know and a service account whose tokens it refuses. */
  let bad: Harness
  let org: Org
  let badOrg: Org
  let server: { url: string; stop(): Promise<void> }
  let badServer: { url: string; stop(): Promise<void> }
  let openai: OpenAI
  let anthropic: Anthropic
  let account: { email: string; keyFile: string }

  beforeAll(async () => {
    google = await startFakeGoogle()
    account = serviceAccount(google, 'gw-test')
    h = await createHarness({
      dialect,
      providers: {
        gemini: { apiKey: google.apiKey, baseUrl: google.url },
        vertex: { apiKey: account.keyFile, baseUrl: google.url, project: google.project, location: google.location },
      },
    })
    // Its assertions are signed by a key Google does not hold for it: Google answers invalid_grant.
    const stranger = serviceAccount(google, 'gw-stranger', true)
    bad = await createHarness({
      database: h,
      providers: {
        gemini: { apiKey: 'AIzaNotAKeyGoogleKnows', baseUrl: google.url },
        vertex: { apiKey: stranger.keyFile, baseUrl: google.url, project: google.project, location: google.location },
      },
    })
    org = await h.org('growth')
    await h.services.organizations.addCredits(org.orgId, 100)
    badOrg = await bad.org('growth')
    await bad.services.organizations.addCredits(badOrg.orgId, 100)
    server = serveHarness(h)
    badServer = serveHarness(bad)
    openai = new OpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 })
    anthropic = new Anthropic({ authToken: org.apiKey, apiKey: null, baseURL: server.url, maxRetries: 0 })
  })
  afterAll(async () => {
    await server.stop()
    await badServer.stop()
    await bad.close()
    await h.close()
    await google.close()
  })

  /** The request record of a call, once the log has written it (a stream's when the stream ends). */
  async function recordOf(requestId: string | null, harness = h, owner = org): Promise<RequestRecord> {
    for (let i = 0; i < 100; i++) {
      await harness.requestLog.flush()
      const record = await harness.store.requests.get(owner.orgId, requestId ?? '')
      if (record) return record
      await Bun.sleep(20)
    }
    throw new Error(`no record for ${requestId}`)
  }

  const tokenRequestsOf = (email: string) => google.calls.filter((call) => call.api === 'token' && issuerOf(call) === email)
  const modelCalls = () => google.calls.filter((call) => call.api !== 'token')
  /** The last call that reached a Gemini model (the Gemini API or Vertex). */
  const lastGeminiCall = () => modelCalls().findLast((call) => call.model?.startsWith('gemini')) as GoogleCall
  const costOf = (model: string) => (model === VERTEX_CLAUDE ? CLAUDE_COST_NANO : GEMINI_COST_NANO)

  test('the Vertex token is fetched once for many calls, concurrent ones included', async () => {
    const ask = (model: string) => openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
    await Promise.all(Array.from({ length: 6 }, (_, i) => ask(i % 2 === 0 ? VERTEX_GEMINI : VERTEX_CLAUDE)))
    for (let i = 0; i < 4; i++) await ask(i % 2 === 0 ? VERTEX_GEMINI : VERTEX_CLAUDE)
    const exchanges = tokenRequestsOf(account.email)
    expect(exchanges).toHaveLength(1)
    expect(exchanges[0]?.status).toBe(200)
    expect(google.tokensIssued).toBe(1)
    // Each Vertex call carried it.
    const vertexCalls = modelCalls().filter((call) => call.api === 'vertex')
    expect(vertexCalls).toHaveLength(10)
    expect(new Set(vertexCalls.map((call) => call.headers.authorization)).size).toBe(1)
  })

  describe('the openai SDK', () => {
    for (const { model, provider, text } of TARGETS) {
      test(`${model}: a whole answer, Gw-Provider ${provider}, and a record with the tokens and the cost`, async () => {
        const { data, response } = await openai.chat.completions
          .create({ model, messages: [{ role: 'user', content: 'Hello?' }] })
          .withResponse()
        expect(data.choices[0]?.message.content).toBe(text)
        expect(data.choices[0]?.finish_reason).toBe('stop')
        expect(response.headers.get('gw-provider')).toBe(provider)
        const record = await recordOf(response.headers.get('gw-id'))
        expect(record).toMatchObject({ provider, status: 'success', httpStatus: 200 })
        if (model === VERTEX_CLAUDE) expect(record).toMatchObject({ promptTokens: 1_000, completionTokens: 500 })
        else expect(record).toMatchObject({ promptTokens: GEMINI_USAGE.prompt, completionTokens: GEMINI_USAGE.candidates })
        expect(record.costNano).toBe(costOf(model))
      })

      test(`${model}: a stream with include_usage gives the text in order and the usage; the record is priced`, async () => {
        const { data: stream, response } = await openai.chat.completions
          .create({
            model,
            messages: [{ role: 'user', content: 'Hello?' }],
            stream: true,
            stream_options: { include_usage: true },
          })
          .withResponse()
        const { text: got, finish, usage } = await readChatStream(stream)
        expect(got).toBe(text)
        expect(finish).toBe('stop')
        expect(response.headers.get('gw-provider')).toBe(provider)
        if (model === VERTEX_CLAUDE) expect(usage).toMatchObject({ prompt_tokens: 1_000, completion_tokens: 500 })
        else
          expect(usage).toMatchObject({
            prompt_tokens: GEMINI_USAGE.prompt,
            completion_tokens: GEMINI_USAGE.candidates,
            total_tokens: GEMINI_USAGE.prompt + GEMINI_USAGE.candidates,
          })
        const record = await recordOf(response.headers.get('gw-id'))
        expect(record).toMatchObject({ provider, status: 'success' })
        expect(record.costNano).toBe(costOf(model))
      })

      test(`${model}: a stream without include_usage has no usage chunk, and is still priced`, async () => {
        const { data: stream, response } = await openai.chat.completions
          .create({ model, messages: [{ role: 'user', content: 'Hello?' }], stream: true })
          .withResponse()
        const { chunks } = await readChatStream(stream)
        expect(chunks.filter((chunk) => chunk.usage)).toEqual([])
        expect((await recordOf(response.headers.get('gw-id'))).costNano).toBe(costOf(model))
      })
    }

    for (const { model, text } of TOOL_TARGETS) {
      test(`${model}: a tool call and its result over two turns, whole, the signature going back byte for byte`, async () => {
        const messages: OpenAI.ChatCompletionMessageParam[] = [{ role: 'user', content: 'Weather in Paris? fake:tools-once' }]
        const first = await openai.chat.completions.create({ model, messages, tools: [WEATHER_TOOL] })
        expect(first.choices[0]?.finish_reason).toBe('tool_calls')
        const call = first.choices[0]?.message.tool_calls?.[0]
        if (call?.type !== 'function') throw new Error('no function call')
        expect(JSON.parse(call.function.arguments)).toEqual(GEMINI_CALL.args)
        expect(call.function.name).toBe('get_weather')
        const signature = google.signatures.at(-1)
        const second = await openai.chat.completions.create({
          model,
          tools: [WEATHER_TOOL],
          messages: [
            ...messages,
            first.choices[0]?.message as OpenAI.ChatCompletionMessageParam,
            { role: 'tool', tool_call_id: call.id, content: '{"celsius":21}' },
          ],
        })
        expect(second.choices[0]?.message.content).toBe(text)
        expect(second.choices[0]?.finish_reason).toBe('stop')
        if (model === VERTEX_CLAUDE) {
          const sent = google.anthropic.calls.at(-1)?.body.messages as Array<{ content: unknown }>
          expect(sent.at(-1)?.content).toMatchObject([{ type: 'tool_result', tool_use_id: call.id }])
          return
        }
        const history = lastGeminiCall().body.contents as Array<{ role: string; parts: Array<Record<string, unknown>> }>
        expect(history[1]?.parts[0]?.thoughtSignature).toBe(signature)
        expect(history[2]?.parts[0]).toMatchObject({
          functionResponse: { name: 'get_weather', response: { output: '{"celsius":21}' } },
        })
      })

      test(`${model}: a streamed tool call whose argument fragments add up, then the second turn`, async () => {
        const messages: OpenAI.ChatCompletionMessageParam[] = [
          { role: 'user', content: 'Weather in Paris? fake:tools-once fake:parallel' },
        ]
        const stream = await openai.chat.completions.create({ model, messages, tools: [WEATHER_TOOL], stream: true })
        const { calls, finish } = await readChatStream(stream)
        expect(finish).toBe('tool_calls')
        const [weather, ...rest] = calls
        expect(weather?.name).toBe('get_weather')
        expect(JSON.parse(weather?.arguments ?? '')).toEqual(GEMINI_CALL.args)
        // Gemini answered two calls at once (the fake's parallel directive); Claude one.
        expect(rest.map((call) => JSON.parse(call.arguments))).toEqual(model === VERTEX_CLAUDE ? [] : [{ zone: 'Europe/Paris' }])
        const assistant: OpenAI.ChatCompletionAssistantMessageParam = {
          role: 'assistant',
          content: null,
          tool_calls: calls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
          })),
        }
        const results: OpenAI.ChatCompletionToolMessageParam[] = calls.map((call) => ({
          role: 'tool',
          tool_call_id: call.id,
          content: call.name === 'get_weather' ? 'Sunny' : '15:00',
        }))
        const second = await openai.chat.completions.create({
          model,
          tools: [WEATHER_TOOL],
          messages: [...messages, assistant, ...results],
          stream: true,
        })
        expect((await readChatStream(second)).text).toBe(text)
      })
    }

    for (const model of [GEMINI, VERTEX_GEMINI]) {
      test(`${model}: thinking reaches the caller as reasoning, counts as output, and cached tokens are priced as cache reads`, async () => {
        const { data, response } = await openai.chat.completions
          .create({ model, messages: [{ role: 'user', content: 'Think. fake:thinking fake:cache' }] })
          .withResponse()
        const message = data.choices[0]?.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string }
        expect(message.reasoning_content).toBe(GEMINI_THOUGHT)
        expect(message.content).toBe(GEMINI_TEXT.join(''))
        expect(data.usage).toMatchObject({
          prompt_tokens: GEMINI_USAGE.prompt,
          completion_tokens: GEMINI_USAGE.candidates + GEMINI_USAGE.thoughts,
          prompt_tokens_details: { cached_tokens: GEMINI_USAGE.cached },
        })
        const record = await recordOf(response.headers.get('gw-id'))
        expect(record).toMatchObject({
          promptTokens: GEMINI_USAGE.prompt,
          completionTokens: GEMINI_USAGE.candidates + GEMINI_USAGE.thoughts,
          cacheReadTokens: GEMINI_USAGE.cached,
        })
        // 700 uncached in at $0.30/M, 300 cached at $0.03/M, 500 out (thinking included) at $2.50/M.
        expect(record.costNano).toBe(700 * 300 + 300 * 30 + 500 * 2_500)
      })
    }
  })

  describe('the Anthropic SDK', () => {
    for (const { model, provider, text } of TARGETS) {
      test(`${model}: a whole message and a streamed one, with the usage`, async () => {
        const { data, response } = await anthropic.messages
          .create({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hello?' }] })
          .withResponse()
        expect(data.content).toMatchObject([{ type: 'text', text }])
        expect(data.content).toHaveLength(1)
        expect(data.stop_reason).toBe('end_turn')
        expect(response.headers.get('gw-provider')).toBe(provider)
        const streamed = await anthropic.messages
          .stream({ model, max_tokens: 100, messages: [{ role: 'user', content: 'Hello?' }] })
          .finalMessage()
        expect(streamed.content).toMatchObject([{ type: 'text', text }])
        expect(streamed.usage.output_tokens).toBe(model === VERTEX_CLAUDE ? 500 : GEMINI_USAGE.candidates)
        const record = await recordOf(response.headers.get('gw-id'))
        expect(record).toMatchObject({ provider, status: 'success' })
        expect(record.costNano).toBe(costOf(model))
      })
    }

    for (const { model, text } of TOOL_TARGETS) {
      test(`${model}: tool_use and tool_result over two turns, whole and streamed`, async () => {
        for (const streamed of [false, true]) {
          const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in Paris? fake:tools-once' }]
          const ask = (conversation: Anthropic.MessageParam[]) => {
            const body = { model, max_tokens: 200, tools: [WEATHER_TOOL_ANTHROPIC], messages: conversation }
            return streamed ? anthropic.messages.stream(body).finalMessage() : anthropic.messages.create(body)
          }
          const first = await ask(messages)
          expect(first.stop_reason).toBe('tool_use')
          const use = first.content.find((block) => block.type === 'tool_use')
          if (use?.type !== 'tool_use') throw new Error('no tool_use')
          expect(use.input).toEqual(GEMINI_CALL.args)
          expect(use.id).toMatch(/^[a-zA-Z0-9_-]+$/)
          const signature = google.signatures.at(-1)
          const second = await ask([
            ...messages,
            { role: 'assistant', content: first.content },
            { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny' }] },
          ])
          expect(second.content).toMatchObject([{ type: 'text', text }])
          if (model === VERTEX_CLAUDE) continue
          const history = lastGeminiCall().body.contents as Array<{ parts: Array<Record<string, unknown>> }>
          expect(history[1]?.parts.find((part) => part.functionCall)?.thoughtSignature).toBe(signature)
        }
      })
    }

    test(`${VERTEX_CLAUDE}: the caller's anthropic-beta header reaches Vertex, which takes betas as Anthropic does`, async () => {
      const betas = 'fine-grained-tool-streaming-2025-05-14'
      await anthropic.messages.create(
        { model: VERTEX_CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
        { headers: { 'anthropic-beta': betas } },
      )
      expect(modelCalls().at(-1)?.headers['anthropic-beta']).toBe(betas)
    })

    test(`${GEMINI}: extended thinking asked for by an Anthropic caller comes back as a thinking block, streamed too`, async () => {
      const body = {
        model: GEMINI,
        max_tokens: 2_000,
        thinking: { type: 'enabled' as const, budget_tokens: 1_024 },
        messages: [{ role: 'user' as const, content: 'Think. fake:thinking' }],
      }
      for (const message of [await anthropic.messages.create(body), await anthropic.messages.stream(body).finalMessage()]) {
        expect(message.content).toMatchObject([
          { type: 'thinking', thinking: GEMINI_THOUGHT },
          { type: 'text', text: GEMINI_TEXT.join('') },
        ])
        expect(message.usage.output_tokens).toBe(GEMINI_USAGE.candidates + GEMINI_USAGE.thoughts)
      }
      expect(lastGeminiCall().body.generationConfig).toMatchObject({
        thinkingConfig: { thinkingBudget: 1_024, includeThoughts: true },
      })
    })
  })

  describe('the AI SDK', () => {
    const routes: Array<{ name: string; model: () => LanguageModel; text: string }> = [
      ...TOOL_TARGETS.map(({ model, text }) => ({
        name: `@ai-sdk/openai chat, ${model}`,
        model: () => createOpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1` }).chat(model),
        text,
      })),
      ...[GEMINI, VERTEX_GEMINI].map((model) => ({
        name: `@ai-sdk/anthropic, ${model}`,
        model: () => createAnthropic({ authToken: org.apiKey, baseURL: `${server.url}/v1` })(model),
        text: GEMINI_TEXT.join(''),
      })),
    ]

    for (const route of routes) {
      test(`${route.name}: a tool loop over two steps, streamed, finishes with the model's text`, async () => {
        const outcome = await streamTextThroughGw(route.model(), 'What is the weather in Paris? fake:tools-once', true)
        expect(outcome.errors.map(String)).toEqual([])
        expect(outcome.executed).toEqual([GEMINI_CALL.args])
        expect(outcome.steps).toHaveLength(2)
        expect(outcome.finishReason).toBe('stop')
        expect(outcome.text).toBe(route.text)
        expect(outcome.usage?.inputTokens).toBeGreaterThan(0)
      })
    }
  })

  describe('errors', () => {
    for (const model of [GEMINI, VERTEX_GEMINI, VERTEX_CLAUDE]) {
      test(`${model}: a 429 reaches an OpenAI caller as OpenAI's rate-limit error and an Anthropic caller as Anthropic's`, async () => {
        const prompt = 'fake:error:429'
        const openaiFailure = await failureOf(() =>
          openai.chat.completions.create({ model, messages: [{ role: 'user', content: prompt }] }),
        )
        expect(openaiFailure).toBeInstanceOf(OpenAI.RateLimitError)
        expect((openaiFailure as InstanceType<typeof OpenAI.APIError>).type).toBe('rate_limit_error')
        // Google says when to retry only in its body; gw says it where the SDKs look.
        if (model !== VERTEX_CLAUDE)
          expect((openaiFailure as InstanceType<typeof OpenAI.APIError>).headers?.get('retry-after')).toBe('7')
        const anthropicFailure = await failureOf(() =>
          anthropic.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: prompt }] }),
        )
        expect(anthropicFailure).toBeInstanceOf(Anthropic.RateLimitError)
        expect((anthropicFailure as InstanceType<typeof Anthropic.APIError>).type).toBe('rate_limit_error')
      })
    }

    for (const model of [GEMINI, VERTEX_GEMINI]) {
      test(`${model}: Google's 500 and 503 reach the caller as server errors, with Google's message`, async () => {
        const failure = (await failureOf(() =>
          openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'fake:error:500' }] }),
        )) as InstanceType<typeof OpenAI.APIError>
        expect(failure).toBeInstanceOf(OpenAI.InternalServerError)
        expect(failure.message).toContain('An internal error has occurred')
        const overloaded = (await failureOf(() =>
          anthropic.messages.create({ model, max_tokens: 50, messages: [{ role: 'user', content: 'fake:error:503' }] }),
        )) as InstanceType<typeof Anthropic.APIError>
        expect(overloaded).toBeInstanceOf(Anthropic.APIError)
        expect(overloaded.type).toBe('overloaded_error')
      })

      for (const directive of ['fake:midstream-fail', 'fake:stream-error']) {
        test(`${model}: ${directive} is an error every SDK raises, never a clean end`, async () => {
          const openaiFailure = await failureOf(async () => {
            const stream = await openai.chat.completions.create({
              model,
              messages: [{ role: 'user', content: directive }],
              stream: true,
            })
            for await (const _ of stream);
          })
          expect(openaiFailure).toBeInstanceOf(OpenAI.APIError)
          const anthropicFailure = await failureOf(() =>
            anthropic.messages.stream({ model, max_tokens: 50, messages: [{ role: 'user', content: directive }] }).finalMessage(),
          )
          expect(anthropicFailure).toBeInstanceOf(Error)
        })
      }
    }

    test("a Gemini key Google does not know: Google's 400 reaches each caller in its own format", async () => {
      const badOpenai = new OpenAI({ apiKey: badOrg.apiKey, baseURL: `${badServer.url}/v1`, maxRetries: 0 })
      const badAnthropic = new Anthropic({ authToken: badOrg.apiKey, apiKey: null, baseURL: badServer.url, maxRetries: 0 })
      const openaiFailure = (await failureOf(() =>
        badOpenai.chat.completions.create({ model: GEMINI, messages: [{ role: 'user', content: 'hi' }] }),
      )) as InstanceType<typeof OpenAI.APIError>
      expect(openaiFailure).toBeInstanceOf(OpenAI.BadRequestError)
      expect(openaiFailure.message).toContain('API key not valid')
      const anthropicFailure = (await failureOf(() =>
        badAnthropic.messages.create({ model: GEMINI, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
      )) as InstanceType<typeof Anthropic.APIError>
      expect(anthropicFailure).toBeInstanceOf(Anthropic.BadRequestError)
      expect(anthropicFailure.type).toBe('invalid_request_error')
      expect(anthropicFailure.message).toContain('API key not valid')
      expect(google.calls.at(-1)).toMatchObject({ api: 'gemini', status: 400 })
    })

    test('a token the token endpoint refuses fails the call with a clear message, again on the next call, and gw keeps serving', async () => {
      const badOpenai = new OpenAI({ apiKey: badOrg.apiKey, baseURL: `${badServer.url}/v1`, maxRetries: 0 })
      for (const model of [VERTEX_GEMINI, VERTEX_CLAUDE]) {
        const since = modelCalls().length
        const { status, id, body } = await fetch(`${badServer.url}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${badOrg.apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model, messages: [{ role: 'user', content: 'hi' }] }),
        }).then(async (response) => ({
          status: response.status,
          id: response.headers.get('gw-id'),
          body: (await response.json()) as { error: { message: string } },
        }))
        expect(status).toBe(502)
        expect(body.error.message).toContain('Vertex AI: the service account could not be authenticated')
        expect(body.error.message).toContain('invalid_grant: Invalid JWT Signature.')
        // No model call went out without a token, and the failure is on the record.
        expect(modelCalls().length).toBe(since)
        expect(await recordOf(id, bad, badOrg)).toMatchObject({ provider: 'vertex', status: 'error', httpStatus: 502 })
        const failure = await failureOf(() =>
          badOpenai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] }),
        )
        expect(failure).toBeInstanceOf(OpenAI.APIError)
      }
      const good = await openai.chat.completions.create({ model: VERTEX_GEMINI, messages: [{ role: 'user', content: 'hi' }] })
      expect(good.choices[0]?.message.content).toBe(GEMINI_TEXT.join(''))
    })
  })

  test('a token Google revokes before it expires fails one call (401) and the next asks for a new one', async () => {
    await openai.chat.completions.create({ model: VERTEX_GEMINI, messages: [{ role: 'user', content: 'hi' }] })
    const issued = google.tokensIssued
    google.revokeTokens()
    const refused = await failureOf(() =>
      openai.chat.completions.create({ model: VERTEX_GEMINI, messages: [{ role: 'user', content: 'hi' }] }),
    )
    expect(refused).toBeInstanceOf(OpenAI.AuthenticationError)
    expect(google.tokensIssued).toBe(issued)
    for (const model of [VERTEX_GEMINI, VERTEX_CLAUDE]) {
      const served = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: 'hi' }] })
      expect(served.choices[0]?.message.content?.length).toBeGreaterThan(0)
    }
    expect(google.tokensIssued).toBe(issued + 1)
  })

  test("Vertex's own refusal of a Claude call reaches an Anthropic caller in Anthropic's error shape, not Google's", async () => {
    await anthropic.messages.create({ model: VERTEX_CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
    google.revokeTokens()
    const refused = await fetch(`${server.url}/v1/messages`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: VERTEX_CLAUDE, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] }),
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('gw-gateway-mode')).toBe('passthrough')
    expect(await refused.json()).toEqual({
      type: 'error',
      error: { type: 'authentication_error', message: expect.stringContaining('Request had invalid authentication credentials') },
    })
    // The next call asks for a new token and is served.
    const served = await anthropic.messages.create({
      model: VERTEX_CLAUDE,
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(served.content[0]?.type).toBe('text')
  })

  test('an access rule denying provider vertex refuses the call (403) without reaching Google', async () => {
    const denied = await h.org('growth')
    await h.services.organizations.addCredits(denied.orgId, 100)
    const now = new Date()
    const rule: AccessRuleRow = {
      id: `deny-vertex-${dialect}`,
      orgId: denied.orgId,
      subjectKind: 'org',
      subjectId: '',
      resourceKind: 'provider',
      resourceId: 'vertex',
      effect: 'deny',
      reason: 'no Vertex here',
      createdAt: now,
      updatedAt: now,
    }
    await h.store.org(denied.orgId).accessRules.create(rule)
    await h.services.accessPolicies.changed(denied.orgId)
    const since = google.calls.length
    for (const model of [VERTEX_GEMINI, VERTEX_CLAUDE]) {
      const response = await h.request('POST', '/v1/chat/completions', {
        token: denied.apiKey,
        body: { model, messages: [{ role: 'user', content: 'hi' }] },
      })
      expect(response.status).toBe(403)
      expect(((await response.json()) as { error: { type: string } }).error.type).toBe('permission_error')
    }
    expect(google.calls.length).toBe(since)
    // The Gemini API is another provider, and stays allowed.
    const gemini = await h.request('POST', '/v1/chat/completions', {
      token: denied.apiKey,
      body: { model: GEMINI, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(gemini.status).toBe(200)
  })

  test("after every call above: one token for the service account (and one after each time Google revoked it), and the caller's gw key never reached Google", () => {
    expect(tokenRequestsOf(account.email).map((call) => call.status)).toEqual([200, 200, 200])
    for (const key of [org.apiKey, badOrg.apiKey])
      for (const call of google.calls) expect(JSON.stringify(call.headers)).not.toContain(key)
  })
})
