import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { ANTHROPIC_TEXT, type FakeProvider, OPENAI_TEXT, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

/**
 * The official SDKs, pointed at gw and otherwise unchanged, in both modes and both directions. The
 * Anthropic SDK sends `Authorization: Bearer` through its standard `authToken` setting (spec 5.1 rule 6).
 */
let fake: FakeProvider
let h: Harness
let org: Org
let server: { url: string; stop(): Promise<void> }
let openai: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({
    providers: providersAt(fake),
  })
  org = await h.org()
  await h.services.organizations.addCredits(org.orgId, 100)
  server = serveHarness(h)
  openai = new OpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1`, maxRetries: 0 })
  anthropic = new Anthropic({ authToken: org.apiKey, apiKey: null, baseURL: server.url, maxRetries: 0 })
})
afterAll(async () => {
  await server.stop()
  await h.close()
  await fake.close()
})

describe('the openai SDK', () => {
  test('chat with an OpenAI model (passthrough)', async () => {
    const { data, response } = await openai.chat.completions
      .create({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse()
    expect(data.choices[0]?.message.content).toBe(OPENAI_TEXT.join(''))
    expect(response.headers.get('gw-gateway-mode')).toBe('passthrough')
  })

  test('chat with a Claude model (translated), text', async () => {
    const { data, response } = await openai.chat.completions
      .create({
        model: 'claude-sonnet-4-5',
        messages: [
          { role: 'system', content: 'be brief' },
          { role: 'user', content: 'hi' },
        ],
        max_tokens: 50,
      })
      .withResponse()
    expect(data.choices[0]?.message.content).toBe(ANTHROPIC_TEXT.join(''))
    expect(data.choices[0]?.finish_reason).toBe('stop')
    expect(data.usage?.completion_tokens).toBe(500)
    expect(response.headers.get('gw-gateway-mode')).toBe('translated')
    const sent = fake.calls.at(-1)
    expect(sent?.path).toBe('/v1/messages')
    expect(sent?.body.system).toBeDefined()
  })

  test('chat with a Claude model (translated), tool calls', async () => {
    const data = await openai.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'fake:tools' }],
      tools: [
        {
          type: 'function',
          function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } },
        },
      ],
    })
    expect(data.choices[0]?.finish_reason).toBe('tool_calls')
    expect(data.choices[0]?.message.tool_calls?.[0]).toMatchObject({
      type: 'function',
      function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
    })
  })

  test('streamed chat with a Claude model (translated): text arrives in order, then the stream ends', async () => {
    const stream = await openai.chat.completions.create({
      model: 'claude-sonnet-4-5',
      messages: [{ role: 'user', content: 'hi' }],
      stream: true,
    })
    let text = ''
    let finish: string | null | undefined
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? ''
      finish = chunk.choices[0]?.finish_reason ?? finish
    }
    expect(text).toBe(ANTHROPIC_TEXT.join(''))
    expect(finish).toBe('stop')
  })

  test('a translation that drops fields says so in Gw-Translation-Warning', async () => {
    const { response } = await openai.chat.completions
      .create({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'hi' }], seed: 7, logprobs: true })
      .withResponse()
    expect(response.headers.get('gw-translation-warning')).toContain('seed')
    expect(response.headers.get('gw-translation-warning')).toContain('logprobs')
  })

  test('models.retrieve: a listed model, a dated snapshot of one, and a 404 for an unknown id', async () => {
    expect(await openai.models.retrieve('gpt-4o')).toMatchObject({ id: 'gpt-4o', object: 'model', owned_by: 'openai' })
    expect(await openai.models.retrieve('claude-sonnet-4-5-20250929')).toMatchObject({
      id: 'claude-sonnet-4-5-20250929',
      owned_by: 'anthropic',
    })
    const missing = await openai.models.retrieve('no-such-model').catch((error: unknown) => error)
    expect(missing).toBeInstanceOf(OpenAI.NotFoundError)
    expect((missing as InstanceType<typeof OpenAI.NotFoundError>).error).toMatchObject({ type: 'not_found_error' })
  })

  test('models.list', async () => {
    const models = await openai.models.list()
    expect(models.data.map((m) => m.id)).toContain('gpt-4o')
  })
})

describe('the anthropic SDK', () => {
  test('messages with a Claude model (passthrough)', async () => {
    const message = await anthropic.messages.create({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hi' }],
    })
    expect(message.content[0]).toMatchObject({ type: 'text', text: ANTHROPIC_TEXT.join('') })
  })

  test('messages with an OpenAI model (translated)', async () => {
    const { data, response } = await anthropic.messages
      .create({ model: 'gpt-4o', max_tokens: 50, system: 'be brief', messages: [{ role: 'user', content: 'hi' }] })
      .withResponse()
    expect(data.content[0]).toMatchObject({ type: 'text', text: OPENAI_TEXT.join('') })
    expect(data.stop_reason).toBe('end_turn')
    expect(response.headers.get('gw-gateway-mode')).toBe('translated')
    expect(fake.calls.at(-1)?.path).toBe('/v1/chat/completions')
  })

  test('streamed messages with an OpenAI model (translated)', async () => {
    const stream = anthropic.messages.stream({ model: 'gpt-4o', max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] })
    const final = await stream.finalMessage()
    expect(final.content[0]).toMatchObject({ type: 'text', text: OPENAI_TEXT.join('') })
    expect(final.stop_reason).toBe('end_turn')
  })

  test('streamed messages with a Claude model (passthrough), tool use', async () => {
    const stream = anthropic.messages.stream({
      model: 'claude-sonnet-4-5',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'fake:tools' }],
      tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }],
    })
    const final = await stream.finalMessage()
    expect(final.content[0]).toMatchObject({ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } })
  })

  test("an error comes back as the SDK's error class with the status", async () => {
    const failure = await anthropic.messages
      .create({ model: 'mystery-model', max_tokens: 5, messages: [{ role: 'user', content: 'x' }] })
      .catch((e: unknown) => e)
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
  })
})

describe('routing through the SDKs', () => {
  test('a streamed OpenAI answer replayed from the cache reads as the same stream in the SDK', async () => {
    const options = { headers: { 'Gw-Cache-Enabled': 'true' } }
    const read = async () => {
      const { data: stream, response } = await openai.chat.completions
        .create({ model: 'gpt-4o', stream: true, messages: [{ role: 'user', content: 'cached through the SDK' }] }, options)
        .withResponse()
      let text = ''
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? ''
      return { text, cache: response.headers.get('gw-cache') }
    }
    expect(await read()).toEqual({ text: OPENAI_TEXT.join(''), cache: 'MISS' })
    expect(await read()).toEqual({ text: OPENAI_TEXT.join(''), cache: 'HIT' })
  })

  test("a chain's alias served by its second step, through the Anthropic SDK, streamed", async () => {
    const created = await h.request('POST', '/v1/gateway/fallback-chains', {
      token: org.ownerSession,
      body: { name: 'sdk', match: { model: 'sdk-alias' }, steps: [{ model: 'claude-opus-4-1' }, { model: 'claude-sonnet-4-5' }] },
    })
    expect(created.status).toBe(201)
    fake.steer({ model: 'claude-opus-4-1', directives: 'fake:error:529', times: 1 })
    const stream = anthropic.messages.stream({
      model: 'sdk-alias',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'hi' }],
    })
    const message = await stream.finalMessage()
    expect(message.content[0]?.type === 'text' ? message.content[0].text : '').toBe(ANTHROPIC_TEXT.join(''))
  })
})
