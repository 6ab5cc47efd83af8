import { describe, expect, test } from 'bun:test'
import { crc32 } from 'node:zlib'
import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import { EventStreamDecoder, LARGEST_FRAME } from '../src/gateway/providers/bedrock/event-stream'
import { invokeBody, invokeClaudeFamily } from '../src/gateway/providers/bedrock/invoke'
import { failureFrame, streamFailureOf } from '../src/gateway/translate/errors'
import { type Translation, translationBetween } from '../src/gateway/translate/pairs'
import type { StreamTranslator } from '../src/gateway/translate/stream'
import type { AnthropicMessage, OpenAIChatCompletion } from '../src/gateway/translate/types'
import { encodeSse, type SseEvent } from '../src/util/sse'
import { errorFrame, eventFrame, exceptionFrame, joinFrames } from './support/bedrock'

const NOW = 1_700_000_000_000
const now = () => NOW

const fromOpenai = translationBetween('openai', 'bedrock', now) as Translation
const fromAnthropic = translationBetween('anthropic', 'bedrock', now) as Translation

const CLAUDE = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0'
const NOVA = 'amazon.nova-pro-v1:0'

/** Bodies arrive from callers unchecked; tests send some that the types would refuse, on purpose. */
const openaiRequest = (body: Record<string, unknown>) => fromOpenai.request({ model: CLAUDE, messages: [], ...body })
const anthropicRequest = (body: Record<string, unknown>) =>
  fromAnthropic.request({ model: CLAUDE, max_tokens: 1024, messages: [], ...body })

const weatherTool = {
  type: 'function',
  function: {
    name: 'get_weather',
    description: 'Current weather',
    parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
  },
}
const weatherSpec = {
  toolSpec: {
    name: 'get_weather',
    description: 'Current weather',
    inputSchema: { json: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
  },
}

/** Padding as Bedrock adds it to hide payload lengths; readers must not care. */
const P = 'abcdefghijklmnopqrstuvwxyzABCDEF'

/** A ConverseStream frame sequence: a reasoning block, text, and two tool calls whose input streams in pieces. */
const toolFrames = (): Uint8Array[] => [
  eventFrame('messageStart', { role: 'assistant', p: P }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'The user wants ' } }, p: P }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { text: 'weather.' } } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { signature: 'c2lnbmF0dXJl' } } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'Let me ' }, p: 'abc' }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 1, delta: { text: 'check.' } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 1 }),
  eventFrame('contentBlockStart', {
    contentBlockIndex: 2,
    start: { toolUse: { toolUseId: 'tooluse_a', name: 'get_weather' } },
    p: P,
  }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '' } } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: '{"city":' } } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: ' "Par' } } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 2, delta: { toolUse: { input: 'is"}' } } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 2 }),
  eventFrame('contentBlockStart', { contentBlockIndex: 3, start: { toolUse: { toolUseId: 'tooluse_b', name: 'get_time' } } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 3, delta: { toolUse: { input: '' } } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 3 }),
  eventFrame('messageStop', { stopReason: 'tool_use', p: P }),
  eventFrame('metadata', {
    usage: { inputTokens: 20, outputTokens: 30, totalTokens: 180, cacheReadInputTokens: 100, cacheWriteInputTokens: 30 },
    metrics: { latencyMs: 812 },
    p: P,
  }),
]

const textFrames = (): Uint8Array[] => [
  eventFrame('messageStart', { role: 'assistant' }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } }),
  eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: ', world' } }),
  eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
  eventFrame('messageStop', { stopReason: 'end_turn' }),
  eventFrame('metadata', { usage: { inputTokens: 7, outputTokens: 3, totalTokens: 10 }, metrics: { latencyMs: 100 } }),
]

/** A frame with one byte changed in transit. */
const flip = (bytes: Uint8Array, index: number) => {
  bytes[index] = (bytes[index] ?? 0) ^ 0xff
}

/** Bytes in chunks of the given sizes (the last chunk takes the rest), decoded as the relay would. */
function decode(bytes: Uint8Array, chunkSize = bytes.byteLength): SseEvent[] {
  const decoder = new EventStreamDecoder()
  const events: SseEvent[] = []
  for (let offset = 0; offset < bytes.byteLength; offset += chunkSize)
    events.push(...decoder.push(bytes.subarray(offset, offset + chunkSize)))
  return [...events, ...decoder.end()]
}

/** What a caller receives: Bedrock's frames decoded, translated, and written as the caller's SSE. */
const translated = (translator: StreamTranslator, frames: Uint8Array[], chunkSize = 7): SseEvent[] => [
  ...decode(joinFrames(frames), chunkSize).flatMap((event) => translator.push(event)),
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

describe('OpenAI caller, Bedrock provider: the request', () => {
  test('system messages, a conversation with inline images; the model and stream stay out of the body', () => {
    const { request, dropped } = openaiRequest({
      stream: true,
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: 'Answer in French.' },
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'data:image/jpeg;base64,/9j/4AAQ' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg' } },
          ],
        },
        { role: 'assistant', content: 'They differ.' },
        { role: 'user', content: 'How?' },
      ],
    })
    expect(request).toEqual({
      system: [{ text: 'You are terse.' }, { text: 'Answer in French.' }],
      messages: [
        {
          role: 'user',
          content: [
            { text: 'Compare these' },
            { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } },
            { image: { format: 'jpeg', source: { bytes: '/9j/4AAQ' } } },
          ],
        },
        { role: 'assistant', content: [{ text: 'They differ.' }] },
        { role: 'user', content: [{ text: 'How?' }] },
      ],
    })
    // Bedrock takes no image URLs: the one sent by URL is left out and named.
    expect(dropped).toEqual(['messages[].content[].image_url'])
  })

  test('an image of a type Bedrock does not read is named too', () => {
    const { request, dropped } = openaiRequest({
      messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/bmp;base64,Qk0=' } }] }],
    })
    expect(request.messages).toEqual([])
    expect(dropped).toEqual(['messages[].content[].image_url'])
  })

  test('limits, sampling and stop sequences go in inferenceConfig; what Bedrock has no field for is named', () => {
    const { request, dropped } = openaiRequest({
      messages: [{ role: 'user', content: 'Count' }],
      max_completion_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop: 'END',
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.1,
      response_format: { type: 'json_object' },
      user: 'user-42',
    })
    expect(request.inferenceConfig).toEqual({ maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] })
    expect(Object.keys(request).sort()).toEqual(['inferenceConfig', 'messages'])
    expect(dropped).toEqual(['frequency_penalty', 'presence_penalty', 'response_format', 'seed', 'user'])
  })

  test('tool calls become toolUse blocks, tool messages toolResult blocks that open the user turn', () => {
    const { request, dropped } = openaiRequest({
      messages: [
        { role: 'user', content: 'Weather and time in Paris?' },
        {
          role: 'assistant',
          content: 'Checking.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call/2 with spaces', type: 'function', function: { name: 'get_time', arguments: '' } },
          ],
        },
        { role: 'tool', tool_call_id: 'call_1', content: 'Sunny, 21°C' },
        { role: 'tool', tool_call_id: 'call/2 with spaces', content: '' },
        { role: 'user', content: 'Thanks!' },
      ],
      tools: [weatherTool, { type: 'function', function: { name: 'get_time', description: '' } }],
      tool_choice: 'required',
    })
    expect(request.messages).toEqual([
      { role: 'user', content: [{ text: 'Weather and time in Paris?' }] },
      {
        role: 'assistant',
        content: [
          { text: 'Checking.' },
          { toolUse: { toolUseId: 'call_1', name: 'get_weather', input: { city: 'Paris' } } },
          // Bedrock's id alphabet is narrower; the same id becomes the same text in the call and its result.
          { toolUse: { toolUseId: 'call_2_with_spaces', name: 'get_time', input: {} } },
        ],
      },
      {
        role: 'user',
        content: [
          { toolResult: { toolUseId: 'call_1', content: [{ text: 'Sunny, 21°C' }] } },
          { toolResult: { toolUseId: 'call_2_with_spaces', content: [] } },
          { text: 'Thanks!' },
        ],
      },
    ])
    expect(request.toolConfig).toEqual({
      tools: [weatherSpec, { toolSpec: { name: 'get_time', inputSchema: { json: { type: 'object', properties: {} } } } }],
      toolChoice: { any: {} },
    })
    expect(dropped).toEqual([])
  })

  test('tool_choice: auto, required and a named function have twins; none withholds the tools', () => {
    const configFor = (tool_choice: unknown, messages: unknown[] = [{ role: 'user', content: 'Hi' }]) =>
      openaiRequest({ messages, tools: [weatherTool], tool_choice })
    expect(configFor('auto').request.toolConfig).toEqual({ tools: [weatherSpec], toolChoice: { auto: {} } })
    expect(configFor('required').request.toolConfig).toEqual({ tools: [weatherSpec], toolChoice: { any: {} } })
    expect(configFor({ type: 'function', function: { name: 'get_weather' } }).request.toolConfig).toEqual({
      tools: [weatherSpec],
      toolChoice: { tool: { name: 'get_weather' } },
    })
    expect(configFor(undefined).request.toolConfig).toEqual({ tools: [weatherSpec] })
    const none = configFor('none')
    expect(none.request.toolConfig).toBeUndefined()
    expect(none.dropped).toEqual([])
  })

  test('tool_choice none over a conversation holding tool calls keeps the tools (Bedrock insists) and is named', () => {
    const { request, dropped } = openaiRequest({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'c1', content: 'Rain' },
      ],
      tools: [weatherTool],
      tool_choice: 'none',
    })
    expect(request.toolConfig).toEqual({ tools: [weatherSpec] })
    expect(dropped).toEqual(['tool_choice'])
  })

  test('parallel_tool_calls: false has no Bedrock field, and is named', () => {
    const { request, dropped } = openaiRequest({
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [weatherTool],
      parallel_tool_calls: false,
    })
    expect(request.toolConfig).toEqual({ tools: [weatherSpec] })
    expect(dropped).toEqual(['parallel_tool_calls'])
  })
})

describe('Anthropic caller, Bedrock provider: the request', () => {
  test('system prompt, images, tool use and results with their error status, thinking sent back with its signature', () => {
    const { request, dropped } = anthropicRequest({
      system: [
        { type: 'text', text: 'Be brief.' },
        { type: 'text', text: ' ' },
      ],
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'base64', media_type: 'image/webp', data: 'UklGRg==' } },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.png' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'Look closer.', signature: 'EqQBCkYIAxgC' },
            { type: 'redacted_thinking', data: 'EmwKAhgBEgy3' },
            { type: 'tool_use', id: 'toolu_01', name: 'zoom', input: { factor: 2 } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_01',
              is_error: true,
              content: [
                { type: 'text', text: 'Zoom failed' },
                { type: 'image', source: { type: 'base64', media_type: 'image/gif', data: 'R0lGOD==' } },
                { type: 'image', source: { type: 'url', url: 'https://example.com/b.png' } },
              ],
            },
          ],
        },
      ],
      tools: [{ name: 'zoom', description: 'Zooms in', input_schema: { type: 'object', properties: {} } }],
      tool_choice: { type: 'tool', name: 'zoom' },
    })
    expect(request).toEqual({
      system: [{ text: 'Be brief.' }],
      inferenceConfig: { maxTokens: 1024 },
      messages: [
        {
          role: 'user',
          content: [{ text: 'What is this?' }, { image: { format: 'webp', source: { bytes: 'UklGRg==' } } }],
        },
        {
          role: 'assistant',
          content: [
            { reasoningContent: { reasoningText: { text: 'Look closer.', signature: 'EqQBCkYIAxgC' } } },
            { reasoningContent: { redactedContent: 'EmwKAhgBEgy3' } },
            { toolUse: { toolUseId: 'toolu_01', name: 'zoom', input: { factor: 2 } } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              toolResult: {
                toolUseId: 'toolu_01',
                content: [{ text: 'Zoom failed' }, { image: { format: 'gif', source: { bytes: 'R0lGOD==' } } }],
                status: 'error',
              },
            },
          ],
        },
      ],
      toolConfig: {
        tools: [
          { toolSpec: { name: 'zoom', description: 'Zooms in', inputSchema: { json: { type: 'object', properties: {} } } } },
        ],
        toolChoice: { tool: { name: 'zoom' } },
      },
    })
    expect(dropped).toEqual(['messages[].content[].content[].type=image', 'messages[].content[].source.type=url'])
  })

  test('thinking without a signature cannot be checked by Claude, so it is named; the turns still alternate', () => {
    const { request, dropped } = anthropicRequest({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'assistant', content: [{ type: 'thinking', thinking: 'Hmm.' }] },
        { role: 'user', content: [{ type: 'text', text: '' }] },
        { role: 'user', content: 'Still there?' },
      ],
    })
    expect(request.messages).toEqual([{ role: 'user', content: [{ text: 'Hi' }, { text: 'Still there?' }] }])
    expect(dropped).toEqual(['messages[].content[].type=thinking'])
  })

  test('Claude takes top_k and the thinking budget through additionalModelRequestFields', () => {
    const { request, dropped } = anthropicRequest({
      messages: [{ role: 'user', content: 'Think' }],
      top_k: 40,
      thinking: { type: 'enabled', budget_tokens: 2048 },
      temperature: 1,
      stop_sequences: ['###'],
    })
    expect(request.additionalModelRequestFields).toEqual({ top_k: 40, thinking: { type: 'enabled', budget_tokens: 2048 } })
    expect(request.inferenceConfig).toEqual({ maxTokens: 1024, temperature: 1, stopSequences: ['###'] })
    expect(dropped).toEqual([])
    const off = anthropicRequest({
      model: `arn:aws:bedrock:us-east-1::foundation-model/anthropic.claude-3-haiku`,
      thinking: { type: 'disabled' },
    })
    expect(off.request.additionalModelRequestFields).toEqual({ thinking: { type: 'disabled' } })
  })

  test('other model families do not take them: they are named', () => {
    const { request, dropped } = anthropicRequest({
      model: NOVA,
      messages: [{ role: 'user', content: 'Think' }],
      top_k: 40,
      thinking: { type: 'enabled', budget_tokens: 2048 },
    })
    expect(request.additionalModelRequestFields).toBeUndefined()
    expect(dropped).toEqual(['thinking', 'top_k'])
  })

  test('disable_parallel_tool_use and metadata.user_id have no Bedrock field, and are named', () => {
    const { request, dropped } = anthropicRequest({
      messages: [{ role: 'user', content: 'Hi' }],
      tools: [{ name: 'zoom', input_schema: { type: 'object' } }],
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      metadata: { user_id: 'u-1' },
    })
    expect(request.toolConfig).toEqual({
      tools: [{ toolSpec: { name: 'zoom', inputSchema: { json: { type: 'object' } } } }],
      toolChoice: { auto: {} },
    })
    expect(dropped).toEqual(['metadata.user_id', 'tool_choice.disable_parallel_tool_use'])
  })
})

/** A Converse answer as Bedrock sends it: no id, no model. */
const converseAnswer = (fields: Record<string, unknown> = {}) => ({
  output: {
    message: {
      role: 'assistant',
      content: [
        { reasoningContent: { reasoningText: { text: 'The user wants weather.', signature: 'c2ln' } } },
        { reasoningContent: { redactedContent: 'ZW5jcnlwdGVk' } },
        { text: 'Checking ' },
        { text: 'now.' },
        { toolUse: { toolUseId: 'tooluse_01', name: 'get_weather', input: { city: 'Paris' } } },
      ],
    },
  },
  stopReason: 'tool_use',
  usage: { inputTokens: 10, outputTokens: 25, totalTokens: 170, cacheReadInputTokens: 100, cacheWriteInputTokens: 35 },
  metrics: { latencyMs: 420 },
  ...fields,
})

const STOP_REASONS = [
  ['end_turn', 'stop', 'end_turn'],
  ['tool_use', 'tool_calls', 'tool_use'],
  ['max_tokens', 'length', 'max_tokens'],
  ['stop_sequence', 'stop', 'stop_sequence'],
  ['guardrail_intervened', 'content_filter', 'end_turn'],
  ['content_filtered', 'content_filter', 'end_turn'],
  ['model_context_window_exceeded', 'length', 'max_tokens'],
  ['malformed_model_output', 'stop', 'end_turn'],
  ['malformed_tool_use', 'stop', 'end_turn'],
  ['something_new', 'stop', 'end_turn'],
] as const

describe('Bedrock answers', () => {
  test('to an OpenAI caller: text joined, reasoning as reasoning_content, toolUse as tool calls, cache in the prompt count', () => {
    const { body, dropped } = fromOpenai.response(converseAnswer())
    const completion = body as OpenAIChatCompletion
    expect(completion.id).toMatch(/^chatcmpl-[0-9a-f]{32}$/)
    expect(completion).toEqual({
      id: completion.id,
      object: 'chat.completion',
      created: 1_700_000_000,
      model: '',
      choices: [
        {
          index: 0,
          message: {
            role: 'assistant',
            content: 'Checking now.',
            refusal: null,
            tool_calls: [
              { id: 'tooluse_01', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            ],
            reasoning_content: 'The user wants weather.',
          },
          finish_reason: 'tool_calls',
          logprobs: null,
        },
      ],
      // inputTokens leaves the cached parts out: 10 + 100 + 35.
      usage: { prompt_tokens: 145, completion_tokens: 25, total_tokens: 170, prompt_tokens_details: { cached_tokens: 100 } },
    })
    expect(dropped).toEqual(['redacted_thinking'])
  })

  test('to an Anthropic caller: every block has its twin, and the usage splits the cache out again', () => {
    const message = fromAnthropic.response(converseAnswer()).body as AnthropicMessage
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/)
    expect((fromAnthropic.response(converseAnswer()).body as AnthropicMessage).id).not.toBe(message.id)
    expect(message).toEqual({
      id: message.id,
      type: 'message',
      role: 'assistant',
      model: '',
      content: [
        { type: 'thinking', thinking: 'The user wants weather.', signature: 'c2ln' },
        { type: 'redacted_thinking', data: 'ZW5jcnlwdGVk' },
        { type: 'text', text: 'Checking ' },
        { type: 'text', text: 'now.' },
        { type: 'tool_use', id: 'tooluse_01', name: 'get_weather', input: { city: 'Paris' } },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 10, output_tokens: 25, cache_read_input_tokens: 100, cache_creation_input_tokens: 35 },
    })
  })

  test('each answer gets an id of its own (Converse answers carry none)', () => {
    const ids = new Set([1, 2, 3].map(() => (fromOpenai.response(converseAnswer()).body as OpenAIChatCompletion).id))
    expect(ids.size).toBe(3)
  })

  test('every stop reason maps onto both callers’ own', () => {
    for (const [stopReason, finish, anthropicStop] of STOP_REASONS) {
      const plain = converseAnswer({ stopReason, output: { message: { role: 'assistant', content: [{ text: 'x' }] } } })
      expect([stopReason, (fromOpenai.response(plain).body as OpenAIChatCompletion).choices[0]?.finish_reason]).toEqual([
        stopReason,
        finish,
      ])
      expect([stopReason, (fromAnthropic.response(plain).body as AnthropicMessage).stop_reason]).toEqual([
        stopReason,
        anthropicStop,
      ])
    }
  })

  test('a broken body is an empty answer, never a crash', () => {
    for (const broken of [
      null,
      'text',
      { output: 'x', usage: 7 },
      { output: { message: { content: [null, 5, { toolUse: {} }] } } },
    ]) {
      const completion = fromOpenai.response(broken).body as OpenAIChatCompletion
      expect(completion.choices[0]?.message.content).toBe('')
      expect(completion.usage).toEqual({
        prompt_tokens: 0,
        completion_tokens: 0,
        total_tokens: 0,
        prompt_tokens_details: { cached_tokens: 0 },
      })
    }
  })
})

describe('the AWS event stream', () => {
  test('frames decode into events named by :event-type, the payload as data', () => {
    const events = decode(joinFrames(textFrames()))
    expect(events.map((event) => event.event)).toEqual([
      'messageStart',
      'contentBlockDelta',
      'contentBlockDelta',
      'contentBlockStop',
      'messageStop',
      'metadata',
    ])
    expect(JSON.parse(events[1]?.data ?? '')).toEqual({ contentBlockIndex: 0, delta: { text: 'Hello' } })
  })

  test('a stream split at every byte boundary, or fed one byte at a time, decodes the same', () => {
    const bytes = joinFrames(toolFrames())
    const whole = decode(bytes)
    expect(whole).toHaveLength(19)
    for (let split = 1; split < bytes.byteLength; split++) {
      const decoder = new EventStreamDecoder()
      const events = [...decoder.push(bytes.subarray(0, split)), ...decoder.push(bytes.subarray(split)), ...decoder.end()]
      if (JSON.stringify(events) !== JSON.stringify(whole)) throw new Error(`split at byte ${split} decoded differently`)
    }
    expect(decode(bytes, 1)).toEqual(whole)
  })

  test('a bad checksum throws, in the payload or in the prelude', () => {
    const payload = eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hello' } })
    flip(payload, payload.byteLength - 10)
    expect(() => decode(payload)).toThrow(/malformed event-stream frame: the message checksum does not match/)
    const prelude = eventFrame('messageStart', { role: 'assistant' })
    flip(prelude, 9)
    expect(() => decode(prelude)).toThrow(/malformed event-stream frame: the prelude checksum does not match/)
  })

  test('an impossible length throws as soon as the prelude is in, without waiting for the bytes it promises', () => {
    /** A frame's first 12 bytes: its length, its headers' length, and their checksum, as AWS writes it. */
    const prelude = (total: number, headers: number) => {
      const bytes = new Uint8Array(12)
      const view = new DataView(bytes.buffer)
      view.setUint32(0, total)
      view.setUint32(4, headers)
      view.setUint32(8, crc32(bytes.subarray(0, 8)))
      return bytes
    }
    expect(() => new EventStreamDecoder().push(prelude(LARGEST_FRAME + 1, 0))).toThrow(
      /malformed event-stream frame: it says it is 16777217 bytes long/,
    )
    expect(() => new EventStreamDecoder().push(prelude(8, 0))).toThrow(/8 bytes long/)
    expect(() => new EventStreamDecoder().push(prelude(100, 90))).toThrow(/90 bytes of headers in a frame of 100/)
    // A length whose checksum does not match is not believed, however plausible.
    const corrupt = prelude(100, 10)
    flip(corrupt, 3)
    expect(() => new EventStreamDecoder().push(corrupt)).toThrow(
      /malformed event-stream frame: the prelude checksum does not match/,
    )
  })

  test('a stream cut inside a frame does not end cleanly', () => {
    const bytes = joinFrames(textFrames())
    const decoder = new EventStreamDecoder()
    expect(decoder.push(bytes.subarray(0, bytes.byteLength - 5))).toHaveLength(5)
    expect(() => decoder.end()).toThrow(/ended inside a frame \(\d+ bytes of it received\)/)
  })

  test('exception frames become error events gw’s failure detection reads, with the kind each exception means', () => {
    const failureOf = (frame: Uint8Array) => {
      const [event] = decode(frame)
      return streamFailureOf(event as SseEvent)
    }
    expect(decode(exceptionFrame('throttlingException', 'Too many tokens'))).toEqual([
      {
        event: 'error',
        // Anthropic's own error event: an InvokeModel stream hands it to an Anthropic caller as it is.
        data: JSON.stringify({
          type: 'error',
          error: { type: 'rate_limit_error', message: 'throttlingException: Too many tokens' },
        }),
      },
    ])
    expect(failureOf(exceptionFrame('throttlingException', 'Too many tokens'))).toEqual({
      kind: 'rate_limit',
      message: 'throttlingException: Too many tokens',
    })
    expect(failureOf(exceptionFrame('serviceUnavailableException', 'Busy'))?.kind).toBe('overloaded')
    expect(failureOf(exceptionFrame('validationException', 'Bad input'))?.kind).toBe('invalid_request')
    expect(failureOf(exceptionFrame('modelTimeoutException', 'Slow'))?.kind).toBe('timeout')
    expect(failureOf(exceptionFrame('internalServerException', 'Oops'))?.kind).toBe('api_error')
    expect(failureOf(exceptionFrame('modelStreamErrorException', 'Model broke'))).toEqual({
      kind: 'api_error',
      message: 'modelStreamErrorException: Model broke',
    })
    expect(failureOf(errorFrame('InternalFailure', 'Something broke'))).toEqual({
      kind: 'api_error',
      message: 'InternalFailure: Something broke',
    })
    // As the relay writes it for each caller: the type its SDK raises for a rate limit.
    const failure = failureOf(exceptionFrame('throttlingException', 'Too many tokens'))
    if (!failure) throw new Error('no failure read')
    expect(JSON.parse(failureFrame('anthropic', failure).data)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'throttlingException: Too many tokens' },
    })
    expect(JSON.parse(failureFrame('openai-chunks', failure).data).error).toMatchObject({
      type: 'rate_limit_error',
      code: 'rate_limit_exceeded',
    })
  })

  test('an exception after some events: the events come first, then the error', () => {
    const frames = [...textFrames().slice(0, 2), exceptionFrame('throttlingException', 'Slow down')]
    expect(decode(joinFrames(frames), 5).map((event) => event.event)).toEqual(['messageStart', 'contentBlockDelta', 'error'])
  })
})

describe('Bedrock streams to an OpenAI caller', () => {
  test('text: a role chunk, content chunks, a finish chunk, the usage chunk asked for, then [DONE]', () => {
    const out = parsed(translated(fromOpenai.stream(true), textFrames()))
    const id = (out[0] as { id: string }).id
    expect(id).toMatch(/^chatcmpl-[0-9a-f]{32}$/)
    const base = { id, object: 'chat.completion.chunk', created: 1_700_000_000, model: '', usage: null }
    expect(out).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'Hello' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: ', world' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: 7, completion_tokens: 3, total_tokens: 10, prompt_tokens_details: { cached_tokens: 0 } },
      },
      '[DONE]',
    ])
  })

  test('tool calls numbered from 0, their input pieces after them', () => {
    const out = parsed(translated(fromOpenai.stream(false), toolFrames())) as Array<{
      choices: Array<{ delta: Record<string, unknown> }>
    }>
    const toolDeltas = out.flatMap((chunk) => (chunk.choices?.[0]?.delta.tool_calls as unknown[] | undefined) ?? [])
    expect(toolDeltas).toEqual([
      { index: 0, id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '' } },
      { index: 0, function: { arguments: '{"city":' } },
      { index: 0, function: { arguments: ' "Par' } },
      { index: 0, function: { arguments: 'is"}' } },
      { index: 1, id: 'tooluse_b', type: 'function', function: { name: 'get_time', arguments: '' } },
    ])
  })

  test('the OpenAI SDK reads the translated stream into the answer Bedrock gave, the arguments whole', async () => {
    const events = translated(fromOpenai.stream(true), toolFrames(), 3)
    const client = new OpenAI({ apiKey: 'test', fetch: serving(events) })
    const completion = await client.chat.completions
      .stream({ model: CLAUDE, messages: [{ role: 'user', content: 'Weather?' }] })
      .finalChatCompletion()
    const message = completion.choices[0]?.message
    expect(message?.content).toBe('Let me check.')
    expect(message?.tool_calls).toEqual([
      { id: 'tooluse_a', type: 'function', function: { name: 'get_weather', arguments: '{"city": "Paris"}' } },
      { id: 'tooluse_b', type: 'function', function: { name: 'get_time', arguments: '' } },
    ])
    const [weather] = (message?.tool_calls ?? []) as Array<{ function: { arguments: string } }>
    expect(JSON.parse(weather?.function.arguments ?? '')).toEqual({ city: 'Paris' })
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls')
    expect(completion.usage).toMatchObject({ prompt_tokens: 150, completion_tokens: 30, total_tokens: 180 })
    expect(completion.usage?.prompt_tokens_details?.cached_tokens).toBe(100)
  })

  test('a stream that stopped but lost its metadata is still closed by finish(), without usage it never got', () => {
    const translator = fromOpenai.stream(true)
    const out = parsed(translated(translator, textFrames().slice(0, -1)))
    expect(out.at(-3)).toMatchObject({ choices: [{ finish_reason: 'stop' }] })
    expect(out.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 0, completion_tokens: 0 } })
    expect(out.at(-1)).toBe('[DONE]')
    expect(translator.finish()).toEqual([])
  })

  test('a stream that never stopped gets no invented ending; unknown and broken events become nothing', () => {
    const translator = fromOpenai.stream(false)
    const out = translated(translator, textFrames().slice(0, 3))
    expect(parsed(out).at(-1)).toMatchObject({ choices: [{ delta: { content: ', world' } }] })
    expect(translator.push({ event: 'contentBlockDelta', data: '{not json' })).toEqual([])
    expect(translator.push({ event: 'somethingNew', data: '{}' })).toEqual([])
    expect(translator.push({ data: '{"contentBlockIndex":0}' })).toEqual([])
    expect(translator.finish()).toEqual([])
  })
})

describe('Bedrock streams to an Anthropic caller', () => {
  test('the full Anthropic event sequence: thinking with its signature, text, tool use, usage in message_delta', () => {
    const out = translated(fromAnthropic.stream(false), toolFrames())
    expect(out.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    const events = parsed(out)
    expect(events[1]).toEqual({
      type: 'content_block_start',
      index: 0,
      content_block: { type: 'thinking', thinking: '', signature: '' },
    })
    expect(events[4]).toEqual({
      type: 'content_block_delta',
      index: 0,
      delta: { type: 'signature_delta', signature: 'c2lnbmF0dXJl' },
    })
    expect(events.at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 30, input_tokens: 20, cache_read_input_tokens: 100 },
    })
  })

  test('the Anthropic SDK reads the translated stream into the answer Bedrock gave, the inputs whole', async () => {
    const events = translated(fromAnthropic.stream(false), toolFrames(), 11)
    const client = new Anthropic({ apiKey: 'test', fetch: serving(events) })
    const message = await client.messages
      .stream({ model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] })
      .finalMessage()
    expect(message.id).toMatch(/^msg_[0-9a-f]{32}$/)
    expect(message.content).toEqual([
      { type: 'thinking', thinking: 'The user wants weather.', signature: 'c2lnbmF0dXJl' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'tooluse_a', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'tooluse_b', name: 'get_time', input: {} },
    ] as unknown as typeof message.content)
    expect(message.stop_reason).toBe('tool_use')
    expect(message.usage).toMatchObject({ output_tokens: 30, input_tokens: 20, cache_read_input_tokens: 100 })
  })

  test('redacted reasoning streams as a redacted_thinking block', () => {
    const out = parsed(
      translated(fromAnthropic.stream(false), [
        eventFrame('messageStart', { role: 'assistant' }),
        eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { reasoningContent: { redactedContent: 'ZW5j' } } }),
        eventFrame('contentBlockStop', { contentBlockIndex: 0 }),
        eventFrame('messageStop', { stopReason: 'end_turn' }),
        eventFrame('metadata', { usage: { inputTokens: 1, outputTokens: 1, totalTokens: 2 }, metrics: { latencyMs: 1 } }),
      ]),
    )
    expect(out[1]).toEqual({ type: 'content_block_start', index: 0, content_block: { type: 'redacted_thinking', data: 'ZW5j' } })
  })

  test('each Bedrock stop reason reaches the caller as its own', () => {
    for (const [stopReason, , anthropicStop] of STOP_REASONS) {
      const frames = [...textFrames().slice(0, 4), eventFrame('messageStop', { stopReason }), textFrames()[5] as Uint8Array]
      const out = parsed(translated(fromAnthropic.stream(false), frames))
      expect([stopReason, out.at(-2)]).toMatchObject([stopReason, { delta: { stop_reason: anthropicStop } }])
    }
  })

  test('a stream that stopped but lost its metadata is still closed by finish()', () => {
    const translator = fromAnthropic.stream(false)
    const out = translated(translator, textFrames().slice(0, -1))
    expect(out.slice(-2).map((event) => event.event)).toEqual(['message_delta', 'message_stop'])
    expect(translator.finish()).toEqual([])
  })
})

describe("Claude's InvokeModel: the body and the stream", () => {
  const chunk = (payload: unknown) => eventFrame('chunk', { bytes: Buffer.from(JSON.stringify(payload)).toString('base64') })

  test("the caller's body without model and stream, Bedrock's version over any the caller set, its betas as a list", () => {
    const body = JSON.stringify({ model: 'x', stream: true, anthropic_version: '2023-06-01', max_tokens: 9, messages: [] })
    expect(JSON.parse(invokeBody(body, new Headers({ 'anthropic-beta': ' a-1 ,, b-2 ' })))).toEqual({
      anthropic_version: 'bedrock-2023-05-31',
      anthropic_beta: ['a-1', 'b-2'],
      max_tokens: 9,
      messages: [],
    })
    expect(JSON.parse(invokeBody(body, new Headers()))).not.toHaveProperty('anthropic_beta')
  })

  test("each chunk becomes Claude's own event; Bedrock's metrics are left out; a broken chunk is a malformed stream", () => {
    const decoder = invokeClaudeFamily.eventParser()
    const events = decoder.push(
      joinFrames([
        chunk({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 3 } } }),
        chunk({ type: 'message_stop', 'amazon-bedrock-invocationMetrics': { inputTokenCount: 3 } }),
      ]),
    )
    expect(events).toEqual([
      {
        event: 'message_start',
        data: JSON.stringify({ type: 'message_start', message: { id: 'm', usage: { input_tokens: 3 } } }),
      },
      { event: 'message_stop', data: '{"type":"message_stop"}' },
    ])
    expect(() => invokeClaudeFamily.eventParser().push(eventFrame('chunk', { other: 1 }))).toThrow(/a chunk without its bytes/)
    expect(() => invokeClaudeFamily.eventParser().push(chunk({ no: 'type' }))).toThrow(/holds no Anthropic event/)
    expect(() =>
      invokeClaudeFamily.eventParser().push(eventFrame('chunk', { bytes: Buffer.from('not json').toString('base64') })),
    ).toThrow(/holds no Anthropic event/)
    // An exception frame stays the error event Anthropic's SDK raises.
    expect(invokeClaudeFamily.eventParser().push(exceptionFrame('throttlingException', 'Slow down'))[0]?.event).toBe('error')
  })
})
