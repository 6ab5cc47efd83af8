import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import type { LanguageModel } from 'ai'
import OpenAI from 'openai'
import {
  ANTHROPIC_TEXT,
  type FakeProvider,
  fakeTokenCount,
  OPENAI_TEXT,
  providersAt,
  type RecordedCall,
  startFakeProvider,
  THINKING_SIGNATURE,
  THINKING_TEXT,
} from './support/fake-provider'
import { failureOf, gatewaySdks, rawStream as streamFromGateway, writtenRecord } from './support/gateway-calls'
import { createHarness, type Harness, type Org } from './support/harness'
import { streamTextThroughGw } from './support/sdk-runs'
import { serveHarness } from './support/serve'

/**
 * The client matrix: the official OpenAI and Anthropic SDKs and the Vercel AI SDK, pointed at gw over
 * HTTP and otherwise unchanged, in passthrough and translated mode. Each test is named for the
 * behaviour it pins: streams carry only their protocol's events (the `gw` frame only when asked), a
 * provider failure mid-stream is an in-band error every client raises on, provider headers (request
 * ids, rate limits, retry-after) reach the caller, and errors arrive as the caller's SDK types them.
 */

/** Claude models go to the Anthropic provider, gpt ones to the OpenAI one (docs/decisions.md, "Gateway"). */
const CLAUDE = 'claude-haiku-4-5'
const GPT = 'gpt-4o'

let fake: FakeProvider
let h: Harness
let org: Org
let server: { url: string; stop(): Promise<void> }
let openai: OpenAI
let anthropic: Anthropic

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake) })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 100)
  server = serveHarness(h)
  ;({ openai, anthropic } = gatewaySdks(server.url, org.apiKey))
})
afterAll(async () => {
  await server.stop()
  await h.close()
  await fake.close()
})

/** The calls the fake received since `before` (a length of `fake.calls`). */
const callsSince = (before: number): RecordedCall[] => fake.calls.slice(before)
const lastCall = (): RecordedCall => fake.calls.at(-1) as RecordedCall

/** A raw streamed call to gw, its SSE events parsed. */
const rawStream = (path: string, body: Record<string, unknown>, headers: Record<string, string> = {}, token = org.apiKey) =>
  streamFromGateway(server.url, token, path, body, headers)

const chatBody = (model: string, content: string) => ({ model, messages: [{ role: 'user' as const, content }] })
const messagesBody = (model: string, content: string) => ({
  model,
  max_tokens: 50,
  messages: [{ role: 'user' as const, content }],
})

const recordOf = (requestId: string) => writtenRecord(h, org.orgId, requestId)

/** Both modes of each SDK: the model its own provider serves, and the other provider's (translated). */
const OPENAI_CALLER_MODES = [
  { mode: 'passthrough', model: GPT, text: OPENAI_TEXT.join('') },
  { mode: 'translated', model: CLAUDE, text: ANTHROPIC_TEXT.join('') },
] as const
const ANTHROPIC_CALLER_MODES = [
  { mode: 'passthrough', model: CLAUDE, text: ANTHROPIC_TEXT.join('') },
  { mode: 'translated', model: GPT, text: OPENAI_TEXT.join('') },
] as const
const MIDSTREAM_FAILURES = ['fake:midstream-fail', 'fake:stream-error'] as const

/** Anthropic's documented stream event types (the SDK drops `ping` and raises on `error`). */
const ANTHROPIC_EVENT_TYPES = new Set([
  'message_start',
  'message_delta',
  'message_stop',
  'content_block_start',
  'content_block_delta',
  'content_block_stop',
])

describe('the openai SDK', () => {
  for (const { mode, model, text } of OPENAI_CALLER_MODES) {
    test(`a streamed chat iterated with for await (${mode}): the text in order, finish_reason stop`, async () => {
      const stream = await openai.chat.completions.create({ ...chatBody(model, 'hi'), stream: true })
      let got = ''
      let finish: string | null | undefined
      for await (const chunk of stream) {
        got += chunk.choices[0]?.delta.content ?? ''
        finish = chunk.choices[0]?.finish_reason ?? finish
      }
      expect(got).toBe(text)
      expect(finish).toBe('stop')
    })

    test(`chat.completions.stream() (${mode}): finalChatCompletion has the whole answer`, async () => {
      const stream = openai.chat.completions.stream({ model, messages: [{ role: 'user', content: 'hi' }] })
      const final = await stream.finalChatCompletion()
      expect(final.choices[0]?.message.content).toBe(text)
      expect(final.choices[0]?.finish_reason).toBe('stop')
    })

    for (const directive of MIDSTREAM_FAILURES) {
      test(`${directive} (${mode}): iterating the chat stream throws the in-band error`, async () => {
        const failure = await failureOf(async () => {
          const stream = await openai.chat.completions.create({ ...chatBody(model, directive), stream: true })
          for await (const _ of stream);
        })
        expect(failure).toBeInstanceOf(OpenAI.APIError)
      })
    }

    test(`a provider error (${mode}) carries the provider's request id and rate-limit headers`, async () => {
      const failure = (await failureOf(() => openai.chat.completions.create(chatBody(model, 'fake:error:400')))) as InstanceType<
        typeof OpenAI.APIError
      >
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError)
      const sent = lastCall().requestId
      if (mode === 'passthrough') {
        expect(failure.requestID).toBe(sent)
        expect(failure.headers?.get('x-ratelimit-limit-requests')).toBe('10000')
      } else {
        // Anthropic names its request id `request-id`: it reaches the caller under that name.
        expect(failure.headers?.get('request-id')).toBe(sent)
        expect(failure.headers?.get('anthropic-ratelimit-requests-limit')).toBe('4000')
      }
    })

    test(`a success (${mode}) carries the provider's request id and rate-limit headers, streamed or not`, async () => {
      const idHeader = mode === 'passthrough' ? 'x-request-id' : 'request-id'
      const limitHeader = mode === 'passthrough' ? 'x-ratelimit-remaining-requests' : 'anthropic-ratelimit-requests-remaining'
      const whole = await openai.chat.completions.create(chatBody(model, 'hi')).withResponse()
      const wholeCall = lastCall()
      expect(whole.response.headers.get(idHeader)).toBe(wholeCall.requestId)
      expect(whole.response.headers.get(limitHeader)).not.toBeNull()
      const streamed = await openai.chat.completions.create({ ...chatBody(model, 'hi'), stream: true }).withResponse()
      for await (const _ of streamed.data);
      expect(streamed.response.headers.get(idHeader)).toBe(lastCall().requestId)
      expect(streamed.response.headers.get(limitHeader)).not.toBeNull()
    })
  }

  test('responses.stream() (passthrough) finishes with the whole response, without "Unhandled response stream event"', async () => {
    const stream = openai.responses.stream({ model: GPT, input: 'hi' })
    const final = await stream.finalResponse()
    expect(final.status).toBe('completed')
    expect(final.output_text).toBe(OPENAI_TEXT.join(''))
  })

  for (const directive of MIDSTREAM_FAILURES) {
    test(`${directive}: responses.stream() rejects with the in-band error`, async () => {
      const failure = await failureOf(() => openai.responses.stream({ model: GPT, input: directive }).finalResponse())
      expect(failure).toBeInstanceOf(OpenAI.APIError)
    })

    test(`${directive}: iterating a completions stream throws the in-band error`, async () => {
      const failure = await failureOf(async () => {
        const stream = await openai.completions.create({ model: 'gpt-3.5-turbo-instruct', prompt: directive, stream: true })
        for await (const _ of stream);
      })
      expect(failure).toBeInstanceOf(OpenAI.APIError)
    })
  }

  test("models.retrieve('gpt-4o') answers the OpenAI model shape", async () => {
    const model = await openai.models.retrieve(GPT)
    expect(model).toMatchObject({ id: GPT, object: 'model', owned_by: expect.any(String) })
    expect(typeof model.created).toBe('number')
  })

  test('models.retrieve of an unknown id is a NotFoundError', async () => {
    const failure = await failureOf(() => openai.models.retrieve('no-such-model'))
    expect(failure).toBeInstanceOf(OpenAI.NotFoundError)
    expect((failure as InstanceType<typeof OpenAI.NotFoundError>).status).toBe(404)
  })

  test('a provider 429 with retry-after: 1 is retried about a second later (maxRetries: 1)', async () => {
    const retrying = new OpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1`, maxRetries: 1 })
    const before = fake.calls.length
    const failure = await failureOf(() => retrying.chat.completions.create(chatBody(GPT, 'fake:error:429 fake:retry-after:1')))
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError)
    const [first, second] = callsSince(before)
    expect(callsSince(before)).toHaveLength(2)
    expect((second as RecordedCall).receivedAt - (first as RecordedCall).receivedAt).toBeGreaterThanOrEqual(900)
  })

  test('translated: a provider 429 with retry-after: 1 is retried about a second later (maxRetries: 1)', async () => {
    const retrying = new OpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1`, maxRetries: 1 })
    const before = fake.calls.length
    const failure = await failureOf(() => retrying.chat.completions.create(chatBody(CLAUDE, 'fake:error:429 fake:retry-after:1')))
    expect(failure).toBeInstanceOf(OpenAI.RateLimitError)
    const [first, second] = callsSince(before)
    expect(callsSince(before)).toHaveLength(2)
    expect((second as RecordedCall).receivedAt - (first as RecordedCall).receivedAt).toBeGreaterThanOrEqual(900)
  })

  describe("translated: an Anthropic error arrives as the OpenAI SDK's type, with the provider's status", () => {
    const cases = [
      { status: 429, type: OpenAI.RateLimitError },
      { status: 401, type: OpenAI.AuthenticationError },
      { status: 400, type: OpenAI.BadRequestError },
      { status: 529, type: OpenAI.InternalServerError },
    ] as const
    for (const { status, type } of cases) {
      test(`${status} -> ${type.name}`, async () => {
        const failure = await failureOf(() => openai.chat.completions.create(chatBody(CLAUDE, `fake:error:${status}`)))
        expect(failure).toBeInstanceOf(type)
        expect((failure as InstanceType<typeof OpenAI.APIError>).status).toBe(status)
        expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain(`fake provider error ${status}`)
      })
    }
  })

  test('translated stream with stream_options.include_usage: no Gw-Translation-Warning naming stream_options', async () => {
    const { data, response } = await openai.chat.completions
      .create({ ...chatBody(CLAUDE, 'hi'), stream: true, stream_options: { include_usage: true } })
      .withResponse()
    let usage: OpenAI.CompletionUsage | null | undefined
    for await (const chunk of data) usage = chunk.usage ?? usage
    expect(response.headers.get('gw-translation-warning') ?? '').not.toContain('stream_options')
    expect(usage?.completion_tokens).toBe(500)
  })

  test("translated: Claude's thinking arrives as reasoning_content on the message", async () => {
    const completion = await openai.chat.completions.create(chatBody(CLAUDE, 'fake:thinking'))
    const message = completion.choices[0]?.message as OpenAI.ChatCompletionMessage & { reasoning_content?: string }
    expect(message.reasoning_content).toBe(THINKING_TEXT.join(''))
    expect(message.content).toBe(ANTHROPIC_TEXT.join(''))
  })

  test("translated and streamed: Claude's thinking arrives as reasoning_content on the deltas", async () => {
    const stream = await openai.chat.completions.create({ ...chatBody(CLAUDE, 'fake:thinking'), stream: true })
    let reasoning = ''
    let content = ''
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta as
        | (OpenAI.ChatCompletionChunk.Choice.Delta & { reasoning_content?: string })
        | undefined
      reasoning += delta?.reasoning_content ?? ''
      content += delta?.content ?? ''
    }
    expect(reasoning).toBe(THINKING_TEXT.join(''))
    expect(content).toBe(ANTHROPIC_TEXT.join(''))
  })
})

describe('the anthropic SDK', () => {
  for (const { mode, model, text } of ANTHROPIC_CALLER_MODES) {
    test(`raw stream iteration (${mode}) yields only Anthropic's documented event types`, async () => {
      const stream = await anthropic.messages.create({ ...messagesBody(model, 'hi'), stream: true })
      const types: string[] = []
      for await (const event of stream) types.push((event as { type?: string }).type ?? `(no type: ${JSON.stringify(event)})`)
      expect(types.filter((type) => !ANTHROPIC_EVENT_TYPES.has(type))).toEqual([])
      expect(types.at(-1)).toBe('message_stop')
    })

    test(`messages.stream() (${mode}): finalMessage has the whole answer`, async () => {
      const final = await anthropic.messages.stream(messagesBody(model, 'hi')).finalMessage()
      expect(final.content[0]).toMatchObject({ type: 'text', text })
      expect(final.stop_reason).toBe('end_turn')
    })

    for (const directive of MIDSTREAM_FAILURES) {
      test(`${directive} (${mode}): raw iteration throws the in-band error`, async () => {
        const failure = await failureOf(async () => {
          const stream = await anthropic.messages.create({ ...messagesBody(model, directive), stream: true })
          for await (const _ of stream);
        })
        expect(failure).toBeInstanceOf(Anthropic.APIError)
      })

      test(`${directive} (${mode}): messages.stream().finalMessage() rejects with the in-band error`, async () => {
        const failure = await failureOf(() => anthropic.messages.stream(messagesBody(model, directive)).finalMessage())
        expect(failure).toBeInstanceOf(Anthropic.APIError)
      })
    }
  }

  test('messages.stream() (passthrough) keeps a thinking block with its text and signature', async () => {
    const final = await anthropic.messages.stream(messagesBody(CLAUDE, 'fake:thinking')).finalMessage()
    expect(final.content[0]).toEqual({ type: 'thinking', thinking: THINKING_TEXT.join(''), signature: THINKING_SIGNATURE })
    expect(final.content[1]).toMatchObject({ type: 'text', text: ANTHROPIC_TEXT.join('') })
  })

  test("a provider error (passthrough): APIError.requestID is the provider's request-id", async () => {
    const failure = (await failureOf(() => anthropic.messages.create(messagesBody(CLAUDE, 'fake:error:400')))) as InstanceType<
      typeof Anthropic.APIError
    >
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
    expect(failure.requestID).toBe(lastCall().requestId)
    expect(failure.headers?.get('anthropic-ratelimit-requests-limit')).toBe('4000')
  })

  test("a provider error (translated): the OpenAI provider's x-request-id and rate-limit headers reach the caller", async () => {
    const failure = (await failureOf(() => anthropic.messages.create(messagesBody(GPT, 'fake:error:400')))) as InstanceType<
      typeof Anthropic.APIError
    >
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
    expect(failure.headers?.get('x-request-id')).toBe(lastCall().requestId)
    expect(failure.headers?.get('x-ratelimit-limit-requests')).toBe('10000')
  })

  test("a success (passthrough) carries the provider's request-id, streamed or not", async () => {
    const whole = await anthropic.messages.create(messagesBody(CLAUDE, 'hi')).withResponse()
    expect(whole.response.headers.get('request-id')).toBe(lastCall().requestId)
    expect(whole.response.headers.get('anthropic-ratelimit-requests-remaining')).not.toBeNull()
    const streamed = await anthropic.messages.create({ ...messagesBody(CLAUDE, 'hi'), stream: true }).withResponse()
    for await (const _ of streamed.data);
    expect(streamed.response.headers.get('request-id')).toBe(lastCall().requestId)
  })

  test('a provider 429 with retry-after: 1 is retried about a second later (maxRetries: 1)', async () => {
    const retrying = new Anthropic({ authToken: org.apiKey, apiKey: null, baseURL: server.url, maxRetries: 1 })
    const before = fake.calls.length
    const failure = await failureOf(() => retrying.messages.create(messagesBody(CLAUDE, 'fake:error:429 fake:retry-after:1')))
    expect(failure).toBeInstanceOf(Anthropic.RateLimitError)
    const [first, second] = callsSince(before)
    expect(callsSince(before)).toHaveLength(2)
    expect((second as RecordedCall).receivedAt - (first as RecordedCall).receivedAt).toBeGreaterThanOrEqual(900)
  })

  describe("translated: an OpenAI-side error arrives as the Anthropic SDK's type, with the provider's status", () => {
    const cases = [
      { status: 429, type: Anthropic.RateLimitError, errorType: 'rate_limit_error' },
      { status: 401, type: Anthropic.AuthenticationError, errorType: 'authentication_error' },
      { status: 400, type: Anthropic.BadRequestError, errorType: 'invalid_request_error' },
      { status: 529, type: Anthropic.InternalServerError, errorType: 'overloaded_error' },
    ] as const
    for (const { status, type, errorType } of cases) {
      test(`${status} -> ${type.name} (${errorType})`, async () => {
        const failure = await failureOf(() => anthropic.messages.create(messagesBody(GPT, `fake:error:${status}`)))
        expect(failure).toBeInstanceOf(type)
        const error = failure as InstanceType<typeof Anthropic.APIError>
        expect(error.status).toBe(status)
        expect(error.type).toBe(errorType)
      })
    }
  })

  test('passthrough: an overloaded Anthropic provider is overloaded_error with status 529', async () => {
    const failure = await failureOf(() => anthropic.messages.create(messagesBody(CLAUDE, 'fake:error:529')))
    expect(failure).toBeInstanceOf(Anthropic.InternalServerError)
    expect((failure as InstanceType<typeof Anthropic.APIError>).status).toBe(529)
    expect((failure as InstanceType<typeof Anthropic.APIError>).type).toBe('overloaded_error')
  })

  test('countTokens with a Claude model: the provider count_tokens answer', async () => {
    const before = fake.calls.length
    const counted = await anthropic.messages.countTokens({ model: CLAUDE, messages: [{ role: 'user', content: 'count me' }] })
    const [sent] = callsSince(before)
    expect(sent?.path).toBe('/v1/messages/count_tokens')
    expect(counted).toEqual({ input_tokens: fakeTokenCount(sent?.body ?? {}) })
  })

  test('countTokens with a gpt model is a clear 400 (invalid_request_error), and no provider is called', async () => {
    const before = fake.calls.length
    const failure = await failureOf(() =>
      anthropic.messages.countTokens({ model: GPT, messages: [{ role: 'user', content: 'x' }] }),
    )
    expect(failure).toBeInstanceOf(Anthropic.BadRequestError)
    const error = failure as InstanceType<typeof Anthropic.APIError>
    expect(error.type).toBe('invalid_request_error')
    // Clear: it says what cannot be done, naming the model or the count_tokens path.
    expect(error.apiMessage).toMatch(/count_tokens|gpt-4o/)
    expect(callsSince(before)).toHaveLength(0)
  })
})

describe('the Vercel AI SDK', () => {
  const aiOpenAI = () => createOpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1` })
  const aiAnthropic = () => createAnthropic({ authToken: org.apiKey, baseURL: `${server.url}/v1` })

  /** Each way into gw: the provider package, the model, and what the model answers once it has the tool's result. */
  const ROUTES: Array<{ name: string; model: () => LanguageModel; text: string }> = [
    { name: '@ai-sdk/openai chat, gpt (passthrough)', model: () => aiOpenAI().chat(GPT), text: OPENAI_TEXT.join('') },
    {
      name: '@ai-sdk/anthropic, claude (passthrough)',
      model: () => aiAnthropic()(CLAUDE),
      text: ANTHROPIC_TEXT.join(''),
    },
    {
      name: '@ai-sdk/openai chat, claude (translated)',
      model: () => aiOpenAI().chat(CLAUDE),
      text: ANTHROPIC_TEXT.join(''),
    },
    { name: '@ai-sdk/anthropic, gpt (translated)', model: () => aiAnthropic()(GPT), text: OPENAI_TEXT.join('') },
    { name: '@ai-sdk/openai responses, gpt (passthrough)', model: () => aiOpenAI().responses(GPT), text: OPENAI_TEXT.join('') },
  ]

  for (const route of ROUTES) {
    test(`${route.name}: a tool loop over two steps finishes with finishReason stop`, async () => {
      const outcome = await streamTextThroughGw(route.model(), 'What is the weather in Paris? fake:tools-once', true)
      expect(outcome.errors.map(String)).toEqual([])
      expect(outcome.executed).toEqual([{ city: 'Paris' }])
      expect(outcome.steps).toHaveLength(2)
      expect(outcome.finishReason).toBe('stop')
      expect(outcome.text).toBe(route.text)
    })

    for (const directive of MIDSTREAM_FAILURES) {
      test(`${route.name}: ${directive} surfaces as an error`, async () => {
        const outcome = await streamTextThroughGw(route.model(), directive)
        expect({ errored: outcome.errors.length > 0 || outcome.finishReason === 'error', parts: outcome.parts }).toMatchObject({
          errored: true,
        })
      })
    }
  }
})

describe('the gw frame is sent only when asked', () => {
  const STREAMS = [
    { path: '/v1/chat/completions', body: chatBody(GPT, 'hi') },
    { path: '/v1/chat/completions', body: chatBody(CLAUDE, 'hi') },
    { path: '/v1/messages', body: messagesBody(CLAUDE, 'hi') },
    { path: '/v1/messages', body: messagesBody(GPT, 'hi') },
    { path: '/v1/responses', body: { model: GPT, input: 'hi' } },
  ]
  for (const { path, body } of STREAMS) {
    test(`${path} ${body.model}: no event: gw without Gw-Stream-Meta`, async () => {
      const { response, events } = await rawStream(path, body)
      expect(response.status).toBe(200)
      expect(events.length).toBeGreaterThan(0)
      expect(events.filter((event) => event.event === 'gw')).toEqual([])
    })

    test(`${path} ${body.model}: with Gw-Stream-Meta: frame the last event is gw, its requestId the Gw-Id`, async () => {
      const { response, events } = await rawStream(path, body, { 'gw-stream-meta': 'frame' })
      expect(events.at(-1)?.event).toBe('gw')
      expect(events.filter((event) => event.event === 'gw')).toHaveLength(1)
      const meta = JSON.parse(events.at(-1)?.data ?? '{}') as Record<string, unknown>
      expect(meta).toMatchObject({ requestId: response.headers.get('gw-id'), status: 'success' })
    })
  }

  test("the organisation's stream-meta-config {frame: true} turns it on for calls that do not ask", async () => {
    const other = await h.org('growth')
    await h.services.organizations.addCredits(other.orgId, 10)
    const set = await fetch(`${server.url}/v1/organization/stream-meta-config`, {
      method: 'POST',
      headers: { authorization: `Bearer ${other.ownerSession}`, 'content-type': 'application/json' },
      body: JSON.stringify({ frame: true }),
    })
    expect(set.status).toBe(200)
    const { response, events } = await rawStream('/v1/chat/completions', chatBody(GPT, 'hi'), {}, other.apiKey)
    expect(events.at(-1)?.event).toBe('gw')
    expect((JSON.parse(events.at(-1)?.data ?? '{}') as { requestId?: string }).requestId).toBe(
      response.headers.get('gw-id') ?? 'missing',
    )
  })
})

describe('a mid-stream failure is an in-band error in the caller protocol', () => {
  test('OpenAI chat (passthrough), broken stream: the last frame is data {"error": {message, type, code}}', async () => {
    const { events } = await rawStream('/v1/chat/completions', chatBody(GPT, 'fake:midstream-fail'))
    const last = events.at(-1)
    expect(last?.event).toBeUndefined()
    const error = (JSON.parse(last?.data ?? '{}') as { error?: Record<string, unknown> }).error
    expect(error).toMatchObject({ message: expect.any(String), type: expect.any(String) })
    expect(error && 'code' in error).toBe(true)
  })

  test('Anthropic messages (passthrough), broken stream: the last event is error with an api_error', async () => {
    const { events } = await rawStream('/v1/messages', messagesBody(CLAUDE, 'fake:midstream-fail'))
    expect(events.at(-1)?.event).toBe('error')
    expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({
      type: 'error',
      error: { type: 'api_error', message: expect.any(String) },
    })
  })

  test("translated: Anthropic's event: error reaches an OpenAI chat caller as a data {error} frame", async () => {
    const { events } = await rawStream('/v1/chat/completions', chatBody(CLAUDE, 'fake:stream-error'))
    const last = events.at(-1)
    expect(last?.event).toBeUndefined()
    expect(JSON.parse(last?.data ?? '{}')).toMatchObject({ error: { message: 'Overloaded' } })
  })

  test("translated: OpenAI's data {error} frame reaches an Anthropic caller as event: error", async () => {
    const { events } = await rawStream('/v1/messages', messagesBody(GPT, 'fake:stream-error'))
    expect(events.at(-1)?.event).toBe('error')
    expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({ type: 'error', error: { type: expect.any(String) } })
  })
})

describe('a caller that disconnects mid-stream is recorded with 499', () => {
  test('the openai SDK breaking out of a chat stream (passthrough)', async () => {
    const { data, response } = await openai.chat.completions
      .create({ ...chatBody(GPT, 'fake:slow:100'), stream: true })
      .withResponse()
    for await (const _ of data) break
    const record = await recordOf(response.headers.get('gw-id') as string)
    expect(record.httpStatus).toBe(499)
  })

  test('the anthropic SDK aborting a messages stream (translated)', async () => {
    const { data, response } = await anthropic.messages
      .create({ ...messagesBody(GPT, 'fake:slow:100'), stream: true })
      .withResponse()
    for await (const _ of data) {
      data.controller.abort()
    }
    const record = await recordOf(response.headers.get('gw-id') as string)
    expect(record.httpStatus).toBe(499)
  })
})
