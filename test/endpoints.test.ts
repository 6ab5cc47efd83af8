import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI, { type ClientOptions, toFile, toStreamingFile } from 'openai'
import { pointResultsAtGw } from '../src/gateway/steps/results-url'
import {
  ANTHROPIC_TEXT,
  FAKE_IMAGE_URL,
  FAKE_SPEECH,
  FAKE_TRANSCRIPT,
  FAKE_TRANSLATION,
  type FakeProvider,
  providersAt,
  type RecordedCall,
  startFakeProvider,
} from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

/**
 * The provider endpoints beyond chat, through the real SDKs over HTTP: the OpenAI model endpoints
 * (images, moderations, speech, transcriptions, translations), dispatched by their model like chat;
 * and the provider APIs without a model (OpenAI's files and batches, Anthropic's message batches),
 * passed through on the organisation's own provider key only. Every call carries the Gw-* headers and
 * is recorded under the caller's organisation.
 */

const CLAUDE = 'claude-haiku-4-5'
/** The organisation's own provider keys (BYOK); the operator's key is `sk-operator`. */
const ORG_OPENAI_KEY = 'sk-org-own-openai-0123456789abcdef'
const ORG_ANTHROPIC_KEY = 'sk-ant-org-own-0123456789abcdef'

const encode = (text: string) => new TextEncoder().encode(text)
/**
 * An upload no text decoding survives: every byte value, CR LF, a NUL, and lines that look like a
 * multipart boundary.
 */
const AUDIO = new Uint8Array([
  ...encode('ID3\r\n--not-a-boundary\r\n\0'),
  ...Array.from({ length: 4096 }, (_, i) => (i * 131 + 7) % 256),
  ...encode('\r\n--\r\n'),
])
const FILE_BYTES = new Uint8Array([
  ...encode('\r\n------WebKitFormBoundary\r\n'),
  ...Array.from({ length: 2048 }, (_, i) => (255 - i) % 256),
])
const BATCH_INPUT = `${[1, 2, 3]
  .map((i) =>
    JSON.stringify({
      custom_id: `request-${i}`,
      method: 'POST',
      url: '/v1/chat/completions',
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: `hi ${i}` }] },
    }),
  )
  .join('\n')}\n`

let fake: FakeProvider
let h: Harness
let server: { url: string; stop(): Promise<void> }
/** With credits and no provider key of its own: model calls run on the operator's key (PTB). */
let ptbOrg: Org
/** With its own OpenAI and Anthropic keys (BYOK): files and batches run on them. */
let byokOrg: Org
let openai: OpenAI
let ownOpenai: OpenAI
let ownAnthropic: Anthropic
let ptbAnthropic: Anthropic

const openaiFor = (apiKey: string, options: Partial<ClientOptions> = {}) =>
  new OpenAI({ apiKey, baseURL: `${server.url}/v1`, maxRetries: 0, ...options })
const anthropicFor = (apiKey: string) => new Anthropic({ authToken: apiKey, apiKey: null, baseURL: server.url, maxRetries: 0 })

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake) })
  ptbOrg = await h.org('growth')
  byokOrg = await h.org('growth')
  for (const org of [ptbOrg, byokOrg]) await h.services.organizations.addCredits(org.orgId, 100)
  for (const [provider, secret] of [
    ['openai', ORG_OPENAI_KEY],
    ['anthropic', ORG_ANTHROPIC_KEY],
  ] as const) {
    const created = await h.request('POST', '/v1/api-keys/provider-key', {
      token: byokOrg.ownerSession,
      body: { provider, name: `own ${provider}`, secret },
    })
    if (created.status !== 201) throw new Error(`the ${provider} key was refused: ${await created.text()}`)
  }
  server = serveHarness(h)
  openai = openaiFor(ptbOrg.apiKey)
  ownOpenai = openaiFor(byokOrg.apiKey)
  ownAnthropic = anthropicFor(byokOrg.apiKey)
  ptbAnthropic = anthropicFor(ptbOrg.apiKey)
})
afterAll(async () => {
  await server.stop()
  await h.close()
  await fake.close()
})

const gwHeaders = (response: Response) => ({
  id: response.headers.get('gw-id'),
  provider: response.headers.get('gw-provider'),
  model: response.headers.get('gw-model'),
  status: response.headers.get('gw-status'),
  mode: response.headers.get('gw-gateway-mode'),
})

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/

/** The request record of a call under an organisation, once the log has written it. */
async function recordOf(org: Org, response: Response) {
  const id = response.headers.get('gw-id')
  if (!id) throw new Error(`the answer (${response.status}) has no Gw-Id`)
  for (let i = 0; i < 50; i++) {
    await h.requestLog.flush()
    const record = await h.store.requests.get(org.orgId, id)
    if (record) return record
    await Bun.sleep(10)
  }
  throw new Error(`no record for ${id}`)
}

/** What a promise rejects with; fails when it resolves. */
async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error('the call succeeded')
}

const lastCall = (): RecordedCall => fake.calls.at(-1) as RecordedCall
const audioFile = () => toFile(AUDIO, 'speech.mp3', { type: 'audio/mpeg' })

describe('images', () => {
  for (const model of ['dall-e-3', 'gpt-image-1']) {
    test(`images.generate with ${model}: the provider's images, the Gw-* headers, a record under the caller's organisation`, async () => {
      const { data, response } = await openai.images.generate({ model, prompt: 'a lighthouse at dusk' }).withResponse()
      expect(data.data?.[0]?.url).toBe(FAKE_IMAGE_URL)
      expect(gwHeaders(response)).toMatchObject({ provider: 'openai', model, status: 'success', mode: 'passthrough' })
      expect(response.headers.get('gw-id')).toMatch(UUID)
      expect(lastCall()).toMatchObject({ path: '/v1/images/generations', body: { model, prompt: 'a lighthouse at dusk' } })
      expect(lastCall().headers.authorization).toBe('Bearer sk-operator')
      expect(await recordOf(ptbOrg, response)).toMatchObject({
        path: '/v1/images/generations',
        orgId: ptbOrg.orgId,
        provider: 'openai',
        model,
        status: 'success',
        httpStatus: 200,
      })
    })
  }

  test("an organisation with its own OpenAI key generates on that key, not the operator's", async () => {
    await ownOpenai.images.generate({ model: 'gpt-image-1', prompt: 'x' })
    expect(lastCall().headers.authorization).toBe(`Bearer ${ORG_OPENAI_KEY}`)
  })
})

describe('moderations', () => {
  test('moderations.create without a model: omni-moderation-latest serves, named in Gw-Model and the record', async () => {
    const { data, response } = await openai.moderations.create({ input: 'I like turtles' }).withResponse()
    expect(data.results[0]?.flagged).toBe(false)
    expect(data.results[0]?.categories.violence).toBe(false)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', model: 'omni-moderation-latest', status: 'success' })
    expect(lastCall().path).toBe('/v1/moderations')
    expect(await recordOf(ptbOrg, response)).toMatchObject({
      path: '/v1/moderations',
      orgId: ptbOrg.orgId,
      provider: 'openai',
      model: 'omni-moderation-latest',
      status: 'success',
    })
  })

  test('moderations.create with a model: that model, passed through as sent', async () => {
    const { data, response } = await openai.moderations
      .create({ model: 'omni-moderation-latest', input: ['one', 'two'] })
      .withResponse()
    expect(data.model).toBe('omni-moderation-latest')
    expect(gwHeaders(response)).toMatchObject({ model: 'omni-moderation-latest', mode: 'passthrough', status: 'success' })
    expect(lastCall().body).toEqual({ model: 'omni-moderation-latest', input: ['one', 'two'] })
  })
})

describe('speech', () => {
  test("audio.speech.create: the provider's audio bytes exactly, with its content type and the Gw-* headers", async () => {
    const { data, response } = await openai.audio.speech
      .create({ model: 'tts-1', input: 'Hello there', voice: 'alloy' })
      .withResponse()
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(FAKE_SPEECH)
    expect(data.headers.get('content-type')).toBe('audio/mpeg')
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', model: 'tts-1', status: 'success', mode: 'passthrough' })
    expect(lastCall()).toMatchObject({ path: '/v1/audio/speech', body: { model: 'tts-1', input: 'Hello there', voice: 'alloy' } })
    expect(await recordOf(ptbOrg, response)).toMatchObject({
      path: '/v1/audio/speech',
      orgId: ptbOrg.orgId,
      provider: 'openai',
      model: 'tts-1',
      status: 'success',
      httpStatus: 200,
    })
  })

  test("another response_format: the provider's content type for it passes", async () => {
    const audio = await openai.audio.speech.create({ model: 'tts-1', input: 'hi', voice: 'alloy', response_format: 'wav' })
    expect(audio.headers.get('content-type')).toBe('audio/wav')
    expect(new Uint8Array(await audio.arrayBuffer())).toEqual(FAKE_SPEECH)
  })
})

/** A client that records each multipart body it sends, as the bytes and content type that went on the wire. */
function recordingClient(apiKey: string, sent: Array<{ contentType: string | null; bytes: Uint8Array }>): OpenAI {
  const recording: NonNullable<ClientOptions['fetch']> = async (input, init) => {
    if (!(init?.body instanceof FormData)) return fetch(input, init)
    const encoded = new Response(init.body)
    // Bun's Response forgets a FormData body's content type once the body is read: take it first.
    const contentType = encoded.headers.get('content-type')
    const bytes = new Uint8Array(await encoded.arrayBuffer())
    const headers = new Headers(init.headers)
    if (contentType) headers.set('content-type', contentType)
    sent.push({ contentType, bytes })
    return fetch(input, { ...init, headers, body: bytes })
  }
  return openaiFor(apiKey, { fetch: recording })
}

describe('transcriptions and translations', () => {
  test('audio.transcriptions.create (whisper-1): the text, the Gw-* headers, a record', async () => {
    const { data, response } = await openai.audio.transcriptions
      .create({ file: await audioFile(), model: 'whisper-1' })
      .withResponse()
    expect(data.text).toBe(FAKE_TRANSCRIPT)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', model: 'whisper-1', status: 'success', mode: 'passthrough' })
    expect(lastCall()).toMatchObject({ path: '/v1/audio/transcriptions', body: { model: 'whisper-1' } })
    expect(await recordOf(ptbOrg, response)).toMatchObject({
      path: '/v1/audio/transcriptions',
      orgId: ptbOrg.orgId,
      provider: 'openai',
      model: 'whisper-1',
      status: 'success',
      httpStatus: 200,
    })
  })

  test('the provider receives the multipart body byte for byte: the same content type (boundary) and bytes, the file whole', async () => {
    const sent: Array<{ contentType: string | null; bytes: Uint8Array }> = []
    const client = recordingClient(ptbOrg.apiKey, sent)
    const answer = await client.audio.transcriptions.create({
      file: await audioFile(),
      model: 'gpt-4o-transcribe',
      language: 'en',
      prompt: 'a quiet room',
    })
    expect(answer.text).toBe(FAKE_TRANSCRIPT)
    const [request] = sent
    const received = lastCall()
    expect(received.path).toBe('/v1/audio/transcriptions')
    expect(request?.contentType).toStartWith('multipart/form-data; boundary=')
    expect(received.headers['content-type']).toBe(request?.contentType as string)
    expect(received.rawBody).toEqual(request?.bytes as Uint8Array)
    expect(received.file).toMatchObject({ field: 'file', name: 'speech.mp3', type: 'audio/mpeg' })
    expect(received.file?.bytes).toEqual(AUDIO)
    expect(received.body).toEqual({ model: 'gpt-4o-transcribe', language: 'en', prompt: 'a quiet room' })
  })

  test('a streamed upload (toStreamingFile: chunked, no content-length) arrives whole', async () => {
    const data = await openai.audio.transcriptions.create({
      file: toStreamingFile(new Blob([AUDIO]).stream(), 'speech.mp3', { type: 'audio/mpeg' }),
      model: 'gpt-4o-transcribe',
    })
    expect(data.text).toBe(FAKE_TRANSCRIPT)
    expect(lastCall().headers['content-type']).toStartWith('multipart/form-data; boundary=openai-')
    expect(lastCall().file?.bytes).toEqual(AUDIO)
  })

  test('a model forced to its provider (openai/...): the form is written again with the bare model, and still arrives whole', async () => {
    const { data, response } = await openai.audio.transcriptions
      .create({ file: await audioFile(), model: 'openai/gpt-4o-transcribe', language: 'en' })
      .withResponse()
    expect(data.text).toBe(FAKE_TRANSCRIPT)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', status: 'success' })
    const received = lastCall()
    expect(received.body).toEqual({ model: 'gpt-4o-transcribe', language: 'en' })
    expect(received.file).toMatchObject({ field: 'file', name: 'speech.mp3', type: 'audio/mpeg' })
    expect(received.file?.bytes).toEqual(AUDIO)
  })

  test("response_format 'text': the SDK gets the plain text, the provider's text/plain passed on", async () => {
    const { data, response } = await openai.audio.transcriptions
      .create({ file: await audioFile(), model: 'gpt-4o-transcribe', response_format: 'text' })
      .withResponse()
    expect(data).toBe(FAKE_TRANSCRIPT)
    expect(response.headers.get('content-type')).toStartWith('text/plain')
    expect(gwHeaders(response)).toMatchObject({ model: 'gpt-4o-transcribe', status: 'success' })
  })

  test('audio.translations.create: the text, the Gw-* headers, a record', async () => {
    const { data, response } = await openai.audio.translations
      .create({ file: await audioFile(), model: 'whisper-1' })
      .withResponse()
    expect(data.text).toBe(FAKE_TRANSLATION)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', model: 'whisper-1', status: 'success' })
    expect(lastCall().path).toBe('/v1/audio/translations')
    expect(lastCall().file?.bytes).toEqual(AUDIO)
    expect(await recordOf(ptbOrg, response)).toMatchObject({
      path: '/v1/audio/translations',
      orgId: ptbOrg.orgId,
      provider: 'openai',
      model: 'whisper-1',
      status: 'success',
    })
  })

  test("a provider error on a multipart call reaches the SDK as its error class, with the provider's status", async () => {
    const failure = await failureOf(async () =>
      openai.audio.transcriptions.create({ file: await audioFile(), model: 'gpt-4o-transcribe', prompt: 'fake:error:429' }),
    )
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError)
    expect(lastCall().path).toBe('/v1/audio/transcriptions')
  })
})

describe('a model the path cannot serve', () => {
  const calls: Array<[string, () => Promise<unknown>]> = [
    ['images.generate', () => openai.images.generate({ model: CLAUDE, prompt: 'x' })],
    ['moderations.create', () => openai.moderations.create({ model: CLAUDE, input: 'x' })],
    ['audio.speech.create', () => openai.audio.speech.create({ model: CLAUDE, input: 'x', voice: 'alloy' })],
    ['audio.transcriptions.create', async () => openai.audio.transcriptions.create({ file: await audioFile(), model: CLAUDE })],
    ['audio.translations.create', async () => openai.audio.translations.create({ file: await audioFile(), model: CLAUDE })],
  ]
  for (const [name, call] of calls) {
    test(`${name} with a Claude model: 400 in OpenAI's error shape, nothing sent`, async () => {
      const before = fake.calls.length
      const failure = await failureOf(call)
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError)
      expect((failure as InstanceType<typeof OpenAI.BadRequestError>).error).toMatchObject({
        message: expect.any(String),
        type: expect.any(String),
      })
      expect(fake.calls.length).toBe(before)
    })
  }
})

describe('OpenAI files', () => {
  const upload = (client = ownOpenai, purpose: 'user_data' | 'batch' = 'user_data', bytes = FILE_BYTES) =>
    client.files.create({ file: new File([bytes], 'data.bin', { type: 'application/octet-stream' }), purpose }).withResponse()

  test("files.create: passed through on the organisation's own key, the file whole, the Gw-* headers, recorded", async () => {
    const { data, response } = await upload()
    expect(data).toMatchObject({ object: 'file', bytes: FILE_BYTES.byteLength, filename: 'data.bin', purpose: 'user_data' })
    expect(data.id).toStartWith('file-')
    const received = lastCall()
    expect(received).toMatchObject({ method: 'POST', path: '/v1/files', body: { purpose: 'user_data' } })
    expect(received.headers.authorization).toBe(`Bearer ${ORG_OPENAI_KEY}`)
    expect(received.file?.bytes).toEqual(FILE_BYTES)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', status: 'success' })
    expect(response.headers.get('gw-id')).toMatch(UUID)
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: '/v1/files',
      orgId: byokOrg.orgId,
      provider: 'openai',
      status: 'success',
      httpStatus: 200,
    })
  })

  test('files.list, files.retrieve: the provider answers, each recorded under the path as called', async () => {
    const { data: file } = await upload()
    const listed = await ownOpenai.files.list()
    expect(listed.data.map((f) => f.id)).toContain(file.id)
    expect(lastCall()).toMatchObject({ method: 'GET', path: '/v1/files' })

    const { data, response } = await ownOpenai.files.retrieve(file.id).withResponse()
    expect(data).toMatchObject({ id: file.id, filename: 'data.bin' })
    expect(lastCall()).toMatchObject({ method: 'GET', path: `/v1/files/${file.id}` })
    expect(lastCall().headers.authorization).toBe(`Bearer ${ORG_OPENAI_KEY}`)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', status: 'success' })
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: `/v1/files/${file.id}`,
      orgId: byokOrg.orgId,
      provider: 'openai',
      status: 'success',
    })
  })

  test("a list's query reaches the provider", async () => {
    await ownOpenai.files.list({ purpose: 'batch', limit: 5 })
    expect(lastCall().path).toBe('/v1/files')
    expect(new URLSearchParams(lastCall().query).get('purpose')).toBe('batch')
    expect(new URLSearchParams(lastCall().query).get('limit')).toBe('5')
  })

  test('files.content: the bytes exactly as uploaded, recorded', async () => {
    const { data: file } = await upload()
    const { data, response } = await ownOpenai.files.content(file.id).withResponse()
    expect(new Uint8Array(await data.arrayBuffer())).toEqual(FILE_BYTES)
    expect(lastCall()).toMatchObject({ method: 'GET', path: `/v1/files/${file.id}/content` })
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', status: 'success' })
    expect(await recordOf(byokOrg, response)).toMatchObject({ path: `/v1/files/${file.id}/content`, orgId: byokOrg.orgId })
  })

  test("files.delete: deleted at the provider; a later retrieve is the provider's 404, as the SDK's NotFoundError", async () => {
    const { data: file } = await upload()
    const { data, response } = await ownOpenai.files.delete(file.id).withResponse()
    expect(data).toMatchObject({ id: file.id, object: 'file', deleted: true })
    expect(lastCall()).toMatchObject({ method: 'DELETE', path: `/v1/files/${file.id}` })
    expect(await recordOf(byokOrg, response)).toMatchObject({ path: `/v1/files/${file.id}`, provider: 'openai' })
    const missing = await failureOf(() => ownOpenai.files.retrieve(file.id))
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
  })
})

describe('OpenAI batches', () => {
  const createBatch = async () => {
    const input = await ownOpenai.files.create({ file: new File([BATCH_INPUT], 'batch.jsonl'), purpose: 'batch' })
    return ownOpenai.batches
      .create({ input_file_id: input.id, endpoint: '/v1/chat/completions', completion_window: '24h' })
      .withResponse()
  }

  test("batches.create: passed through on the organisation's own key, the Gw-* headers, recorded", async () => {
    const { data, response } = await createBatch()
    expect(data).toMatchObject({ object: 'batch', status: 'validating', endpoint: '/v1/chat/completions' })
    expect(data.id).toStartWith('batch_')
    expect(data.request_counts?.total).toBe(3)
    expect(lastCall()).toMatchObject({ method: 'POST', path: '/v1/batches' })
    expect(lastCall().headers.authorization).toBe(`Bearer ${ORG_OPENAI_KEY}`)
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', status: 'success' })
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: '/v1/batches',
      orgId: byokOrg.orgId,
      provider: 'openai',
      status: 'success',
      httpStatus: 200,
    })
  })

  test('batches.retrieve and batches.list: the provider answers', async () => {
    const { data: batch } = await createBatch()
    const { data, response } = await ownOpenai.batches.retrieve(batch.id).withResponse()
    expect(data).toMatchObject({ id: batch.id, status: 'validating' })
    expect(lastCall()).toMatchObject({ method: 'GET', path: `/v1/batches/${batch.id}` })
    expect(await recordOf(byokOrg, response)).toMatchObject({ path: `/v1/batches/${batch.id}`, orgId: byokOrg.orgId })
    const listed = await ownOpenai.batches.list()
    expect(listed.data.map((b) => b.id)).toContain(batch.id)
    expect(lastCall()).toMatchObject({ method: 'GET', path: '/v1/batches' })
  })

  test('batches.cancel: cancelling at the provider, recorded under the cancel path', async () => {
    const { data: batch } = await createBatch()
    const { data, response } = await ownOpenai.batches.cancel(batch.id).withResponse()
    expect(data).toMatchObject({ id: batch.id, status: 'cancelling' })
    expect(lastCall()).toMatchObject({ method: 'POST', path: `/v1/batches/${batch.id}/cancel` })
    expect(gwHeaders(response)).toMatchObject({ provider: 'openai', status: 'success' })
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: `/v1/batches/${batch.id}/cancel`,
      orgId: byokOrg.orgId,
      provider: 'openai',
      status: 'success',
    })
  })
})

describe('Anthropic message batches', () => {
  const requests = [
    { custom_id: 'first', params: { model: CLAUDE, max_tokens: 50, messages: [{ role: 'user' as const, content: 'hi' }] } },
    { custom_id: 'second', params: { model: CLAUDE, max_tokens: 50, messages: [{ role: 'user' as const, content: 'ho' }] } },
  ]
  const createBatch = () => ownAnthropic.messages.batches.create({ requests }).withResponse()

  test("messages.batches.create: passed through on the organisation's own key, the Gw-* headers, recorded", async () => {
    const { data, response } = await createBatch()
    expect(data).toMatchObject({ type: 'message_batch', processing_status: 'in_progress', request_counts: { processing: 2 } })
    expect(data.id).toStartWith('msgbatch_')
    expect(lastCall()).toMatchObject({ method: 'POST', path: '/v1/messages/batches', body: { requests } })
    expect(lastCall().headers['x-api-key']).toBe(ORG_ANTHROPIC_KEY)
    expect(gwHeaders(response)).toMatchObject({ provider: 'anthropic', status: 'success' })
    expect(response.headers.get('gw-id')).toMatch(UUID)
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: '/v1/messages/batches',
      orgId: byokOrg.orgId,
      provider: 'anthropic',
      status: 'success',
      httpStatus: 200,
    })
  })

  test('messages.batches.retrieve and list: the provider answers, on the own key', async () => {
    const { data: batch } = await createBatch()
    const { data, response } = await ownAnthropic.messages.batches.retrieve(batch.id).withResponse()
    expect(data).toMatchObject({ id: batch.id, processing_status: 'ended' })
    expect(lastCall()).toMatchObject({ method: 'GET', path: `/v1/messages/batches/${batch.id}` })
    expect(lastCall().headers['x-api-key']).toBe(ORG_ANTHROPIC_KEY)
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: `/v1/messages/batches/${batch.id}`,
      orgId: byokOrg.orgId,
      provider: 'anthropic',
    })
    const page = await ownAnthropic.messages.batches.list({ limit: 20 })
    expect(page.data.map((b) => b.id)).toContain(batch.id)
    expect(lastCall()).toMatchObject({ method: 'GET', path: '/v1/messages/batches' })
    expect(new URLSearchParams(lastCall().query).get('limit')).toBe('20')
  })

  test('GET .../results: the JSONL as the provider sent it, one line a request, recorded', async () => {
    const { data: batch } = await createBatch()
    const response = await fetch(`${server.url}/v1/messages/batches/${batch.id}/results`, {
      headers: { authorization: `Bearer ${byokOrg.apiKey}`, accept: 'application/binary' },
    })
    expect(response.status).toBe(200)
    const lines = (await response.text()).split('\n').filter((line) => line !== '')
    expect(lines.map((line) => (JSON.parse(line) as { custom_id: string }).custom_id)).toEqual(['first', 'second'])
    expect(lastCall()).toMatchObject({ method: 'GET', path: `/v1/messages/batches/${batch.id}/results` })
    expect(lastCall().headers['x-api-key']).toBe(ORG_ANTHROPIC_KEY)
    expect(gwHeaders(response)).toMatchObject({ provider: 'anthropic', status: 'success' })
    expect(await recordOf(byokOrg, response)).toMatchObject({
      path: `/v1/messages/batches/${batch.id}/results`,
      orgId: byokOrg.orgId,
      provider: 'anthropic',
      status: 'success',
    })
  })

  test("messages.batches.results(): results_url points at gw, so the SDK reads the results through gw on the organisation's key", async () => {
    const { data: batch } = await createBatch()
    // The SDK reads the batch, then GETs its results_url as it is: the provider's own address would take
    // the caller (and its gw key) past gw, straight to the provider.
    const read = await ownAnthropic.messages.batches.retrieve(batch.id)
    expect(read.results_url).toBe(`${server.url}/v1/messages/batches/${batch.id}/results`)
    const results = []
    for await (const line of await ownAnthropic.messages.batches.results(batch.id)) results.push(line)
    expect(results.map((r) => r.custom_id)).toEqual(['first', 'second'])
    expect(results[0]?.result).toMatchObject({
      type: 'succeeded',
      message: { role: 'assistant', content: [{ type: 'text', text: ANTHROPIC_TEXT.join('') }] },
    })
    const fetched = fake.calls.filter((c) => c.path === `/v1/messages/batches/${batch.id}/results`).at(-1)
    expect(fetched?.headers['x-api-key']).toBe(ORG_ANTHROPIC_KEY)
  })

  test('messages.batches.cancel and delete: passed through, each recorded under its path', async () => {
    const { data: batch } = await createBatch()
    const cancelled = await ownAnthropic.messages.batches.cancel(batch.id).withResponse()
    expect(cancelled.data).toMatchObject({ id: batch.id, processing_status: 'canceling' })
    expect(lastCall()).toMatchObject({ method: 'POST', path: `/v1/messages/batches/${batch.id}/cancel` })
    expect(await recordOf(byokOrg, cancelled.response)).toMatchObject({
      path: `/v1/messages/batches/${batch.id}/cancel`,
      provider: 'anthropic',
    })
    const deleted = await ownAnthropic.messages.batches.delete(batch.id).withResponse()
    expect(deleted.data).toEqual({ id: batch.id, type: 'message_batch_deleted' })
    expect(lastCall()).toMatchObject({ method: 'DELETE', path: `/v1/messages/batches/${batch.id}` })
    expect(gwHeaders(deleted.response)).toMatchObject({ provider: 'anthropic', status: 'success' })
    expect(await recordOf(byokOrg, deleted.response)).toMatchObject({
      path: `/v1/messages/batches/${batch.id}`,
      orgId: byokOrg.orgId,
      provider: 'anthropic',
      status: 'success',
    })
  })
})

describe("files and batches without the organisation's own provider key", () => {
  const file = () => new File([FILE_BYTES], 'data.bin')
  const openaiCalls: Array<[string, () => Promise<unknown>]> = [
    ['files.create', () => openai.files.create({ file: file(), purpose: 'batch' })],
    ['files.list', () => openai.files.list()],
    ['files.retrieve', () => openai.files.retrieve('file-1')],
    ['files.content', () => openai.files.content('file-1')],
    ['files.delete', () => openai.files.delete('file-1')],
    [
      'batches.create',
      () => openai.batches.create({ input_file_id: 'file-1', endpoint: '/v1/chat/completions', completion_window: '24h' }),
    ],
    ['batches.list', () => openai.batches.list()],
    ['batches.retrieve', () => openai.batches.retrieve('batch_1')],
    ['batches.cancel', () => openai.batches.cancel('batch_1')],
  ]
  for (const [name, call] of openaiCalls) {
    test(`${name}: 400 in OpenAI's error shape naming the missing key, nothing sent (not on the operator's key)`, async () => {
      const before = fake.calls.length
      const failure = await failureOf(call)
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError)
      const error = (failure as InstanceType<typeof OpenAI.BadRequestError>).error as { message?: string; type?: string }
      expect(error.type).toEqual(expect.any(String))
      expect(error.message).toMatch(/key/i)
      expect(fake.calls.length).toBe(before)
    })
  }

  const anthropicCalls: Array<[string, () => Promise<unknown>]> = [
    [
      'messages.batches.create',
      () =>
        ptbAnthropic.messages.batches.create({
          requests: [{ custom_id: 'a', params: { model: CLAUDE, max_tokens: 5, messages: [{ role: 'user', content: 'hi' }] } }],
        }),
    ],
    ['messages.batches.list', () => ptbAnthropic.messages.batches.list()],
    ['messages.batches.retrieve', () => ptbAnthropic.messages.batches.retrieve('msgbatch_1')],
    ['messages.batches.cancel', () => ptbAnthropic.messages.batches.cancel('msgbatch_1')],
    ['messages.batches.delete', () => ptbAnthropic.messages.batches.delete('msgbatch_1')],
  ]
  for (const [name, call] of anthropicCalls) {
    test(`${name}: 400 in Anthropic's error shape naming the missing key, nothing sent`, async () => {
      const before = fake.calls.length
      const failure = await failureOf(call)
      expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
      const body = (failure as InstanceType<typeof Anthropic.BadRequestError>).error
      expect(body).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: expect.stringMatching(/key/i) },
      })
      expect(fake.calls.length).toBe(before)
    })
  }

  test("GET /v1/messages/batches/{id}/results: 400 in Anthropic's error shape, nothing sent", async () => {
    const before = fake.calls.length
    const response = await fetch(`${server.url}/v1/messages/batches/msgbatch_1/results`, {
      headers: { authorization: `Bearer ${ptbOrg.apiKey}` },
    })
    expect(response.status).toBe(400)
    expect(await response.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
    expect(fake.calls.length).toBe(before)
  })
})

describe('security', () => {
  const unauthenticated: Array<{ method: string; path: string; body?: string; family: 'openai' | 'anthropic' }> = [
    {
      method: 'POST',
      path: '/v1/images/generations',
      body: JSON.stringify({ model: 'dall-e-3', prompt: 'x' }),
      family: 'openai',
    },
    { method: 'POST', path: '/v1/moderations', body: JSON.stringify({ input: 'x' }), family: 'openai' },
    {
      method: 'POST',
      path: '/v1/audio/speech',
      body: JSON.stringify({ model: 'tts-1', input: 'x', voice: 'alloy' }),
      family: 'openai',
    },
    { method: 'GET', path: '/v1/files', family: 'openai' },
    { method: 'GET', path: '/v1/files/file-1/content', family: 'openai' },
    { method: 'POST', path: '/v1/batches/batch_1/cancel', family: 'openai' },
    { method: 'GET', path: '/v1/messages/batches', family: 'anthropic' },
    { method: 'DELETE', path: '/v1/messages/batches/msgbatch_1', family: 'anthropic' },
  ]
  for (const call of unauthenticated) {
    test(`${call.method} ${call.path} without a key: 401 in the ${call.family} error shape, nothing sent`, async () => {
      const before = fake.calls.length
      const response = await fetch(`${server.url}${call.path}`, {
        method: call.method,
        headers: call.body ? { 'content-type': 'application/json' } : {},
        body: call.body,
      })
      expect(response.status).toBe(401)
      const body = (await response.json()) as Record<string, unknown>
      if (call.family === 'openai') expect(body).toMatchObject({ error: { message: expect.any(String) } })
      else expect(body).toMatchObject({ type: 'error', error: { type: 'authentication_error' } })
      expect(fake.calls.length).toBe(before)
    })
  }

  test('a multipart transcription without a key: 401, nothing sent', async () => {
    const before = fake.calls.length
    const form = new FormData()
    form.set('file', new File([AUDIO], 'speech.mp3', { type: 'audio/mpeg' }))
    form.set('model', 'whisper-1')
    const response = await fetch(`${server.url}/v1/audio/transcriptions`, { method: 'POST', body: form })
    expect(response.status).toBe(401)
    expect(fake.calls.length).toBe(before)
  })

  test("another organisation's key finds none of this organisation's records (store and lookup), model endpoints and files alike", async () => {
    const other = await h.org('growth')
    const { response: image } = await openai.images.generate({ model: 'gpt-image-1', prompt: 'x' }).withResponse()
    const { response: listed } = await ownOpenai.files.list().withResponse()
    for (const [owner, response] of [
      [ptbOrg, image],
      [byokOrg, listed],
    ] as const) {
      const record = await recordOf(owner, response)
      expect(record.orgId).toBe(owner.orgId)
      expect(await h.store.requests.get(other.orgId, record.id)).toBeUndefined()
      const lookup = (key: string) =>
        fetch(`${server.url}/gateway/v1/meta/${record.id}`, { headers: { authorization: `Bearer ${key}` } })
      expect((await lookup(owner.apiKey)).status).toBe(200)
      expect((await lookup(other.apiKey)).status).toBe(404)
    }
  })
})

describe("a message batch's results_url", () => {
  test('is rewritten to the given origin (GW_PUBLIC_URL, or the address the call came to), one batch or a page', () => {
    const one = JSON.parse(
      pointResultsAtGw(
        JSON.stringify({ id: 'msgbatch_1', results_url: 'https://api.anthropic.com/x' }),
        'https://gw.example.com',
      ),
    )
    expect(one.results_url).toBe('https://gw.example.com/v1/messages/batches/msgbatch_1/results')
    const page = JSON.parse(
      pointResultsAtGw(
        JSON.stringify({
          data: [
            { id: 'a b', results_url: 'https://p/x' },
            { id: 'c', results_url: null },
          ],
        }),
        'http://gw',
      ),
    )
    expect(page.data.map((b: { results_url: string | null }) => b.results_url)).toEqual([
      'http://gw/v1/messages/batches/a%20b/results',
      null,
    ])
    expect(pointResultsAtGw('not json', 'http://gw')).toBe('not json')
  })
})

describe('audio is priced by what it is billed by', () => {
  test('speech: tts-1 at $15 and tts-1-hd at $30 per million characters, estimated and costed alike', async () => {
    const input = 'héllo wörld 🚀' // 13 characters: an emoji is one
    for (const [model, nano] of [
      ['tts-1', 15_000],
      ['tts-1-hd', 30_000],
    ] as const) {
      const response = await openai.audio.speech.create({ model, voice: 'alloy', input })
      await response.arrayBuffer()
      expect(await recordOf(ptbOrg, response)).toMatchObject({
        costNano: 13 * nano,
        estimatedCostNano: 13 * nano,
        costNote: null,
      })
    }
  })

  test('transcription: whisper-1 by the second of audio its verbose_json reports; without a duration, no cost and why', async () => {
    const { response: verbose } = await openai.audio.transcriptions
      .create({ file: await audioFile(), model: 'whisper-1', response_format: 'verbose_json' })
      .withResponse()
    // The fake reports 1 second: $0.006 a minute is 100,000 nano-USD a second.
    expect(await recordOf(ptbOrg, verbose)).toMatchObject({ costNano: 100_000, costNote: null })
    const { response: plain } = await openai.audio.transcriptions
      .create({ file: await audioFile(), model: 'whisper-1' })
      .withResponse()
    const record = await recordOf(ptbOrg, plain)
    expect(record.costNano).toBeNull()
    expect(record.costNote).toContain('verbose_json')
  })
})
