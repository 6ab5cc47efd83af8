/**
 * Google's GenAI SDK as a caller: pointed at gw (its key in `Authorization: Bearer`, as every gw call
 * has it), it reaches any model through `models/{model}:generateContent` and `:streamGenerateContent`,
 * whole and streamed, tools included, and reads gw's refusals and the providers' failures as Google's
 * own errors. Both API versions the SDK uses (`v1`, its default from 3.x, and `v1beta`) are served.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { type GenerateContentResponse, GoogleGenAI } from '@google/genai'
import { ANTHROPIC_TEXT, type FakeProvider, OPENAI_TEXT, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, type Harness, type Org } from './support/harness'
import { serveHarness } from './support/serve'

let fake: FakeProvider
let h: Harness
let org: Org
let server: { url: string; stop(): Promise<void> }

beforeAll(async () => {
  fake = await startFakeProvider()
  h = await createHarness({ providers: providersAt(fake) })
  org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 100)
  server = serveHarness(h)
})
afterAll(async () => {
  await server.stop()
  await h.close()
  await fake.close()
})

/** The SDK wants a key of its own (it sends it as `x-goog-api-key`); gw reads its key from Authorization. */
const google = (apiVersion: 'v1' | 'v1beta', key = org.apiKey) =>
  new GoogleGenAI({
    apiKey: 'unused-by-gw',
    apiVersion,
    httpOptions: { baseUrl: server.url, headers: { Authorization: `Bearer ${key}` } },
  })

const ask = { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] }

async function textOf(
  stream: AsyncGenerator<GenerateContentResponse>,
): Promise<{ text: string; last?: GenerateContentResponse }> {
  let text = ''
  let last: GenerateContentResponse | undefined
  for await (const chunk of stream) {
    text += chunk.text ?? ''
    last = chunk
  }
  return { text, last }
}

describe("Google's GenAI SDK calling gw", () => {
  for (const apiVersion of ['v1', 'v1beta'] as const) {
    test(`${apiVersion}: a whole answer from an OpenAI model, with its usage, recorded with the path as called`, async () => {
      const answer = await google(apiVersion).models.generateContent({ model: 'gpt-4o-mini', ...ask })
      expect(answer.text).toBe(OPENAI_TEXT.join(''))
      expect(answer.usageMetadata?.promptTokenCount).toBeGreaterThan(0)
      const id = answer.sdkHttpResponse?.headers?.['gw-id'] as string
      expect(answer.sdkHttpResponse?.headers?.['gw-provider']).toBe('openai')
      expect(answer.sdkHttpResponse?.headers?.['gw-gateway-mode']).toBe('translated')
      await h.requestLog.flush()
      const record = await h.store.requests.get(org.orgId, id)
      expect(record).toMatchObject({
        provider: 'openai',
        model: 'gpt-4o-mini',
        status: 'success',
        path: `/${apiVersion}/models/gpt-4o-mini:generateContent`,
      })
      expect(record?.costNano).toBeGreaterThan(0)
    })
  }

  test('a streamed answer from an Anthropic model reads as Gemini chunks, the usage on the last', async () => {
    const stream = await google('v1beta').models.generateContentStream({ model: 'claude-haiku-4-5', ...ask })
    const { text, last } = await textOf(stream)
    expect(text).toBe(ANTHROPIC_TEXT.join(''))
    expect(String(last?.candidates?.[0]?.finishReason)).toBe('STOP')
    expect(last?.usageMetadata?.candidatesTokenCount).toBeGreaterThan(0)
  })

  test("a model named with its provider, as Google's SDK keeps slashes in model names", async () => {
    const answer = await google('v1beta').models.generateContent({ model: 'anthropic/claude-haiku-4-5', ...ask })
    expect(answer.text).toBe(ANTHROPIC_TEXT.join(''))
  })

  test('a function the model calls comes back as a functionCall, and its response goes on to the next turn', async () => {
    const tools = [
      {
        functionDeclarations: [
          {
            name: 'lookup',
            description: 'Looks a word up',
            parametersJsonSchema: { type: 'object', properties: { word: { type: 'string' } } },
          },
        ],
      },
    ]
    const first = await google('v1beta').models.generateContent({
      model: 'gpt-4o-mini',
      contents: [{ role: 'user', parts: [{ text: 'Look up "gw" fake:tools' }] }],
      config: { tools },
    })
    const call = first.functionCalls?.[0]
    expect(call?.name).toBeDefined()
    const second = await google('v1beta').models.generateContent({
      model: 'gpt-4o-mini',
      contents: [
        { role: 'user', parts: [{ text: 'Look up "gw"' }] },
        { role: 'model', parts: [{ functionCall: call }] },
        { role: 'user', parts: [{ functionResponse: { id: call?.id, name: call?.name, response: { output: 'a gateway' } } }] },
      ],
      config: { tools },
    })
    expect(second.text).toBe(OPENAI_TEXT.join(''))
    const sent = fake.calls.at(-1)?.body as { messages: Array<{ role: string; tool_call_id?: string }> }
    expect(sent.messages.find((message) => message.role === 'tool')?.tool_call_id).toBe(call?.id)
  })

  test("gw's refusals and the providers' failures are Google's errors, which the SDK raises with their status", async () => {
    const bad = await google('v1beta', 'gw-sk-not-a-key')
      .models.generateContent({ model: 'gpt-4o-mini', ...ask })
      .catch((error: unknown) => error)
    expect(bad).toMatchObject({ name: 'ApiError', status: 401 })
    expect(JSON.parse((bad as Error).message)).toMatchObject({ error: { code: 401, status: 'UNAUTHENTICATED' } })

    const unknown = await google('v1beta')
      .models.generateContent({ model: 'nonesuch-model', ...ask })
      .catch((error: unknown) => error)
    expect(unknown).toMatchObject({ name: 'ApiError', status: 400 })
    expect(JSON.parse((unknown as Error).message).error.status).toBe('INVALID_ARGUMENT')

    const limited = await google('v1beta')
      .models.generateContent({ model: 'gpt-4o-mini', contents: [{ role: 'user', parts: [{ text: 'fake:error:429' }] }] })
      .catch((error: unknown) => error)
    expect(limited).toMatchObject({ name: 'ApiError', status: 429 })
    expect(JSON.parse((limited as Error).message).error.status).toBe('RESOURCE_EXHAUSTED')
  })

  test('a method gw does not serve is a Google 404; a body that is no object a 400', async () => {
    const method = await fetch(`${server.url}/v1beta/models/gpt-4o-mini:embedContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: '{}',
    })
    expect(method.status).toBe(404)
    const body = await fetch(`${server.url}/v1beta/models/gpt-4o-mini:generateContent`, {
      method: 'POST',
      headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
      body: '[1]',
    })
    expect(body.status).toBe(400)
    expect(await body.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT' } })
  })

  test("OpenAI's model routes on the same prefix still answer OpenAI's SDKs", async () => {
    const listed = await fetch(`${server.url}/v1/models/gpt-4o`, { headers: { authorization: `Bearer ${org.apiKey}` } })
    expect(listed.status).toBe(200)
    expect(await listed.json()).toMatchObject({ id: 'gpt-4o', object: 'model' })
  })
})
