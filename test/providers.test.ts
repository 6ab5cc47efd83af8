import { describe, expect, test } from 'bun:test'
import type { OrgProviderKey } from '../src/directory/connections'
import type { OperatorProviders } from '../src/directory/providers'
import { anthropic, anthropicFamily } from '../src/gateway/providers/anthropic'
import { openaiCompatible, openaiFamily } from '../src/gateway/providers/openai-compatible'
import { ModelResolver, resolveModel } from '../src/gateway/providers/registry'

describe('the model registry', () => {
  const cases: Array<[string, string, string]> = [
    ['gpt-4o', 'openai', 'gpt-4o'],
    ['o3-mini', 'openai', 'o3-mini'],
    ['text-embedding-3-small', 'openai', 'text-embedding-3-small'],
    ['claude-sonnet-4-5-20250929', 'anthropic', 'claude-sonnet-4-5-20250929'],
    ['openai/llama3.1:8b', 'openai', 'llama3.1:8b'],
    ['openai/meta-llama/Llama-3-8B', 'openai', 'meta-llama/Llama-3-8B'],
    ['anthropic/claude-custom', 'anthropic', 'claude-custom'],
  ]
  for (const [requested, provider, model] of cases) {
    test(`${requested} -> ${provider} ${model}`, () => {
      const resolved = resolveModel(requested)
      expect([resolved.provider.name, resolved.model]).toEqual([provider, model])
    })
  }

  for (const bad of ['mystery', 'llama3', 'other/model', '']) {
    test(`${JSON.stringify(bad)} is refused with a message naming it`, () => {
      expect(() => resolveModel(bad)).toThrow(`unknown model ${JSON.stringify(bad)}`)
    })
  }
})

// The same answers whether the organisation's keys must be read or are in the cache already.
for (const cache of ['cold', 'warm'] as const)
  describe(`which provider serves a bare model name (${cache} key cache)`, () => {
    type Keys = Partial<Record<string, Array<{ settings: { models?: Record<string, string> } | null }>>>
    const resolverWith = (operator: Partial<OperatorProviders>, orgKeys: Keys = {}) =>
      new ModelResolver(
        { openai: { baseUrl: 'https://api.openai.com/v1' }, anthropic: { baseUrl: 'https://api.anthropic.com' }, ...operator },
        {
          keysFor: async (_orgId, provider) => (orgKeys[provider] ?? []) as OrgProviderKey[],
          cachedKeysFor: (_orgId, provider) => (cache === 'warm' ? ((orgKeys[provider] ?? []) as OrgProviderKey[]) : undefined),
        },
      )
    const providerFor = async (resolver: ModelResolver, model: string) => (await resolver.resolve('org', model)).provider.name
    const gemini = { apiKey: 'g', baseUrl: 'https://generativelanguage.googleapis.com' }
    const vertex = { apiKey: '{}', baseUrl: 'https://aiplatform.googleapis.com', project: 'p', location: 'global' }

    test('the maker when the operator configured it, another that serves the name when only that one is', async () => {
      expect(await providerFor(resolverWith({ gemini, vertex }), 'gemini-2.5-flash')).toBe('gemini')
      expect(await providerFor(resolverWith({ vertex }), 'gemini-2.5-flash')).toBe('vertex')
      // Nothing configured: the maker, whose call then says no key is configured.
      expect(await providerFor(resolverWith({}), 'gemini-2.5-flash')).toBe('gemini')
    })

    test("the organisation's own keys first, the maker's before the others'", async () => {
      expect(await providerFor(resolverWith({ gemini }, { vertex: [{ settings: null }] }), 'gemini-2.5-flash')).toBe('vertex')
      expect(
        await providerFor(resolverWith({}, { gemini: [{ settings: null }], vertex: [{ settings: null }] }), 'gemini-2.5-flash'),
      ).toBe('gemini')
    })

    test('Azure serves a bare name only where an alias maps it to a deployment', async () => {
      const azure = { apiKey: 'a', baseUrl: 'https://acme.openai.azure.com', models: { 'gpt-4o': 'prod-4o' } }
      const openaiKeyless = { openai: { baseUrl: 'https://api.openai.com/v1' } }
      expect(await providerFor(resolverWith({ ...openaiKeyless, azure }), 'gpt-4o')).toBe('azure')
      expect(await providerFor(resolverWith({ ...openaiKeyless, azure }), 'gpt-4o-mini')).toBe('openai')
      expect(
        await providerFor(resolverWith({}, { azure: [{ settings: { models: { 'gpt-4o-mini': 'mini' } } }] }), 'gpt-4o-mini'),
      ).toBe('azure')
    })

    test('a named provider is that one, whatever is configured; an unknown bare name is refused', async () => {
      const resolver = resolverWith({ gemini })
      expect(await providerFor(resolver, 'vertex/gemini-2.5-flash')).toBe('vertex')
      expect(await providerFor(resolver, 'openrouter/anthropic/claude-sonnet-4.5')).toBe('openrouter')
      expect((await resolver.resolve('org', 'openrouter/anthropic/claude-sonnet-4.5')).model).toBe('anthropic/claude-sonnet-4.5')
      await expect(resolver.resolve('org', 'llama3')).rejects.toThrow('unknown model "llama3"')
    })
  })

describe('usage as the providers report it', () => {
  test("a provider's nonsense counts become whole numbers within bounds, never a record the store refuses", () => {
    expect(
      openaiFamily.usageOf({
        usage: { prompt_tokens: 1.5e20, completion_tokens: -3, prompt_tokens_details: { cached_tokens: 2.7 } },
      }),
    ).toEqual({ promptTokens: 500_000_000, completionTokens: 0, cacheReadTokens: 2, cacheWriteTokens: 0 })
    expect(anthropicFamily.usageOf({ usage: { input_tokens: 'many', output_tokens: Number.NaN } })).toMatchObject({
      promptTokens: 0,
      completionTokens: 0,
    })
  })

  test('OpenAI: cached tokens are part of prompt_tokens', () => {
    expect(
      openaiFamily.usageOf({
        usage: { prompt_tokens: 1000, completion_tokens: 50, prompt_tokens_details: { cached_tokens: 400 } },
      }),
    ).toEqual({
      promptTokens: 1000,
      completionTokens: 50,
      cacheReadTokens: 400,
      cacheWriteTokens: 0,
    })
    expect(openaiFamily.usageOf({ usage: { input_tokens: 10, output_tokens: 5 } })).toMatchObject({
      promptTokens: 10,
      completionTokens: 5,
    })
    expect(openaiFamily.usageOf({ choices: [] })).toBeUndefined()
  })

  test('Anthropic: cache reads and writes are added to input_tokens', () => {
    expect(
      anthropicFamily.usageOf({
        usage: { input_tokens: 10, output_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 200 },
      }),
    ).toEqual({
      promptTokens: 310,
      completionTokens: 5,
      cacheReadTokens: 100,
      cacheWriteTokens: 200,
    })
  })

  test('Anthropic stream: message_start gives the input side, message_delta the final output count', () => {
    const usage = anthropicFamily.streamUsage()
    usage.push({
      event: 'message_start',
      data: JSON.stringify({
        message: { model: 'claude-x', usage: { input_tokens: 10, output_tokens: 1, cache_read_input_tokens: 5 } },
      }),
    })
    usage.push({ event: 'message_delta', data: JSON.stringify({ usage: { output_tokens: 42 } }) })
    expect(usage.result()).toEqual({ promptTokens: 15, completionTokens: 42, cacheReadTokens: 5, cacheWriteTokens: 0 })
    expect(usage.servedModel()).toBe('claude-x')
  })

  test('OpenAI stream: the usage chunk, and only it, is the injected one', () => {
    const usageChunk = { data: JSON.stringify({ choices: [], usage: { prompt_tokens: 3, completion_tokens: 4 } }) }
    const textChunk = { data: JSON.stringify({ choices: [{ delta: { content: 'x' } }] }) }
    expect(openaiFamily.isInjectedUsageEvent(usageChunk, false)).toBe(true)
    expect(openaiFamily.isInjectedUsageEvent(usageChunk, true)).toBe(false)
    expect(openaiFamily.isInjectedUsageEvent(textChunk, false)).toBe(false)
    const usage = openaiFamily.streamUsage()
    usage.push(textChunk)
    usage.push(usageChunk)
    usage.push({ data: '[DONE]' })
    expect(usage.result()).toMatchObject({ promptTokens: 3, completionTokens: 4 })
  })

  test("streaming chat asks for usage; the caller's own choice is remembered", () => {
    expect(openaiFamily.requestUsageInStream({ stream: true, messages: [] })).toEqual({
      body: { stream: true, messages: [], stream_options: { include_usage: true } },
      callerAskedForUsage: false,
    })
    expect(
      openaiFamily.requestUsageInStream({ stream: true, messages: [], stream_options: { include_usage: true } })
        .callerAskedForUsage,
    ).toBe(true)
  })

  const call = { model: 'm', stream: false, body: undefined, fetch }
  test('upstream URLs and credentials', async () => {
    const openaiCall = await openaiCompatible.upstream({
      ...call,
      path: '/v1/chat/completions',
      credentials: { apiKey: 'sk', baseUrl: 'http://127.0.0.1:8000/v1/' },
      callerHeaders: new Headers(),
    })
    expect(openaiCall.url).toBe('http://127.0.0.1:8000/v1/chat/completions')
    expect(openaiCall.headers.get('authorization')).toBe('Bearer sk')
    const anthropicCall = await anthropic.upstream({
      ...call,
      path: '/v1/messages',
      credentials: { apiKey: 'ak', baseUrl: 'https://api.anthropic.com' },
      callerHeaders: new Headers({ 'anthropic-beta': 'x', authorization: 'Bearer gw-sk-caller' }),
    })
    expect(anthropicCall.url).toBe('https://api.anthropic.com/v1/messages')
    expect(anthropicCall.headers.get('x-api-key')).toBe('ak')
    expect(anthropicCall.headers.get('anthropic-beta')).toBe('x')
    expect(anthropicCall.headers.get('authorization')).toBeNull()
  })
})
