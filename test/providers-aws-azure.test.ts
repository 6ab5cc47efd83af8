import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import Anthropic from '@anthropic-ai/sdk'
import type { LanguageModel } from 'ai'
import OpenAI from 'openai'
import { loadConfig } from '../src/config'
import type { OperatorProviders } from '../src/directory/providers'
import type { GatewayMeta } from '../src/gateway/meta/store'
import { bedrockModelPath, signBedrockRequest } from '../src/gateway/providers/bedrock/sign'
import { costNano, priceFor } from '../src/money/cost'
import type { Usage } from '../src/money/usage'
import { SseParser } from '../src/util/sse'
import {
  type AwsKey,
  AZURE_FILTER_MESSAGE,
  AZURE_TEXT,
  BEDROCK_SIGNATURE,
  BEDROCK_SIGNATURE_MESSAGE,
  BEDROCK_TEXT,
  BEDROCK_THINKING,
  BEDROCK_THROTTLE_MESSAGE,
  BEDROCK_TOOL_PREAMBLE,
  decodeFrames,
  type Fake,
  type FakeAzure,
  type FakeBedrock,
  type FakeMistral,
  fragmentsOf,
  INVOKE_SERVED_MODEL,
  MISTRAL_TEXT,
  startFakeAzure,
  startFakeBedrock,
  startFakeMistral,
  TOOL_ARGUMENTS,
} from './support/fake-aws-azure'
import { failureOf, gatewaySdks, rawStream as streamFromGateway, writtenRecord } from './support/gateway-calls'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { readChatStream, streamTextThroughGw } from './support/sdk-runs'
import { serveHarness } from './support/serve'

/**
 * AWS Bedrock, Azure OpenAI and an OpenAI-compatible vendor (Mistral) reached through gw by the
 * official SDKs, with the operator's connections (made from the vendors' own environment variables)
 * pointed at fakes that check what the vendors check: SigV4 signatures re-computed with AWS's signer,
 * Converse's rules for a conversation, Azure's key, deployment and API version, Mistral's refusal of
 * `stream_options`. Whole and streamed answers, tool calls over two turns, usage and cost, a fallback
 * from Azure to Bedrock, the vendors' errors, and an access rule on a connection.
 */

const AWS_KEY_ID = 'AKIAFAKEGATEWAY00001'
const AWS_SECRET = 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYFAKEKEY0001'
const AWS_SESSION_TOKEN = 'FwoGZXIvYXdzEFAKESESSIONTOKEN0001'
const AZURE_KEY = 'azure-key-0123456789abcdef'
const MISTRAL_KEY = 'mistral-key-0123456789abcdef'

const BEDROCK_MODEL = 'anthropic.claude-sonnet-4-5-20250929-v1:0'
const BEDROCK_PROFILE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'

/** A way to name a model through gw, where it lands, and what comes back. */
interface Target {
  name: string
  /** As the caller names it. */
  model: string
  provider: 'bedrock' | 'azure' | 'mistral'
  text: string
  /** Where a whole chat lands at the vendor: Bedrock's and Azure's paths name the model (a Bedrock id, a deployment). */
  path: string
  /** The model the answer names: the one Azure and Mistral say served, the one called for Bedrock (Converse names none). */
  answerModel: string
  /** What an Anthropic caller's answer names instead: Claude's own answer, which Bedrock's InvokeModel passes on. */
  anthropicAnswerModel?: string
  /** The price row the call is priced by, when there is one. */
  pricedAs?: ['anthropic' | 'openai' | 'mistral', string]
}

/** Every fake reports this usage (no cache unless asked), and callers in OpenAI's format see it as it is. */
const USAGE = { prompt: 1_000, completion: 500 }

const bedrockTarget = (name: string, id: string): Target => ({
  name,
  model: `bedrock/${id}`,
  provider: 'bedrock',
  text: BEDROCK_TEXT.join(''),
  path: `/model/${id.replace(':', '%3A')}/converse`,
  answerModel: id,
  anthropicAnswerModel: INVOKE_SERVED_MODEL,
  pricedAs: ['anthropic', 'claude-sonnet-4-5'],
})

const azureTarget = (name: string, model: string, pricedAs?: Target['pricedAs']): Target => ({
  name,
  model: `azure/${model}`,
  provider: 'azure',
  text: AZURE_TEXT.join(''),
  path: '/openai/deployments/prod-4o/chat/completions',
  answerModel: 'gpt-4o-2024-11-20',
  ...(pricedAs ? { pricedAs } : {}),
})

const TARGETS: Target[] = [
  bedrockTarget('Bedrock, a base model id', BEDROCK_MODEL),
  bedrockTarget('Bedrock, a cross-region inference profile', BEDROCK_PROFILE),
  // A deployment's own name has no price: the call is priced at the model Azure says served it.
  azureTarget('Azure, a deployment', 'prod-4o', ['openai', 'gpt-4o']),
  azureTarget('Azure, a model alias of a deployment', 'gpt-4o', ['openai', 'gpt-4o']),
  {
    name: 'Mistral',
    model: 'mistral/mistral-small-latest',
    provider: 'mistral',
    text: MISTRAL_TEXT.join(''),
    path: '/v1/chat/completions',
    answerModel: 'mistral-small-latest',
    // `-latest` names the family: Mistral's own row prices it.
    pricedAs: ['mistral', 'mistral-small'],
  },
]

const WEATHER_SCHEMA = {
  type: 'object' as const,
  properties: { city: { type: 'string' as const } },
  required: ['city'],
}
const OPENAI_TOOLS: OpenAI.Chat.ChatCompletionTool[] = [
  { type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: WEATHER_SCHEMA } },
]
const ANTHROPIC_TOOLS: Anthropic.Tool[] = [
  { name: 'get_weather', description: 'The weather in a city', input_schema: WEATHER_SCHEMA },
]
const CITIES = TOOL_ARGUMENTS.map((text) => JSON.parse(text) as { city: string })

/** The operator's connections, from the variables an operator sets, pointed at the fakes. */
function operatorConnections(bedrock: Fake, azure: Fake, mistral: FakeMistral, secret = AWS_SECRET): Partial<OperatorProviders> {
  const { providers } = loadConfig({
    AWS_ACCESS_KEY_ID: AWS_KEY_ID,
    AWS_SECRET_ACCESS_KEY: secret,
    AWS_SESSION_TOKEN,
    AWS_REGION: 'us-east-1',
    AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
    AZURE_OPENAI_API_KEY: AZURE_KEY,
    AZURE_OPENAI_ENDPOINT: azure.url,
    AZURE_OPENAI_DEPLOYMENTS: 'gpt-4o=prod-4o',
    MISTRAL_API_KEY: MISTRAL_KEY,
    MISTRAL_BASE_URL: mistral.baseUrl,
  })
  return { bedrock: providers.bedrock, azure: providers.azure, mistral: providers.mistral }
}

/** The usage a priced call costs at the row it is priced by, in nano-USD. */
function costAt(pricedAs: Target['pricedAs'], usage: Usage): number | null {
  if (!pricedAs) return null
  const price = priceFor(...pricedAs)
  if (!price) throw new Error(`no price row for ${pricedAs.join(' ')}`)
  return costNano(price, usage)
}

const plainUsage = (prompt: number, completion: number): Usage => ({
  promptTokens: prompt,
  completionTokens: completion,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
})

/**
 * The tool calls and their results in the last conversation a fake received, in its own format: each
 * call's arguments, the result that answers it (paired by id), and its position.
 */
function toolTurnSent(fake: Fake): Array<{ city: unknown; answer: unknown; n: number }> {
  const body = fake.calls.at(-1)?.body as { messages?: Array<Record<string, unknown>> }
  const messages = body.messages ?? []
  const blocks = messages.flatMap((message) =>
    Array.isArray(message.content) ? (message.content as Record<string, unknown>[]) : [],
  )
  // Converse: toolUse blocks and toolResult blocks; OpenAI's format: tool_calls and tool messages;
  // Anthropic's (Claude through InvokeModel): tool_use and tool_result blocks.
  const calls = [
    ...blocks.flatMap((block) => {
      const use = block.toolUse as { toolUseId: string; input: { city: unknown } } | undefined
      return use ? [{ id: use.toolUseId, city: use.input.city }] : []
    }),
    ...blocks
      .filter((block) => block.type === 'tool_use')
      .map((block) => ({ id: block.id as string, city: (block.input as { city: unknown }).city })),
    ...messages.flatMap((message) =>
      ((message.tool_calls ?? []) as Array<{ id: string; function: { arguments: string } }>).map((call) => ({
        id: call.id,
        city: (JSON.parse(call.function.arguments) as { city: unknown }).city,
      })),
    ),
  ]
  const results = new Map<string, unknown>([
    ...blocks.flatMap((block) => {
      const result = block.toolResult as { toolUseId: string; content: Array<{ text: string }> } | undefined
      return result ? [[result.toolUseId, result.content[0]?.text] as const] : []
    }),
    ...messages
      .filter((message) => message.role === 'tool')
      .map((message) => [message.tool_call_id as string, message.content] as const),
    ...blocks
      .filter((block) => block.type === 'tool_result')
      .map((block) => [block.tool_use_id as string, block.content] as const),
  ])
  return calls.map((call, n) => ({ city: call.city, answer: results.get(call.id), n }))
}

describe.each(DIALECTS)('AWS Bedrock, Azure OpenAI and Mistral through gw on %s', (dialect) => {
  const keys: Record<string, AwsKey> = { [AWS_KEY_ID]: { secretAccessKey: AWS_SECRET, sessionToken: AWS_SESSION_TOKEN } }
  let bedrock: FakeBedrock
  let azure: FakeAzure
  let mistral: FakeMistral
  let h: Harness
  let org: Org
  let server: { url: string; stop(): Promise<void> }
  let openai: OpenAI
  let anthropic: Anthropic

  beforeAll(async () => {
    bedrock = startFakeBedrock(keys)
    azure = startFakeAzure(AZURE_KEY)
    mistral = startFakeMistral(MISTRAL_KEY)
    h = await createHarness({ dialect, providers: operatorConnections(bedrock, azure, mistral) })
    org = await h.org('growth')
    await h.services.organizations.addCredits(org.orgId, 100)
    server = serveHarness(h)
    ;({ openai, anthropic } = gatewaySdks(server.url, org.apiKey))
  })
  afterAll(async () => {
    await server.stop()
    await h.close()
    await Promise.all([bedrock.close(), azure.close(), mistral.close()])
  })

  const fakeOf = (provider: Target['provider']): Fake => ({ bedrock, azure, mistral })[provider]

  const recordOf = (requestId: string | null) => writtenRecord(h, org.orgId, requestId)

  async function metaOf(requestId: string | null): Promise<GatewayMeta> {
    const lookup = await h.request('GET', `/gateway/v1/meta/${requestId}`, { token: org.apiKey })
    expect(lookup.status).toBe(200)
    return (await lookup.json()) as GatewayMeta
  }

  const rawStream = (path: string, body: Record<string, unknown>) => streamFromGateway(server.url, org.apiKey, path, body)

  /** What draining a streamed chat completion (which must fail) rejects with. */
  const streamedChatFailure = (model: string, content: string) =>
    failureOf(async () => {
      const stream = await openai.chat.completions.create({ model, messages: [{ role: 'user', content }], stream: true })
      for await (const _ of stream);
    })

  for (const target of TARGETS) {
    const fake = () => fakeOf(target.provider)
    const expectedCost = costAt(target.pricedAs, plainUsage(USAGE.prompt, USAGE.completion))
    /** The call's record: a success at the target's provider, with the fake's tokens, priced at the target's row. */
    const expectPricedRecord = async (response: Response) =>
      expect(await recordOf(response.headers.get('gw-id'))).toMatchObject({
        provider: target.provider,
        status: 'success',
        promptTokens: USAGE.prompt,
        completionTokens: USAGE.completion,
        costNano: expectedCost,
      })

    describe(target.name, () => {
      test('the openai SDK, whole: the answer, Gw-Provider, and a record with the provider, tokens and cost', async () => {
        const since = fake().calls.length
        const { data, response } = await openai.chat.completions
          .create({ model: target.model, messages: [{ role: 'user', content: 'hi' }] })
          .withResponse()
        expect(data.choices[0]?.message.content).toBe(target.text)
        expect(data.choices[0]?.finish_reason).toBe('stop')
        expect(data.model).toBe(target.answerModel)
        expect(data.usage).toMatchObject({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion })
        expect(response.headers.get('gw-provider')).toBe(target.provider)
        expect(
          fake()
            .calls.slice(since)
            .map((call) => [call.status, call.path]),
        ).toEqual([[200, target.path]])
        await expectPricedRecord(response)
      })

      test('the openai SDK, streamed with include_usage: the text in order and a usage chunk; the record priced', async () => {
        const { data: stream, response } = await openai.chat.completions
          .create({
            model: target.model,
            messages: [{ role: 'user', content: 'hi' }],
            stream: true,
            stream_options: { include_usage: true },
          })
          .withResponse()
        const { text, finish, usage, chunks } = await readChatStream(stream)
        expect(text).toBe(target.text)
        expect(finish).toBe('stop')
        expect(usage).toMatchObject({ prompt_tokens: USAGE.prompt, completion_tokens: USAGE.completion })
        // Azure's opening chunk of filter results alone names no model; every chunk of the answer does.
        expect([...new Set(chunks.map((chunk) => chunk.model))].filter((model) => model !== '')).toEqual([target.answerModel])
        expect(response.headers.get('gw-provider')).toBe(target.provider)
        await expectPricedRecord(response)
      })

      test('a stream without include_usage is still priced', async () => {
        const { response, events } = await rawStream('/v1/chat/completions', {
          model: target.model,
          messages: [{ role: 'user', content: 'hi' }],
        })
        expect(response.status).toBe(200)
        expect(events.at(-1)?.data).toBe('[DONE]')
        await expectPricedRecord(response)
      })

      test('the anthropic SDK, whole and streamed: the text, the stop reason and the usage', async () => {
        const whole = await anthropic.messages.create({
          model: target.model,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
        })
        expect(whole.content).toEqual([expect.objectContaining({ type: 'text', text: target.text })])
        expect(whole.stop_reason).toBe('end_turn')
        expect(whole.usage).toMatchObject({ input_tokens: USAGE.prompt, output_tokens: USAGE.completion })
        const streamed = anthropic.messages.stream({
          model: target.model,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'hi' }],
        })
        const final = await streamed.finalMessage()
        expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: target.text })])
        expect(final.stop_reason).toBe('end_turn')
        const named = target.anthropicAnswerModel ?? target.answerModel
        expect([whole.model, final.model]).toEqual([named, named])
        expect(final.usage).toMatchObject({ input_tokens: USAGE.prompt, output_tokens: USAGE.completion })
      })

      test('the openai SDK: two tool calls streamed add up, and the second turn with their results answers', async () => {
        const question: OpenAI.Chat.ChatCompletionMessageParam = {
          role: 'user',
          content: 'Weather in Paris and Rome? fake:tools-once fake:two-tools',
        }
        const stream = await openai.chat.completions.create({
          model: target.model,
          messages: [question],
          tools: OPENAI_TOOLS,
          stream: true,
        })
        const { text: content, finish, calls } = await readChatStream(stream)
        expect(finish).toBe('tool_calls')
        expect(calls.map((call) => [call.name, JSON.parse(call.arguments)])).toEqual(CITIES.map((city) => ['get_weather', city]))
        expect(calls.every((call) => call.id !== '')).toBe(true)
        const answer = await openai.chat.completions.create({
          model: target.model,
          tools: OPENAI_TOOLS,
          messages: [
            question,
            {
              role: 'assistant',
              content: content === '' ? null : content,
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function' as const,
                function: { name: call.name, arguments: call.arguments },
              })),
            },
            ...calls.map((call, n) => ({
              role: 'tool' as const,
              tool_call_id: call.id,
              content: JSON.stringify({ ...CITIES[n], celsius: 21 }),
            })),
          ],
        })
        expect(answer.choices[0]?.message.content).toBe(target.text)
        expect(toolTurnSent(fake())).toEqual(
          CITIES.map((city, n) => ({ ...city, answer: JSON.stringify({ ...city, celsius: 21 }), n })),
        )
      })

      test('the anthropic SDK: two tool calls streamed add up, and the second turn with their results answers', async () => {
        const question: Anthropic.MessageParam = {
          role: 'user',
          content: 'Weather in Paris and Rome? fake:tools-once fake:two-tools',
        }
        const first = await anthropic.messages
          .stream({ model: target.model, max_tokens: 64, tools: ANTHROPIC_TOOLS, messages: [question] })
          .finalMessage()
        expect(first.stop_reason).toBe('tool_use')
        const uses = first.content.filter((block) => block.type === 'tool_use')
        expect(uses.map((use) => [use.name, use.input])).toEqual(CITIES.map((city) => ['get_weather', city]))
        if (target.provider === 'bedrock') expect(first.content[0]).toMatchObject({ type: 'text', text: BEDROCK_TOOL_PREAMBLE })
        const answer = await anthropic.messages.create({
          model: target.model,
          max_tokens: 64,
          tools: ANTHROPIC_TOOLS,
          messages: [
            question,
            { role: 'assistant', content: first.content },
            {
              role: 'user',
              content: uses.map((use, n) => ({
                type: 'tool_result' as const,
                tool_use_id: use.id,
                content: JSON.stringify({ ...CITIES[n], celsius: 21 }),
              })),
            },
          ],
        })
        expect(answer.content).toEqual([expect.objectContaining({ type: 'text', text: target.text })])
        expect(toolTurnSent(fake())).toEqual(
          CITIES.map((city, n) => ({ ...city, answer: JSON.stringify({ ...city, celsius: 21 }), n })),
        )
      })

      const AI_ROUTES: Array<{ name: string; model: () => LanguageModel }> = [
        {
          name: '@ai-sdk/openai chat',
          model: () => createOpenAI({ apiKey: org.apiKey, baseURL: `${server.url}/v1` }).chat(target.model),
        },
        {
          name: '@ai-sdk/anthropic',
          model: () => createAnthropic({ authToken: org.apiKey, baseURL: `${server.url}/v1` })(target.model),
        },
      ]
      for (const route of AI_ROUTES) {
        test(`${route.name}: a tool loop over two steps, with the usage of both`, async () => {
          const outcome = await streamTextThroughGw(route.model(), 'What is the weather in Paris? fake:tools-once', true)
          expect(outcome.errors.map(String)).toEqual([])
          expect(outcome.executed).toEqual([CITIES[0]])
          expect(outcome.steps).toHaveLength(2)
          expect(outcome.finishReason).toBe('stop')
          expect(outcome.text).toBe(target.text)
          expect(outcome.usage).toMatchObject({ inputTokens: 2 * USAGE.prompt, outputTokens: 2 * USAGE.completion })
        })
      }
    })
  }

  describe('what each vendor was sent', () => {
    test('Bedrock: the model in the path (encoded once), signed with the session token; the caller key never sent', async () => {
      const since = bedrock.calls.length
      await openai.chat.completions.create({ model: `bedrock/${BEDROCK_PROFILE}`, messages: [{ role: 'user', content: 'hi' }] })
      const [call] = bedrock.calls.slice(since)
      expect(call?.path).toBe('/model/us.anthropic.claude-sonnet-4-5-20250929-v1%3A0/converse')
      expect(call?.headers['x-amz-security-token']).toBe(AWS_SESSION_TOKEN)
      expect(call?.headers.authorization).toStartWith(`AWS4-HMAC-SHA256 Credential=${AWS_KEY_ID}/`)
      expect(call?.body).toEqual({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] })
    })

    test('Azure: the alias becomes the deployment in the path, with the API version and api-key; the record keeps no deployment', async () => {
      const since = azure.calls.length
      const { response } = await openai.chat.completions
        .create({ model: 'azure/gpt-4o', messages: [{ role: 'user', content: 'hi' }] })
        .withResponse()
      const [call] = azure.calls.slice(since)
      expect(call?.path).toBe('/openai/deployments/prod-4o/chat/completions')
      expect(call?.query.get('api-version')).toBe('2024-10-21')
      expect(call?.headers['api-key']).toBe(AZURE_KEY)
      expect(call?.headers.authorization).toBeUndefined()
      const record = await recordOf(response.headers.get('gw-id'))
      expect(record.model).not.toBe('prod-4o')
      expect((await metaOf(response.headers.get('gw-id'))).model).not.toBe('prod-4o')
    })

    test('Mistral: a streamed call reaches it without stream_options, whatever the caller asked', async () => {
      const since = mistral.calls.length
      const stream = await openai.chat.completions.create({
        model: 'mistral/mistral-small-latest',
        messages: [{ role: 'user', content: 'hi' }],
        stream: true,
        stream_options: { include_usage: true },
      })
      for await (const _ of stream);
      const [call] = mistral.calls.slice(since)
      expect(call?.status).toBe(200)
      expect(call?.body.stream_options).toBeUndefined()
      expect(call?.body.model).toBe('mistral-small-latest')
    })

    test("Mistral: a conversation whose tool calls another provider named (OpenAI's, Anthropic's ids) reaches it with ids of nine letters and digits, each call still paired with its result", async () => {
      const conversations = [
        {
          via: 'openai',
          send: () =>
            openai.chat.completions.create({
              model: 'mistral/mistral-small-latest',
              tools: OPENAI_TOOLS,
              messages: [
                { role: 'user', content: 'Weather in Paris and Rome?' },
                {
                  role: 'assistant',
                  content: null,
                  tool_calls: CITIES.map((city, n) => ({
                    id: `call_${'Xy'.repeat(10)}${n}`,
                    type: 'function' as const,
                    function: { name: 'get_weather', arguments: JSON.stringify(city) },
                  })),
                },
                ...CITIES.map((city, n) => ({
                  role: 'tool' as const,
                  tool_call_id: `call_${'Xy'.repeat(10)}${n}`,
                  content: JSON.stringify({ ...city, celsius: 21 }),
                })),
              ],
            }),
        },
        {
          via: 'anthropic',
          send: () =>
            anthropic.messages.create({
              model: 'mistral/mistral-small-latest',
              max_tokens: 64,
              tools: ANTHROPIC_TOOLS,
              messages: [
                { role: 'user', content: 'Weather in Paris and Rome?' },
                {
                  role: 'assistant',
                  content: CITIES.map((city, n) => ({
                    type: 'tool_use' as const,
                    id: `toolu_01${'Ab'.repeat(11)}${n}`,
                    name: 'get_weather',
                    input: city,
                  })),
                },
                {
                  role: 'user',
                  content: CITIES.map((city, n) => ({
                    type: 'tool_result' as const,
                    tool_use_id: `toolu_01${'Ab'.repeat(11)}${n}`,
                    content: JSON.stringify({ ...city, celsius: 21 }),
                  })),
                },
              ],
            }),
        },
      ]
      for (const conversation of conversations) {
        const since = mistral.calls.length
        await conversation.send()
        const [call] = mistral.calls.slice(since)
        expect({ via: conversation.via, status: call?.status }).toEqual({ via: conversation.via, status: 200 })
        const messages = call?.body.messages as Array<{ tool_calls?: Array<{ id: string }>; tool_call_id?: string }>
        const callIds = messages.flatMap((message) => message.tool_calls?.map((one) => one.id) ?? [])
        const resultIds = messages.flatMap((message) => (message.tool_call_id ? [message.tool_call_id] : []))
        expect(callIds).toHaveLength(2)
        for (const id of callIds) expect(id).toMatch(/^[a-zA-Z0-9]{9}$/)
        expect(new Set(callIds).size).toBe(2)
        expect(resultIds).toEqual(callIds)
        expect(toolTurnSent(mistral)).toEqual(
          CITIES.map((city, n) => ({ ...city, answer: JSON.stringify({ ...city, celsius: 21 }), n })),
        )
      }
    })

    test("no vendor ever received the caller's gw key", () => {
      for (const fake of [bedrock, azure, mistral])
        for (const call of fake.calls) expect(JSON.stringify(call.headers)).not.toContain(org.apiKey)
    })
  })

  describe('Bedrock specifics', () => {
    test("an Anthropic caller reaches Claude through InvokeModel, untranslated: its body as written (Bedrock's version in it, the model in the path), its betas in the body, signed", async () => {
      const since = bedrock.calls.length
      const body = {
        model: `bedrock/${BEDROCK_MODEL}`,
        max_tokens: 64,
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        messages: [{ role: 'user', content: 'hi' }],
      }
      const betas = { 'anthropic-beta': 'prompt-caching-2024-07-31, token-efficient-tools-2025-02-19' }
      const whole = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json', ...betas },
        body: JSON.stringify(body),
      })
      expect(whole.status).toBe(200)
      expect(whole.headers.get('gw-gateway-mode')).toBe('passthrough')
      const message = (await whole.json()) as Record<string, unknown>
      expect(message).toMatchObject({ type: 'message', model: INVOKE_SERVED_MODEL, stop_reason: 'end_turn' })
      expect(message.content).toEqual([{ type: 'text', text: BEDROCK_TEXT.join('') }])
      const sent = bedrock.calls.slice(since)[0]
      expect(sent?.path).toBe(`/model/${BEDROCK_MODEL.replace(':', '%3A')}/invoke`)
      expect(sent?.body).toEqual({
        anthropic_version: 'bedrock-2023-05-31',
        anthropic_beta: ['prompt-caching-2024-07-31', 'token-efficient-tools-2025-02-19'],
        max_tokens: 64,
        system: body.system,
        messages: body.messages,
      })
      // Priced as a call to the model called, with Claude's own usage.
      expect(await recordOf(whole.headers.get('gw-id'))).toMatchObject({
        provider: 'bedrock',
        gatewayMode: 'passthrough',
        promptTokens: USAGE.prompt,
        completionTokens: USAGE.completion,
        costNano: costAt(['anthropic', 'claude-sonnet-4-5'], plainUsage(USAGE.prompt, USAGE.completion)),
      })
    })

    test("streamed, the caller gets Claude's own events as server-sent events, without Bedrock's metrics; the record has the usage", async () => {
      const since = bedrock.calls.length
      const { response, events } = await rawStream('/v1/messages', {
        model: `bedrock/${BEDROCK_PROFILE}`,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
      })
      expect(response.headers.get('content-type')).toStartWith('text/event-stream')
      expect(bedrock.calls.slice(since)[0]?.path).toEndWith('/invoke-with-response-stream')
      expect(bedrock.calls.slice(since)[0]?.body).not.toHaveProperty('stream')
      expect(events.map((event) => event.event)).toEqual([
        'message_start',
        'content_block_start',
        ...BEDROCK_TEXT.map(() => 'content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ])
      for (const event of events) expect(JSON.parse(event.data)).toMatchObject({ type: event.event })
      expect(events.at(-1)?.data).toBe('{"type":"message_stop"}')
      expect(events.map((event) => event.data).join('')).not.toContain('amazon-bedrock')
      expect(await recordOf(response.headers.get('gw-id'))).toMatchObject({
        status: 'success',
        promptTokens: USAGE.prompt,
        completionTokens: USAGE.completion,
      })
    })

    test("Bedrock's refusal reaches an Anthropic caller in Anthropic's error shape; an OpenAI caller's call to the same Claude goes through Converse", async () => {
      const refused = await fetch(`${server.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${org.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({
          model: `bedrock/${BEDROCK_MODEL}`,
          max_tokens: 64,
          messages: [{ role: 'user', content: 'bedrock:throttle' }],
        }),
      })
      expect(refused.status).toBe(429)
      expect(await refused.json()).toEqual({
        type: 'error',
        error: { type: 'rate_limit_error', message: expect.stringContaining(BEDROCK_THROTTLE_MESSAGE) },
      })
      const since = bedrock.calls.length
      await openai.chat.completions.create({ model: `bedrock/${BEDROCK_MODEL}`, messages: [{ role: 'user', content: 'hi' }] })
      expect(bedrock.calls.slice(since)[0]?.path).toEndWith('/converse')
    })

    test('reasoning streams to an Anthropic caller as a thinking block with its signature, and goes back on the next turn as it came', async () => {
      const question: Anthropic.MessageParam = { role: 'user', content: 'Think, then use a tool. fake:thinking fake:tools-once' }
      const first = await anthropic.messages
        .stream({
          model: `bedrock/${BEDROCK_PROFILE}`,
          max_tokens: 2048,
          thinking: { type: 'enabled', budget_tokens: 1024 },
          tools: ANTHROPIC_TOOLS,
          messages: [question],
        })
        .finalMessage()
      expect(first.content[0]).toEqual({ type: 'thinking', thinking: BEDROCK_THINKING.join(''), signature: BEDROCK_SIGNATURE })
      const use = first.content.find((block) => block.type === 'tool_use')
      if (use?.type !== 'tool_use') throw new Error('no tool use')
      const since = bedrock.calls.length
      const answer = await anthropic.messages.create({
        model: `bedrock/${BEDROCK_PROFILE}`,
        max_tokens: 2048,
        thinking: { type: 'enabled', budget_tokens: 1024 },
        tools: ANTHROPIC_TOOLS,
        messages: [
          question,
          { role: 'assistant', content: first.content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: '21 C' }] },
        ],
      })
      expect(answer.content.at(-1)).toMatchObject({ type: 'text', text: BEDROCK_TEXT.join('') })
      // Claude through InvokeModel: the block goes back in Anthropic's own words, nothing translated.
      const next = bedrock.calls.slice(since)[0]
      expect(next?.path).toEndWith('/invoke')
      const sent = next?.body as { messages: Array<{ content: unknown[] }> }
      expect(sent.messages[1]?.content[0]).toEqual({
        type: 'thinking',
        thinking: BEDROCK_THINKING.join(''),
        signature: BEDROCK_SIGNATURE,
      })
    })

    test('cache reads and writes count in the prompt and are priced at their own rates', async () => {
      const { data, response } = await openai.chat.completions
        .create({ model: `bedrock/${BEDROCK_MODEL}`, messages: [{ role: 'user', content: 'hi fake:cache' }] })
        .withResponse()
      expect(data.usage).toMatchObject({ prompt_tokens: 6_000, prompt_tokens_details: { cached_tokens: 2_000 } })
      const record = await recordOf(response.headers.get('gw-id'))
      const usage = { promptTokens: 6_000, completionTokens: 500, cacheReadTokens: 2_000, cacheWriteTokens: 3_000 }
      expect(record).toMatchObject({ promptTokens: 6_000, cacheReadTokens: 2_000, cacheWriteTokens: 3_000 })
      expect(record.costNano).toBe(costAt(['anthropic', 'claude-sonnet-4-5'], usage) as number)
    })

    test('a model Bedrock does not serve is its 400 ValidationException, in the caller format with its message', async () => {
      const failure = await failureOf(() =>
        openai.chat.completions.create({
          model: 'bedrock/anthropic.claude-nonexistent-v1:0',
          messages: [{ role: 'user', content: 'hi' }],
        }),
      )
      expect(failure).toBeInstanceOf(OpenAI.BadRequestError)
      expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain('The provided model identifier is invalid.')
    })
  })

  describe('Azure specifics', () => {
    test('embeddings reach the deployment, base64 as the openai SDK asks', async () => {
      const since = azure.calls.length
      const embedded = await openai.embeddings.create({ model: 'azure/embed-small', input: 'hi' })
      expect(embedded.data[0]?.embedding).toEqual([0.25, -0.5, 0.125])
      expect(azure.calls.slice(since).map((call) => call.path)).toEqual(['/openai/deployments/embed-small/embeddings'])
    })

    test('a deployment the resource lacks is its 404 DeploymentNotFound, passed on; a name like `constructor` is no alias', async () => {
      const since = azure.calls.length
      for (const deployment of ['no-such-deployment', 'constructor']) {
        const failure = await failureOf(() =>
          openai.chat.completions.create({ model: `azure/${deployment}`, messages: [{ role: 'user', content: 'hi' }] }),
        )
        expect(failure).toBeInstanceOf(OpenAI.NotFoundError)
        expect((failure as InstanceType<typeof OpenAI.APIError>).code).toBe('DeploymentNotFound')
      }
      expect(azure.calls.slice(since).map((call) => call.path)).toEqual([
        '/openai/deployments/no-such-deployment/chat/completions',
        '/openai/deployments/constructor/chat/completions',
      ])
    })

    test("the content filter's 400 reaches an OpenAI caller as Azure sent it, an Anthropic caller in its format", async () => {
      const openaiFailure = await failureOf(() =>
        openai.chat.completions.create({ model: 'azure/prod-4o', messages: [{ role: 'user', content: 'azure:content-filter' }] }),
      )
      expect(openaiFailure).toBeInstanceOf(OpenAI.BadRequestError)
      const error = openaiFailure as InstanceType<typeof OpenAI.APIError>
      expect(error.code).toBe('content_filter')
      expect(error.error).toMatchObject({ innererror: { code: 'ResponsibleAIPolicyViolation' } })
      const anthropicFailure = await failureOf(() =>
        anthropic.messages.create({
          model: 'azure/prod-4o',
          max_tokens: 64,
          messages: [{ role: 'user', content: 'azure:content-filter' }],
        }),
      )
      expect(anthropicFailure).toBeInstanceOf(Anthropic.BadRequestError)
      expect((anthropicFailure as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
        type: 'error',
        error: { type: 'invalid_request_error', message: AZURE_FILTER_MESSAGE },
      })
    })
  })

  describe('fallback across families', () => {
    let chainCreated = false
    const ensureChain = async () => {
      if (chainCreated) return
      const created = await h.request('POST', '/v1/gateway/fallback-chains', {
        token: org.ownerSession,
        body: {
          name: 'azure, then bedrock',
          match: { model: 'resilient-chat' },
          steps: [{ model: 'azure/gpt-4o' }, { model: `bedrock/${BEDROCK_PROFILE}` }],
        },
      })
      expect(created.status).toBe(201)
      chainCreated = true
    }

    test('an Azure 429 falls back to Bedrock: one answer, both attempts in the metadata and the record', async () => {
      await ensureChain()
      const azureSince = azure.calls.length
      const bedrockSince = bedrock.calls.length
      const { data, response } = await openai.chat.completions
        .create({ model: 'resilient-chat', messages: [{ role: 'user', content: 'hi azure:rate-limit' }] })
        .withResponse()
      expect(data.choices).toHaveLength(1)
      expect(data.choices[0]?.message.content).toBe(BEDROCK_TEXT.join(''))
      expect(response.headers.get('gw-provider')).toBe('bedrock')
      expect(response.headers.get('gw-attempts')).toBe('2')
      expect(azure.calls.slice(azureSince).map((call) => call.status)).toEqual([429])
      expect(bedrock.calls.slice(bedrockSince).map((call) => call.status)).toEqual([200])
      const meta = await metaOf(response.headers.get('gw-id'))
      expect(meta.attempts?.map((attempt) => [attempt.provider, attempt.httpStatus])).toEqual([
        ['azure', 429],
        ['bedrock', 200],
      ])
      const record = await recordOf(response.headers.get('gw-id'))
      expect(record).toMatchObject({ provider: 'bedrock', status: 'success', promptTokens: 1_000 })
      expect(record.attempts).toHaveLength(2)
      expect(record.costNano).toBe(costAt(['anthropic', 'claude-sonnet-4-5'], plainUsage(1_000, 500)) as number)
    })

    test('streamed to an Anthropic caller: the stream is all Bedrock, nothing of the Azure failure in it', async () => {
      await ensureChain()
      const stream = anthropic.messages.stream({
        model: 'resilient-chat',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi azure:rate-limit' }],
      })
      const final = await stream.finalMessage()
      expect(final.content).toEqual([expect.objectContaining({ type: 'text', text: BEDROCK_TEXT.join('') })])
      const { response } = await stream.withResponse()
      expect(response.headers.get('gw-provider')).toBe('bedrock')
      expect(response.headers.get('gw-attempts')).toBe('2')
    })
  })

  describe("the vendors' errors", () => {
    test('a Bedrock ThrottlingException before the stream is a 429 rate-limit error with its message', async () => {
      const failure = await streamedChatFailure(`bedrock/${BEDROCK_MODEL}`, 'bedrock:throttle')
      expect(failure).toBeInstanceOf(OpenAI.RateLimitError)
      expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain(BEDROCK_THROTTLE_MESSAGE)
    })

    test("an in-stream throttlingException is an OpenAI stream's in-band error; the record says error", async () => {
      const { response, events } = await rawStream('/v1/chat/completions', {
        model: `bedrock/${BEDROCK_MODEL}`,
        messages: [{ role: 'user', content: 'bedrock:stream-throttle' }],
      })
      expect(response.status).toBe(200)
      const last = JSON.parse(events.at(-1)?.data ?? '{}') as { error?: { type?: string; code?: string; message?: string } }
      expect(last.error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' })
      expect(last.error?.message).toContain(BEDROCK_THROTTLE_MESSAGE)
      const record = await recordOf(response.headers.get('gw-id'))
      expect(record.status).toBe('error')
      expect(record.error).toContain('throttlingException')

      const failure = await streamedChatFailure(`bedrock/${BEDROCK_MODEL}`, 'bedrock:stream-throttle')
      expect(failure).toBeInstanceOf(OpenAI.APIError)
      expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain(BEDROCK_THROTTLE_MESSAGE)
    })

    test('an in-stream throttlingException reaches an Anthropic caller as its error event', async () => {
      const { events } = await rawStream('/v1/messages', {
        model: `bedrock/${BEDROCK_MODEL}`,
        max_tokens: 64,
        messages: [{ role: 'user', content: 'bedrock:stream-throttle' }],
      })
      expect(events.at(-1)?.event).toBe('error')
      expect(JSON.parse(events.at(-1)?.data ?? '{}')).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } })
    })

    test('a Bedrock stream that breaks off inside a frame is an in-band error, never a clean end', async () => {
      const { events, response } = await rawStream('/v1/chat/completions', {
        model: `bedrock/${BEDROCK_MODEL}`,
        messages: [{ role: 'user', content: 'bedrock:broken-stream' }],
      })
      const last = JSON.parse(events.at(-1)?.data ?? '{}') as { error?: unknown }
      expect(last.error).toBeDefined()
      expect(events.some((event) => event.data === '[DONE]')).toBe(false)
      expect((await recordOf(response.headers.get('gw-id'))).status).toBe('error')
    })

    test('a request Bedrock refuses to sign (a wrong secret in the connection) is a 403 in the caller format with its message', async () => {
      const wrong = await createHarness({
        dialect,
        providers: operatorConnections(bedrock, azure, mistral, 'not-the-secret-at-all'),
      })
      const owner = await wrong.org('growth')
      await wrong.services.organizations.addCredits(owner.orgId, 10)
      const served = serveHarness(wrong)
      try {
        const since = bedrock.calls.length
        const sdks = gatewaySdks(served.url, owner.apiKey)
        const failure = await failureOf(() =>
          sdks.openai.chat.completions.create({ model: `bedrock/${BEDROCK_MODEL}`, messages: [{ role: 'user', content: 'hi' }] }),
        )
        expect(failure).toBeInstanceOf(OpenAI.PermissionDeniedError)
        expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain(BEDROCK_SIGNATURE_MESSAGE)
        const refused = await failureOf(() =>
          sdks.anthropic.messages
            .stream({ model: `bedrock/${BEDROCK_MODEL}`, max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] })
            .finalMessage(),
        )
        expect(refused).toBeInstanceOf(Anthropic.PermissionDeniedError)
        expect((refused as InstanceType<typeof Anthropic.APIError>).error).toMatchObject({
          error: { type: 'permission_error', message: BEDROCK_SIGNATURE_MESSAGE },
        })
        expect(bedrock.calls.slice(since).map((call) => call.status)).toEqual([403, 403])
      } finally {
        await served.stop()
        await wrong.close()
      }
    })
  })

  describe('access rules on a connection', () => {
    test('a rule denying provider bedrock refuses before any request reaches Bedrock; Azure still serves', async () => {
      const own = await h.org('growth')
      await h.services.organizations.addCredits(own.orgId, 10)
      const rule = await h.request('POST', '/v1/governance/access-rules', {
        token: own.ownerSession,
        body: { subject: { kind: 'org' }, resource: { kind: 'provider', id: 'bedrock' }, effect: 'deny', reason: 'no AWS here' },
      })
      expect(rule.status).toBe(201)
      const client = gatewaySdks(server.url, own.apiKey).openai
      const since = bedrock.calls.length
      const failure = await failureOf(() =>
        client.chat.completions.create({ model: `bedrock/${BEDROCK_MODEL}`, messages: [{ role: 'user', content: 'hi' }] }),
      )
      expect(failure).toBeInstanceOf(OpenAI.PermissionDeniedError)
      expect((failure as InstanceType<typeof OpenAI.APIError>).message).toContain('no AWS here')
      expect(bedrock.calls.length).toBe(since)
      const allowed = await client.chat.completions.create({
        model: 'azure/prod-4o',
        messages: [{ role: 'user', content: 'hi' }],
      })
      expect(allowed.choices[0]?.message.content).toBe(AZURE_TEXT.join(''))
    })
  })
})

describe('the fakes refuse what the vendors refuse', () => {
  const keys: Record<string, AwsKey> = { [AWS_KEY_ID]: { secretAccessKey: AWS_SECRET, sessionToken: AWS_SESSION_TOKEN } }
  let bedrock: FakeBedrock
  let azure: FakeAzure
  let mistral: FakeMistral
  beforeAll(() => {
    bedrock = startFakeBedrock(keys)
    azure = startFakeAzure(AZURE_KEY)
    mistral = startFakeMistral(MISTRAL_KEY)
  })
  afterAll(() => Promise.all([bedrock.close(), azure.close(), mistral.close()]))

  const HI = { messages: [{ role: 'user', content: [{ text: 'hi' }] }] }

  /** A Converse call signed as gw signs it, changed by `options` (what is signed, or what is sent after signing). */
  async function converse(
    body: unknown,
    options: {
      secret?: string
      accessKeyId?: string
      sessionToken?: string | null
      region?: string
      now?: () => number
      sent?: string
      model?: string
      stream?: boolean
      api?: 'converse' | 'invoke'
    } = {},
  ): Promise<Response> {
    const path = bedrockModelPath(options.model ?? BEDROCK_PROFILE, options.stream ?? false, options.api)
    const text = JSON.stringify(body)
    const token = options.sessionToken === undefined ? AWS_SESSION_TOKEN : options.sessionToken
    const headers = signBedrockRequest({
      url: `${bedrock.url}${path}`,
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: text,
      credentials: {
        accessKeyId: options.accessKeyId ?? AWS_KEY_ID,
        secretAccessKey: options.secret ?? AWS_SECRET,
        ...(token === null ? {} : { sessionToken: token }),
      },
      region: options.region ?? 'us-east-1',
      now: options.now,
    })
    return fetch(`${bedrock.url}${path}`, { method: 'POST', headers, body: options.sent ?? text })
  }

  /** AWS's error answer: its code in x-amzn-errortype, its message in the body. */
  async function awsErrorOf(response: Response): Promise<{ status: number; code: string; message: string }> {
    const body = (await response.json()) as { message: string }
    return {
      status: response.status,
      code: (response.headers.get('x-amzn-errortype') ?? '').split(':')[0] ?? '',
      message: body.message,
    }
  }

  describe("Bedrock signatures, checked by signing again with AWS's signer", () => {
    test('a request signed as gw signs it is served', async () => {
      expect((await converse(HI)).status).toBe(200)
    })

    const REFUSED: Array<[string, Parameters<typeof converse>[1], string, string]> = [
      ['a wrong secret', { secret: 'not-the-secret' }, 'InvalidSignatureException', BEDROCK_SIGNATURE_MESSAGE],
      ['another region', { region: 'eu-west-1' }, 'InvalidSignatureException', 'Credential should be scoped to a valid region. '],
      [
        'a body changed after signing',
        { sent: JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'ho' }] }] }) },
        'InvalidSignatureException',
        BEDROCK_SIGNATURE_MESSAGE,
      ],
      ['a date ten minutes old', { now: () => Date.now() - 10 * 60_000 }, 'InvalidSignatureException', 'Signature expired'],
      [
        'an unknown access key',
        { accessKeyId: 'AKIAUNKNOWNKEY000001' },
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      ],
      [
        'temporary credentials without their session token',
        { sessionToken: null },
        'UnrecognizedClientException',
        'The security token included in the request is invalid.',
      ],
    ]
    for (const [name, options, code, message] of REFUSED)
      test(`${name}: 403 ${code}`, async () => {
        const refusal = await awsErrorOf(await converse(HI, options))
        expect(refusal).toMatchObject({ status: 403, code })
        expect(refusal.message).toStartWith(message)
      })

    test('an unsigned request: 403 MissingAuthenticationTokenException', async () => {
      const response = await fetch(`${bedrock.url}${bedrockModelPath(BEDROCK_PROFILE, false)}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(HI),
      })
      expect(await awsErrorOf(response)).toMatchObject({ status: 403, code: 'MissingAuthenticationTokenException' })
    })
  })

  describe('Converse bodies', () => {
    const toolConfig = { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: WEATHER_SCHEMA } } }] }
    const toolTurns = [
      { role: 'user', content: [{ text: 'weather?' }] },
      { role: 'assistant', content: [{ toolUse: { toolUseId: 'tooluse_1', name: 'get_weather', input: { city: 'Paris' } } }] },
    ]
    const INVALID: Array<[string, unknown, string]> = [
      ['a blank text block', { messages: [{ role: 'user', content: [{ text: ' ' }] }] }, 'is blank'],
      [
        'a conversation that opens with the assistant',
        { messages: [{ role: 'assistant', content: [{ text: 'hi' }] }] },
        'must start with a user message',
      ],
      ['two user turns in a row', { messages: [HI.messages[0], HI.messages[0]] }, 'must alternate'],
      ['a block with two members', { messages: [{ role: 'user', content: [{ text: 'a', image: {} }] }] }, 'exactly one'],
      ['a member Converse does not have', { ...HI, model: BEDROCK_PROFILE }, 'extraneous key [model]'],
      ['maxTokens 0', { ...HI, inferenceConfig: { maxTokens: 0 } }, 'greater than or equal to 1'],
      [
        'tool blocks without toolConfig',
        {
          messages: [
            ...toolTurns,
            { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_1', content: [{ text: '21' }] } }] },
          ],
        },
        'toolConfig field must be defined',
      ],
      [
        'a tool use left unanswered',
        { toolConfig, messages: [...toolTurns, { role: 'user', content: [{ text: 'well?' }] }] },
        'without `tool_result` blocks',
      ],
      [
        'a result for a tool use that never was',
        {
          toolConfig,
          messages: [
            ...toolTurns,
            { role: 'user', content: [{ toolResult: { toolUseId: 'tooluse_9', content: [{ text: '21' }] } }] },
          ],
        },
        'unexpected `tool_use_id`',
      ],
      [
        'a tool use id AWS does not allow',
        {
          toolConfig,
          messages: [
            toolTurns[0],
            { role: 'assistant', content: [{ toolUse: { toolUseId: 'call#1', name: 'get_weather', input: {} } }] },
            HI.messages[0],
          ],
        },
        'toolUseId must match',
      ],
    ]
    for (const [name, body, message] of INVALID)
      test(`${name}: 400 ValidationException`, async () => {
        const refusal = await awsErrorOf(await converse(body))
        expect(refusal).toMatchObject({ status: 400, code: 'ValidationException' })
        expect(refusal.message).toContain(message)
      })

    test('a model Bedrock does not serve: 400 ValidationException', async () => {
      expect(await awsErrorOf(await converse(HI, { model: 'anthropic.claude-nonexistent-v1:0' }))).toMatchObject({
        status: 400,
        code: 'ValidationException',
        message: 'The provided model identifier is invalid.',
      })
    })
  })

  describe("Claude's InvokeModel bodies", () => {
    const CLAUDE = { anthropic_version: 'bedrock-2023-05-31', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] }
    const INVALID: Array<[string, unknown, string]> = [
      ['a model in the body', { ...CLAUDE, model: 'claude-sonnet-4-5' }, 'extraneous key [model] is not permitted'],
      ['a stream key', { ...CLAUDE, stream: true }, 'extraneous key [stream] is not permitted'],
      ["Anthropic's API version instead of Bedrock's", { ...CLAUDE, anthropic_version: '2023-06-01' }, 'anthropic_version'],
      ['no max_tokens', { anthropic_version: CLAUDE.anthropic_version, messages: CLAUDE.messages }, 'required key [max_tokens]'],
      ['betas as a header-style string', { ...CLAUDE, anthropic_beta: 'prompt-caching-2024-07-31' }, 'anthropic_beta'],
    ]
    for (const [name, body, message] of INVALID)
      test(`${name}: 400 ValidationException`, async () => {
        const refusal = await awsErrorOf(await converse(body, { api: 'invoke' }))
        expect(refusal).toMatchObject({ status: 400, code: 'ValidationException' })
        expect(refusal.message).toContain(message)
      })

    test("a body as Bedrock takes it is answered with Claude's message", async () => {
      const response = await converse(CLAUDE, { api: 'invoke' })
      expect(response.status).toBe(200)
      expect(await response.json()).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' })
    })
  })

  describe('ConverseStream frames', () => {
    test('messageStart first, metadata last, a contentBlockStart only for the tool use, every payload padded', async () => {
      const response = await converse(
        {
          toolConfig: { tools: [{ toolSpec: { name: 'get_weather', inputSchema: { json: WEATHER_SCHEMA } } }] },
          messages: [{ role: 'user', content: [{ text: 'fake:tools' }] }],
        },
        { stream: true },
      )
      expect(response.headers.get('content-type')).toBe('application/vnd.amazon.eventstream')
      const frames = decodeFrames(new Uint8Array(await response.arrayBuffer()))
      expect(frames.map((frame) => frame.type)).toEqual([
        'messageStart',
        'contentBlockDelta',
        'contentBlockStop',
        'contentBlockStart',
        ...fragmentsOf(TOOL_ARGUMENTS[0] as string).map(() => 'contentBlockDelta'),
        'contentBlockStop',
        'messageStop',
        'metadata',
      ])
      expect(frames.every((frame) => typeof frame.payload.p === 'string')).toBe(true)
      expect(frames[3]?.payload).toMatchObject({ contentBlockIndex: 1, start: { toolUse: { name: 'get_weather' } } })
      const input = frames
        .filter((frame) => frame.type === 'contentBlockDelta' && frame.payload.contentBlockIndex === 1)
        .map((frame) => (frame.payload.delta as { toolUse: { input: string } }).toolUse.input)
      expect(input.join('')).toBe(TOOL_ARGUMENTS[0] as string)
      expect(frames.at(-2)?.payload).toMatchObject({ stopReason: 'tool_use' })
    })
  })

  describe('Azure OpenAI', () => {
    const chat = (
      path: string,
      headers: Record<string, string>,
      body: unknown = { messages: [{ role: 'user', content: 'hi' }] },
    ) =>
      fetch(`${azure.url}${path}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body: JSON.stringify(body),
      })
    const PATH = '/openai/deployments/prod-4o/chat/completions'
    const errorOf = async (response: Response) => ({
      status: response.status,
      ...((await response.json()) as { error: object }).error,
    })

    test('no api-version: 404 Resource not found; one Azure never shipped: 400', async () => {
      expect(await errorOf(await chat(PATH, { 'api-key': AZURE_KEY }))).toMatchObject({
        status: 404,
        message: 'Resource not found',
      })
      expect(await errorOf(await chat(`${PATH}?api-version=2031-01-01`, { 'api-key': AZURE_KEY }))).toMatchObject({ status: 400 })
    })

    test('no api-key, a wrong one, or a bearer token instead: 401', async () => {
      for (const headers of [{}, { 'api-key': 'wrong' }, { authorization: `Bearer ${AZURE_KEY}` }] as Record<string, string>[])
        expect((await chat(`${PATH}?api-version=2024-10-21`, headers)).status).toBe(401)
    })

    test('a deployment the resource lacks: 404 DeploymentNotFound', async () => {
      const response = await chat('/openai/deployments/gpt-4o/chat/completions?api-version=2024-10-21', { 'api-key': AZURE_KEY })
      expect(await errorOf(response)).toMatchObject({ status: 404, code: 'DeploymentNotFound' })
    })

    test('a tool message that answers no call: 400', async () => {
      const body = {
        messages: [
          { role: 'user', content: 'hi' },
          { role: 'tool', tool_call_id: 'call_1', content: '21' },
        ],
      }
      expect((await chat(`${PATH}?api-version=2024-10-21`, { 'api-key': AZURE_KEY }, body)).status).toBe(400)
    })

    test('a stream opens with a chunk of empty choices; its usage chunk comes only with include_usage', async () => {
      const streamed = async (options: Record<string, unknown>) => {
        const response = await chat(
          `${PATH}?api-version=2024-10-21`,
          { 'api-key': AZURE_KEY },
          {
            messages: [{ role: 'user', content: 'hi' }],
            stream: true,
            ...options,
          },
        )
        const parser = new SseParser()
        return [...parser.push(new Uint8Array(await response.arrayBuffer())), ...parser.end()]
          .filter((event) => event.data !== '[DONE]')
          .map(
            (event) =>
              JSON.parse(event.data) as { id: string; choices: unknown[]; usage?: unknown; prompt_filter_results?: unknown },
          )
      }
      const plain = await streamed({})
      expect(plain[0]).toMatchObject({ id: '', choices: [], prompt_filter_results: expect.any(Array) })
      expect(plain.some((chunk) => chunk.usage)).toBe(false)
      const counted = await streamed({ stream_options: { include_usage: true } })
      expect(counted.at(-1)).toMatchObject({ choices: [], usage: { prompt_tokens: 1_000 } })
    })
  })

  describe('Mistral', () => {
    const chat = (body: unknown, key = MISTRAL_KEY) =>
      fetch(`${mistral.baseUrl}/chat/completions`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` },
        body: JSON.stringify(body),
      })
    const hi = { model: 'mistral-small-latest', messages: [{ role: 'user', content: 'hi' }] }

    test('stream_options: 422 extra_forbidden', async () => {
      const response = await chat({ ...hi, stream: true, stream_options: { include_usage: true } })
      expect(response.status).toBe(422)
      expect(await response.json()).toMatchObject({
        message: { detail: [{ type: 'extra_forbidden', loc: ['body', 'stream_options'] }] },
      })
    })

    test('a stream reports its usage in its last chunk anyway, beside the finish reason', async () => {
      const parser = new SseParser()
      const response = await chat({ ...hi, stream: true })
      const events = [...parser.push(new Uint8Array(await response.arrayBuffer())), ...parser.end()]
      expect(events.at(-1)?.data).toBe('[DONE]')
      expect(JSON.parse(events.at(-2)?.data ?? '{}')).toMatchObject({
        choices: [{ finish_reason: 'stop' }],
        usage: { prompt_tokens: 1_000, completion_tokens: 500 },
      })
    })

    test('a tool call id that is not 9 letters and digits: 400; a wrong key: 401', async () => {
      const body = {
        ...hi,
        messages: [
          hi.messages[0],
          {
            role: 'assistant',
            content: '',
            tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'f', arguments: '{}' } }],
          },
          { role: 'tool', tool_call_id: 'toolu_01', content: '21' },
        ],
      }
      expect((await chat(body)).status).toBe(400)
      expect((await chat(hi, 'wrong')).status).toBe(401)
    })
  })
})
