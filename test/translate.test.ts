import { describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { type Translation, translationBetween } from '../src/gateway/translate/pairs'
import type { StreamTranslator } from '../src/gateway/translate/stream'
import type {
  AnthropicMessage,
  AnthropicMessagesRequest,
  OpenAIChatCompletion,
  OpenAIChatRequest,
} from '../src/gateway/translate/types'
import { encodeSse, type SseEvent } from '../src/util/sse'

const NOW = 1_700_000_000_000
const now = () => NOW

const between = (caller: 'openai' | 'anthropic', provider: 'openai' | 'anthropic'): Translation =>
  translationBetween(caller, provider, now) as Translation
const toAnthropic = between('openai', 'anthropic')
const toOpenai = between('anthropic', 'openai')

/** Each direction, typed as the formats it speaks. */
const chatRequestToMessages = (body: OpenAIChatRequest) => {
  const { request, dropped } = toAnthropic.request(body)
  return { request: request as AnthropicMessagesRequest, dropped }
}
const messagesResponseToChat = (message: unknown) => toAnthropic.response(message).body as OpenAIChatCompletion
const untranslatedBlocks = (message: unknown) => toAnthropic.response(message).dropped
const createMessagesToChatStream = ({ includeUsage }: { includeUsage: boolean }) => toAnthropic.stream(includeUsage)
const messagesRequestToChat = (body: AnthropicMessagesRequest) => {
  const { request, dropped } = toOpenai.request(body)
  return { request: request as OpenAIChatRequest, dropped }
}
const chatResponseToMessages = (completion: unknown) => toOpenai.response(completion).body as AnthropicMessage
const createChatToMessagesStream = () => toOpenai.stream(true)

/** Bodies arrive from callers unchecked; tests send some that the types would refuse, on purpose. */
const openaiBody = (body: Record<string, unknown>) => ({ model: 'claude-sonnet-4-5', messages: [], ...body }) as OpenAIChatRequest
const anthropicBody = (body: Record<string, unknown>) =>
  ({ model: 'gpt-4o', max_tokens: 1024, messages: [], ...body }) as AnthropicMessagesRequest

/** An Anthropic stream event as the provider sends it: the name twice, in `event:` and in `type`. */
const anthropicEvent = (type: string, fields: Record<string, unknown> = {}): SseEvent => ({
  event: type,
  data: JSON.stringify({ type, ...fields }),
})

/** An OpenAI chunk as the provider sends it, data only. */
const openaiChunk = (fields: Record<string, unknown>): SseEvent => ({
  data: JSON.stringify({ id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', ...fields }),
})
const choice = (delta: Record<string, unknown>, finish: string | null = null) => ({
  choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
})
const DONE: SseEvent = { data: '[DONE]' }

const run = (translator: StreamTranslator, events: SseEvent[]): SseEvent[] => [
  ...events.flatMap((event) => translator.push(event)),
  ...translator.finish(),
]
const parsed = (events: SseEvent[]): unknown[] =>
  events.map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data)))

/** Serves translated events to a real SDK, which checks them the way a caller's code would. */
const serving = (events: SseEvent[]) =>
  (async () =>
    new Response(new Blob(events.map((event) => encodeSse(event))), {
      headers: { 'content-type': 'text/event-stream' },
    })) as unknown as typeof fetch

describe('OpenAI caller, Anthropic provider: the request', () => {
  test('system and developer messages become the system prompt; max_tokens defaults without a warning', () => {
    const { request, dropped } = chatRequestToMessages(
      openaiBody({
        messages: [
          { role: 'system', content: 'You are terse.' },
          { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
          { role: 'user', content: 'Hello' },
        ],
      }),
    )
    expect(request).toEqual({
      model: 'claude-sonnet-4-5',
      max_tokens: 4096,
      system: [
        { type: 'text', text: 'You are terse.' },
        { type: 'text', text: 'Answer in French.' },
      ],
      messages: [{ role: 'user', content: 'Hello' }],
    })
    expect(dropped).toEqual([])
  })

  test('a single system message stays a plain string', () => {
    const { request } = chatRequestToMessages(
      openaiBody({
        messages: [
          { role: 'system', content: 'Be kind.' },
          { role: 'user', content: 'Hi' },
        ],
      }),
    )
    expect(request.system).toBe('Be kind.')
  })

  test('sampling, limits, stop, stream and user carry over', () => {
    const { request, dropped } = chatRequestToMessages(
      openaiBody({
        messages: [{ role: 'user', content: 'Count' }],
        max_tokens: 50,
        max_completion_tokens: 100,
        temperature: 0.2,
        top_p: 0.9,
        stop: 'END',
        stream: true,
        user: 'user-42',
      }),
    )
    expect(request).toMatchObject({
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop_sequences: ['END'],
      stream: true,
      metadata: { user_id: 'user-42' },
    })
    expect(dropped).toEqual([])
    expect(chatRequestToMessages(openaiBody({ stop: ['a', 'b'], max_tokens: 7 })).request).toMatchObject({
      stop_sequences: ['a', 'b'],
      max_tokens: 7,
    })
  })

  test('consecutive messages of one role merge so that user and assistant take turns; blank messages vanish', () => {
    const { request } = chatRequestToMessages(
      openaiBody({
        messages: [
          { role: 'user', content: 'First' },
          { role: 'user', content: [{ type: 'text', text: 'Second' }] },
          { role: 'assistant', content: ' \n' },
          { role: 'user', content: 'Third' },
          { role: 'assistant', content: 'Answer' },
        ],
      }),
    )
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'First' },
          { type: 'text', text: 'Second' },
          { type: 'text', text: 'Third' },
        ],
      },
      { role: 'assistant', content: 'Answer' },
    ])
  })

  test('images: data URLs are sent inline, http(s) URLs by reference, anything else is named', () => {
    const { request, dropped } = chatRequestToMessages(
      openaiBody({
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'Compare these' },
              { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
              { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'high' } },
              { type: 'image_url', image_url: { url: 'ftp://example.com/dog.jpg' } },
            ],
          },
        ],
      }),
    )
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Compare these' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' } },
        ],
      },
    ])
    expect(dropped).toEqual(['messages[].content[].image_url', 'messages[].content[].image_url.detail'])
  })

  test('tool calls become tool_use blocks, and consecutive tool results one user turn that opens with them', () => {
    const { request, dropped } = chatRequestToMessages(
      openaiBody({
        messages: [
          { role: 'user', content: 'Weather and time in Paris?' },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
              { id: 'call_2', type: 'function', function: { name: 'get_time', arguments: '' } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21°C' },
          { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:05' }] },
          { role: 'user', content: 'Thanks! Anything else?' },
        ],
        tools: [
          {
            type: 'function',
            function: {
              name: 'get_weather',
              description: 'Current weather',
              parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
              strict: true,
            },
          },
          { type: 'function', function: { name: 'get_time' } },
        ],
        tool_choice: 'required',
        parallel_tool_calls: false,
      }),
    )
    expect(request.messages).toEqual([
      { role: 'user', content: 'Weather and time in Paris?' },
      {
        role: 'assistant',
        content: [
          { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
          { type: 'tool_use', id: 'call_2', name: 'get_time', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'call_1', content: 'Sunny, 21°C' },
          { type: 'tool_result', tool_use_id: 'call_2', content: '14:05' },
          { type: 'text', text: 'Thanks! Anything else?' },
        ],
      },
    ])
    expect(request.tools).toEqual([
      {
        name: 'get_weather',
        description: 'Current weather',
        input_schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
        strict: true,
      },
      { name: 'get_time', input_schema: { type: 'object', properties: {} } },
    ])
    expect(request.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true })
    expect(dropped).toEqual([])
  })

  test('tool_choice maps onto its Anthropic twin', () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }]
    const choiceFor = (tool_choice: unknown) => chatRequestToMessages(openaiBody({ tools, tool_choice })).request.tool_choice
    expect(choiceFor('auto')).toEqual({ type: 'auto' })
    expect(choiceFor('none')).toEqual({ type: 'none' })
    expect(choiceFor('required')).toEqual({ type: 'any' })
    expect(choiceFor({ type: 'function', function: { name: 'lookup' } })).toEqual({ type: 'tool', name: 'lookup' })
    expect(choiceFor(undefined)).toBeUndefined()
  })

  test('fields Anthropic cannot honour are left out and named, sorted, once each', () => {
    const { request, dropped } = chatRequestToMessages(
      openaiBody({
        messages: [{ role: 'user', content: 'Hi' }],
        n: 3,
        logprobs: true,
        top_logprobs: 2,
        presence_penalty: 0.5,
        frequency_penalty: 0.1,
        seed: 7,
        response_format: { type: 'json_object' },
        logit_bias: { '50256': -100 },
        stream_options: { include_usage: true },
        audio: { voice: 'alloy', format: 'mp3' },
        modalities: ['text', 'audio'],
        reasoning_effort: 'low',
      }),
    )
    expect(dropped).toEqual([
      'audio',
      'frequency_penalty',
      'logit_bias',
      'logprobs',
      'modalities',
      'n',
      'presence_penalty',
      'reasoning_effort',
      'response_format',
      'seed',
      'top_logprobs',
    ])
    for (const field of dropped) expect(request).not.toHaveProperty(field)
  })

  test('values that ask for nothing more than the default, and nulls, are not warned about', () => {
    const { dropped } = chatRequestToMessages(
      openaiBody({
        n: 1,
        logprobs: false,
        presence_penalty: 0,
        frequency_penalty: 0,
        seed: null,
        temperature: null,
        parallel_tool_calls: true,
      }),
    )
    expect(dropped).toEqual([])
  })

  test('bad input is named, never a crash: unknown parts, roles, arguments and tools', () => {
    const { request, dropped } = chatRequestToMessages(
      openaiBody({
        messages: [
          null,
          { role: 'function', name: 'legacy', content: '42' },
          {
            role: 'user',
            name: 'alice',
            content: [
              { type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } },
              { type: 'file', file: { file_id: 'file-1' } },
              { type: 'text\nInjected: header', text: 'x' },
              7,
              { type: 'text', text: 'What did I say?' },
            ],
          },
          {
            role: 'assistant',
            tool_calls: [{ id: 'call_9', type: 'function', function: { name: 'f', arguments: '{not json' } }],
          },
        ],
        tools: [{ type: 'custom', custom: { name: 'grammar' } }, 'nonsense'],
        temperature: 'hot',
      }),
    )
    expect(request.messages).toEqual([
      { role: 'user', content: 'What did I say?' },
      { role: 'assistant', content: [{ type: 'tool_use', id: 'call_9', name: 'f', input: {} }] },
    ])
    expect(request.tools).toBeUndefined()
    expect(request.temperature).toBeUndefined()
    expect(dropped).toEqual([
      'messages[]',
      'messages[].content[].type=file',
      'messages[].content[].type=input_audio',
      'messages[].content[].type=unknown',
      'messages[].name',
      'messages[].role=function',
      'messages[].tool_calls[].function.arguments',
      'temperature',
      'tools[]',
      'tools[].type=custom',
    ])
  })

  test('a body without a message list still translates', () => {
    const { request, dropped } = chatRequestToMessages({ model: 'm', messages: 'hello' } as unknown as OpenAIChatRequest)
    expect(request.messages).toEqual([])
    expect(dropped).toEqual(['messages'])
  })

  test('stream_options.include_usage is honoured by the translated stream, so it is not named; other stream options are', () => {
    const chat = { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true }
    expect(chatRequestToMessages({ ...chat, stream_options: { include_usage: true } } as OpenAIChatRequest).dropped).toEqual([])
    const other = { ...chat, stream_options: { include_usage: true, include_obfuscation: false } }
    expect(chatRequestToMessages(other as unknown as OpenAIChatRequest).dropped).toEqual(['stream_options.include_obfuscation'])
  })
})

describe('OpenAI caller, Anthropic provider: the answer', () => {
  const message: AnthropicMessage = {
    id: 'msg_01',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5',
    content: [
      { type: 'thinking', thinking: 'The user wants weather.', signature: 'sig' },
      { type: 'text', text: 'Checking ' },
      { type: 'text', text: 'now.' },
      { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { city: 'Paris' } },
    ],
    stop_reason: 'tool_use',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 25, cache_read_input_tokens: 100, cache_creation_input_tokens: 5 },
  }

  test('text is joined, thinking is reasoning_content, tool_use becomes tool calls, cached tokens count as prompt tokens', () => {
    expect(messagesResponseToChat(message)).toEqual({
      id: 'chatcmpl-msg_01',
      object: 'chat.completion',
      created: 1_700_000_000,
      model: 'claude-sonnet-4-5',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Checking now.',
            refusal: null,
            tool_calls: [{ id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }],
            reasoning_content: 'The user wants weather.',
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      usage: { prompt_tokens: 115, completion_tokens: 25, total_tokens: 140, prompt_tokens_details: { cached_tokens: 100 } },
    })
  })

  test('redacted thinking cannot be carried, and is named; readable thinking is carried, so it is not', () => {
    const redacted = { ...message, content: [{ type: 'redacted_thinking', data: 'EncryptedBlob' }, ...message.content] }
    expect(untranslatedBlocks(redacted)).toEqual(['redacted_thinking'])
    expect(untranslatedBlocks(message)).toEqual([])
  })

  test('an answer made only of tool calls has null content', () => {
    const onlyTool = { ...message, content: [{ type: 'tool_use', id: 't', name: 'f', input: {} }] } as AnthropicMessage
    expect(messagesResponseToChat(onlyTool).choices[0]?.message.content).toBeNull()
  })

  test('stop reasons map onto finish reasons', () => {
    const finishFor = (stop_reason: string | null) =>
      messagesResponseToChat({ ...message, stop_reason }).choices[0]?.finish_reason
    expect(finishFor('end_turn')).toBe('stop')
    expect(finishFor('stop_sequence')).toBe('stop')
    expect(finishFor('max_tokens')).toBe('length')
    expect(finishFor('tool_use')).toBe('tool_calls')
    expect(finishFor('refusal')).toBe('content_filter')
    expect(finishFor('model_context_window_exceeded')).toBe('length')
    expect(finishFor('something_new')).toBe('stop')
  })
})

describe('OpenAI caller, Anthropic provider: the stream', () => {
  const start = anthropicEvent('message_start', {
    message: {
      id: 'msg_01',
      type: 'message',
      role: 'assistant',
      model: 'claude-sonnet-4-5',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 20, cache_read_input_tokens: 100, cache_creation_input_tokens: 0, output_tokens: 1 },
    },
  })
  const base = { id: 'chatcmpl-msg_01', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'claude-sonnet-4-5' }
  const textEvents = [
    start,
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent('ping'),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Hello' } }),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: ', world' } }),
    anthropicEvent('content_block_stop', { index: 0 }),
    anthropicEvent('message_delta', { delta: { stop_reason: 'end_turn', stop_sequence: null }, usage: { output_tokens: 5 } }),
    anthropicEvent('message_stop'),
  ]

  test('thinking streams as reasoning_content deltas before the text; redacted thinking is named as dropped', () => {
    const translator = createMessagesToChatStream({ includeUsage: false })
    const out = run(translator, [
      start,
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: 'Let me think.' } }),
      anthropicEvent('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: 'sig' } }),
      anthropicEvent('content_block_stop', { index: 0 }),
      anthropicEvent('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: 'Encrypted' } }),
      anthropicEvent('content_block_stop', { index: 1 }),
      ...textEvents.slice(1),
    ])
    const deltas = (parsed(out) as Array<{ choices?: Array<{ delta: Record<string, unknown> }> }>).map(
      (c) => c.choices?.[0]?.delta,
    )
    expect(deltas).toContainEqual({ reasoning_content: 'Let me think.' })
    expect(deltas.findIndex((d) => d?.reasoning_content)).toBeLessThan(deltas.findIndex((d) => d?.content === 'Hello'))
    expect(translator.dropped()).toEqual(['redacted_thinking'])
  })

  test('text: a role chunk, content chunks, a finish chunk, then [DONE]; pings vanish', () => {
    const out = run(createMessagesToChatStream({ includeUsage: false }), textEvents)
    expect(out.every((event) => event.event === undefined)).toBe(true)
    expect(parsed(out)).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: ', world' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      '[DONE]',
    ])
  })

  const toolEvents = [
    start,
    anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
    anthropicEvent('content_block_delta', { index: 0, delta: { type: 'text_delta', text: 'Let me check.' } }),
    anthropicEvent('content_block_stop', { index: 0 }),
    anthropicEvent('content_block_start', {
      index: 1,
      content_block: { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: {} },
    }),
    anthropicEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '' } }),
    anthropicEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '{"city": ' } }),
    anthropicEvent('content_block_delta', { index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } }),
    anthropicEvent('content_block_stop', { index: 1 }),
    anthropicEvent('message_delta', { delta: { stop_reason: 'tool_use', stop_sequence: null }, usage: { output_tokens: 30 } }),
    anthropicEvent('message_stop'),
  ]

  test('tool use: numbered tool-call deltas, and with usage asked for one usage chunk before [DONE]', () => {
    const out = run(createMessagesToChatStream({ includeUsage: true }), toolEvents)
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
      ...base,
      choices: [{ index: 0, delta, finish_reason: finish }],
      usage: null,
    })
    expect(parsed(out)).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Let me check.' }),
      chunk({ tool_calls: [{ index: 0, id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city": ' } }] }),
      chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      chunk({}, 'tool_calls'),
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: 120, completion_tokens: 30, total_tokens: 150, prompt_tokens_details: { cached_tokens: 100 } },
      },
      '[DONE]',
    ])
  })

  test('the OpenAI SDK reads the translated stream into the answer Anthropic gave', async () => {
    const events = run(createMessagesToChatStream({ includeUsage: true }), toolEvents)
    const client = new OpenAI({ apiKey: 'test', fetch: serving(events) })
    const completion = await client.chat.completions
      .stream({ model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Weather?' }] })
      .finalChatCompletion()
    expect(completion.choices[0]?.message.content).toBe('Let me check.')
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      { id: 'toolu_01', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
    ])
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls')
    expect(completion.usage?.total_tokens).toBe(150)
  })

  test('newer servers repeat the input side in message_delta; the latest counts win', () => {
    const events = [
      start,
      anthropicEvent('message_delta', {
        delta: { stop_reason: 'max_tokens', stop_sequence: null },
        usage: { input_tokens: 25, cache_read_input_tokens: null, output_tokens: 9 },
      }),
      anthropicEvent('message_stop'),
    ]
    const out = parsed(run(createMessagesToChatStream({ includeUsage: true }), events))
    expect(out.at(-3)).toMatchObject({ choices: [{ finish_reason: 'length' }] })
    expect(out.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 125, completion_tokens: 9, total_tokens: 134 } })
  })

  test('an error event becomes nothing, and a stream that never stopped gets no invented ending', () => {
    const translator = createMessagesToChatStream({ includeUsage: true })
    const events = [
      start,
      anthropicEvent('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }),
      anthropicEvent('error', { error: { type: 'overloaded_error', message: 'Overloaded' } }),
      { event: 'content_block_delta', data: '{not json' },
    ]
    const out = run(translator, events)
    expect(parsed(out)).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }], usage: null },
    ])
    expect(translator.finish()).toEqual([])
  })

  test('a stream that stopped but lost its message_stop is closed by finish()', () => {
    const translator = createMessagesToChatStream({ includeUsage: false })
    for (const event of textEvents.slice(0, -1)) translator.push(event)
    expect(translator.finish()).toEqual([DONE])
    expect(translator.finish()).toEqual([])
  })
})

describe('Anthropic caller, OpenAI provider: the request', () => {
  test('a conversation with system prompt, image, tool use and tool result', () => {
    const { request, dropped } = messagesRequestToChat(
      anthropicBody({
        system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }],
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: 'What is this?' },
              { type: 'image', source: { type: 'base64', media_type: 'image/jpeg', data: '/9j/4AAQ' } },
              { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
            ],
          },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Looks like a cat.', signature: 'sig' },
              { type: 'text', text: 'Let me look it up.' },
              { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'cat' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'tool_result', tool_use_id: 'toolu_1', content: 'A cat.' },
              { type: 'text', text: 'Thanks' },
            ],
          },
        ],
      }),
    )
    expect(request.messages).toEqual([
      { role: 'system', content: 'Be brief.' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
        ],
      },
      {
        role: 'assistant',
        content: 'Let me look it up.',
        tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } }],
      },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'A cat.' },
      { role: 'user', content: 'Thanks' },
    ])
    expect(dropped).toEqual(['messages[].content[].type=thinking', 'system[].cache_control'])
  })

  test('limits, sampling, stop sequences, user id and streaming carry over; streams ask for usage', () => {
    const { request, dropped } = messagesRequestToChat(
      anthropicBody({
        system: 'You are terse.',
        messages: [{ role: 'user', content: 'Hi' }],
        max_tokens: 300,
        temperature: 0.5,
        top_p: 0.8,
        stop_sequences: ['###'],
        metadata: { user_id: 'user-42' },
        stream: true,
      }),
    )
    expect(request).toEqual({
      model: 'gpt-4o',
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'user', content: 'Hi' },
      ],
      max_completion_tokens: 300,
      temperature: 0.5,
      top_p: 0.8,
      stop: ['###'],
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(dropped).toEqual([])
  })

  test('tools become functions and tool_choice its OpenAI twin', () => {
    const tools = [
      {
        name: 'lookup',
        description: 'Search',
        input_schema: { type: 'object', properties: { q: { type: 'string' } } },
        strict: true,
      },
    ]
    const { request } = messagesRequestToChat(
      anthropicBody({ tools, tool_choice: { type: 'auto', disable_parallel_tool_use: true } }),
    )
    expect(request.tools).toEqual([
      {
        type: 'function',
        function: {
          name: 'lookup',
          description: 'Search',
          parameters: { type: 'object', properties: { q: { type: 'string' } } },
          strict: true,
        },
      },
    ])
    expect(request.tool_choice).toBe('auto')
    expect(request.parallel_tool_calls).toBe(false)
    const choiceFor = (tool_choice: unknown) => messagesRequestToChat(anthropicBody({ tools, tool_choice })).request.tool_choice
    expect(choiceFor({ type: 'any' })).toBe('required')
    expect(choiceFor({ type: 'none' })).toBe('none')
    expect(choiceFor({ type: 'tool', name: 'lookup' })).toEqual({ type: 'function', function: { name: 'lookup' } })
  })

  test('fields and blocks OpenAI cannot honour are left out and named', () => {
    const { request, dropped } = messagesRequestToChat(
      anthropicBody({
        messages: [
          {
            role: 'user',
            content: [
              {
                type: 'tool_result',
                tool_use_id: 't1',
                is_error: true,
                content: [
                  { type: 'text', text: 'boom' },
                  { type: 'image', source: {} },
                ],
              },
              { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBER' } },
              { type: 'image', source: { type: 'file', file_id: 'file_1' } },
              { type: 'text', text: 'Why?', cache_control: { type: 'ephemeral' } },
            ],
          },
        ],
        tools: [
          { type: 'web_search_20250305', name: 'web_search', max_uses: 3 },
          { name: 'calc', input_schema: { type: 'object' }, cache_control: { type: 'ephemeral' } },
        ],
        top_k: 40,
        thinking: { type: 'enabled', budget_tokens: 2048 },
        service_tier: 'auto',
        container: 'ctr_1',
        mcp_servers: [],
      }),
    )
    expect(request.messages).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'boom' },
      { role: 'user', content: 'Why?' },
    ])
    expect(request.tools).toEqual([{ type: 'function', function: { name: 'calc', parameters: { type: 'object' } } }])
    expect(dropped).toEqual([
      'container',
      'mcp_servers',
      'messages[].content[].cache_control',
      'messages[].content[].content[].type=image',
      'messages[].content[].is_error',
      'messages[].content[].source.type=file',
      'messages[].content[].type=document',
      'service_tier',
      'thinking',
      'tools[].cache_control',
      'tools[].type=web_search_20250305',
      'top_k',
    ])
  })

  test('bad input is named, never a crash', () => {
    const { request, dropped } = messagesRequestToChat(
      anthropicBody({
        messages: [42, { role: 'system', content: 'x' }, { role: 'user', content: [null, { type: 'audio' }] }],
        stop_sequences: 'END',
      }),
    )
    expect(request.messages).toEqual([])
    expect(dropped).toEqual([
      'messages[]',
      'messages[].content[].type=audio',
      'messages[].content[].type=unknown',
      'messages[].role=system',
      'stop_sequences',
    ])
  })
})

describe('Anthropic caller, OpenAI provider: the answer', () => {
  const completion: OpenAIChatCompletion = {
    id: 'chatcmpl-abc',
    object: 'chat.completion',
    created: 1,
    model: 'gpt-4o',
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: 'Looking it up.',
          refusal: null,
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: '{"q":"cat"}' } },
            { id: 'call_2', type: 'function', function: { name: 'broken', arguments: '{"q":' } },
          ],
        },
        finish_reason: 'tool_calls',
        logprobs: null,
      },
    ],
    usage: { prompt_tokens: 150, completion_tokens: 20, total_tokens: 170, prompt_tokens_details: { cached_tokens: 100 } },
  }

  test('text and tool calls become blocks; cached tokens leave the input count', () => {
    expect(chatResponseToMessages(completion)).toEqual({
      id: 'msg_chatcmpl-abc',
      type: 'message',
      role: 'assistant',
      model: 'gpt-4o',
      content: [
        { type: 'text', text: 'Looking it up.' },
        { type: 'tool_use', id: 'call_1', name: 'lookup', input: { q: 'cat' } },
        { type: 'tool_use', id: 'call_2', name: 'broken', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 50, output_tokens: 20, cache_creation_input_tokens: 0, cache_read_input_tokens: 100 },
    })
  })

  test('finish reasons map onto stop reasons', () => {
    const textOnly = (finish_reason: string) =>
      chatResponseToMessages({
        ...completion,
        choices: [{ index: 0, message: { role: 'assistant', content: 'ok', refusal: null }, finish_reason, logprobs: null }],
      } as OpenAIChatCompletion).stop_reason
    expect(textOnly('stop')).toBe('end_turn')
    expect(textOnly('length')).toBe('max_tokens')
    expect(textOnly('content_filter')).toBe('end_turn')
    expect(textOnly('tool_calls')).toBe('tool_use')
    expect(textOnly('function_call')).toBe('tool_use')
  })

  test('a server that ends a tool call with "stop" still yields tool_use; a refusal is the text', () => {
    const stopped = chatResponseToMessages({
      ...completion,
      choices: [{ ...completion.choices[0], finish_reason: 'stop' }],
    } as OpenAIChatCompletion)
    expect(stopped.stop_reason).toBe('tool_use')
    const refused = chatResponseToMessages({
      ...completion,
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content: null, refusal: 'I cannot help.' },
          finish_reason: 'stop',
          logprobs: null,
        },
      ],
      usage: undefined,
    })
    expect(refused.content).toEqual([{ type: 'text', text: 'I cannot help.' }])
    expect(refused.usage).toEqual({
      input_tokens: 0,
      output_tokens: 0,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
    })
  })
})

describe('Anthropic caller, OpenAI provider: the stream', () => {
  const chunks = [
    openaiChunk({ ...choice({ role: 'assistant', content: '', refusal: null }), usage: null }),
    openaiChunk({ ...choice({ content: 'The weather' }), usage: null }),
    openaiChunk({ ...choice({ content: ' is:' }), usage: null }),
    openaiChunk({
      ...choice({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      usage: null,
    }),
    openaiChunk({ ...choice({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }), usage: null }),
    openaiChunk({ ...choice({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }), usage: null }),
    openaiChunk({
      ...choice({ tool_calls: [{ index: 1, id: 'call_b', type: 'function', function: { name: 'get_time', arguments: '{}' } }] }),
      usage: null,
    }),
    openaiChunk({ ...choice({}, 'tool_calls'), usage: null }),
    openaiChunk({
      choices: [],
      usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70, prompt_tokens_details: { cached_tokens: 30 } },
    }),
    DONE,
  ]

  test('the full Anthropic event sequence, with usage folded into message_delta', () => {
    const out = run(createChatToMessagesStream(), chunks)
    expect(out.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(parsed(out)).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_chatcmpl-abc',
          type: 'message',
          role: 'assistant',
          model: 'gpt-4o',
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'The weather' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: ' is:' } },
      { type: 'content_block_stop', index: 0 },
      {
        type: 'content_block_start',
        index: 1,
        content_block: { type: 'tool_use', id: 'call_a', name: 'get_weather', input: {} },
      },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '{"city":' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 2 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { output_tokens: 20, input_tokens: 20, cache_read_input_tokens: 30 },
      },
      { type: 'message_stop' },
    ])
  })

  test('the Anthropic SDK reads the translated stream into the answer OpenAI gave', async () => {
    const events = run(createChatToMessagesStream(), chunks)
    const client = new Anthropic({ apiKey: 'test', fetch: serving(events) })
    const message = await client.messages
      .stream({ model: 'gpt-4o', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] })
      .finalMessage()
    expect(message.content).toMatchObject([
      { type: 'text', text: 'The weather is:' },
      { type: 'tool_use', id: 'call_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'call_b', name: 'get_time', input: {} },
    ])
    expect(message.stop_reason).toBe('tool_use')
    expect(message.usage.output_tokens).toBe(20)
  })

  test('a plain answer: one text block, the finish reason as stop reason, and nothing more from finish() after [DONE]', () => {
    const translator = createChatToMessagesStream()
    const out = run(translator, [
      openaiChunk(choice({ role: 'assistant', content: 'Hi' })),
      openaiChunk(choice({}, 'length')),
      DONE,
    ])
    expect(parsed(out).slice(1)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { output_tokens: 0 } },
      { type: 'message_stop' },
    ])
    expect(translator.finish()).toEqual([])
  })

  test('a stream cut off before any finish reason gets no invented ending; error chunks become nothing', () => {
    const translator = createChatToMessagesStream()
    translator.push(openaiChunk(choice({ role: 'assistant', content: 'Partial' })))
    expect(translator.push({ data: JSON.stringify({ error: { message: 'server overloaded' } }) })).toEqual([])
    expect(translator.push({ data: 'not json' })).toEqual([])
    expect(translator.finish()).toEqual([])
  })

  test('a finish reason without [DONE] is closed by finish()', () => {
    const translator = createChatToMessagesStream()
    translator.push(openaiChunk(choice({ content: 'Done' }, 'stop')))
    expect(translator.finish().map((event) => event.event)).toEqual(['message_delta', 'message_stop'])
  })
})
