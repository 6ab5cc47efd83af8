import { describe, expect, test } from 'bun:test'
import Anthropic from '@anthropic-ai/sdk'
import { FinishReason, FunctionCallingConfigMode, GoogleGenAI, type GenerateContentResponse as SdkResponse } from '@google/genai'
import OpenAI from 'openai'
import { anthropicMessages } from '../src/gateway/translate/anthropic-messages'
import type { Answer, Delta } from '../src/gateway/translate/canonical'
import { readFailure } from '../src/gateway/translate/errors'
import { gemini, usageOfGemini } from '../src/gateway/translate/gemini'
import type {
  GeminiGenerateContentRequest,
  GeminiGenerateContentResponse,
  GeminiPart,
  GeminiUsageMetadata,
} from '../src/gateway/translate/gemini-types'
import { openaiChat } from '../src/gateway/translate/openai-chat'
import { type Translation, translationBetween } from '../src/gateway/translate/pairs'
import type { StreamTranslator } from '../src/gateway/translate/stream'
import type { AnthropicMessage, OpenAIChatCompletion } from '../src/gateway/translate/types'
import { encodeSse, type SseEvent } from '../src/util/sse'

const NOW = 1_700_000_000_000
const now = () => NOW

const fromOpenai = translationBetween('openai', 'gemini', now) as Translation
const fromAnthropic = translationBetween('anthropic', 'gemini', now) as Translation

/** Bodies arrive from callers unchecked; tests send some that the types would refuse, on purpose. */
const openaiToGemini = (body: Record<string, unknown>) => {
  const { request, dropped } = fromOpenai.request({ model: 'gemini-2.5-flash', messages: [], ...body })
  return { request: request as GeminiGenerateContentRequest, dropped }
}
const anthropicToGemini = (body: Record<string, unknown>) => {
  const { request, dropped } = fromAnthropic.request({ model: 'gemini-2.5-flash', max_tokens: 1024, messages: [], ...body })
  return { request: request as GeminiGenerateContentRequest, dropped }
}

/** A chunk of a Gemini stream as the Gemini API sends it: a whole response with only the new parts. */
const geminiChunk = (fields: { parts?: GeminiPart[]; finishReason?: string; usage?: GeminiUsageMetadata }): SseEvent => ({
  data: JSON.stringify({
    candidates: [
      {
        content: { role: 'model', parts: fields.parts ?? [] },
        ...(fields.finishReason ? { finishReason: fields.finishReason } : {}),
        index: 0,
      },
    ],
    ...(fields.usage ? { usageMetadata: fields.usage } : {}),
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  }),
})

const run = (translator: StreamTranslator, events: SseEvent[]): SseEvent[] => [
  ...events.flatMap((event) => translator.push(event)),
  ...translator.finish(),
]
const parsed = (events: SseEvent[]): unknown[] =>
  events.map((event) => (event.data === '[DONE]' ? '[DONE]' : JSON.parse(event.data)))

const sseResponse = (events: SseEvent[]) =>
  new Response(new Blob(events.map((event) => encodeSse(event))), { headers: { 'content-type': 'text/event-stream' } })

/** Serves translated events to a real SDK, which checks them the way a caller's code would. */
const serving = (events: SseEvent[]) => (async () => sseResponse(events)) as unknown as typeof fetch

describe('OpenAI caller, Gemini provider: the request', () => {
  test('system and developer messages become systemInstruction, turns are user and model, and the body names no model', () => {
    const { request, dropped } = openaiToGemini({
      messages: [
        { role: 'system', content: 'You are terse.' },
        { role: 'developer', content: [{ type: 'text', text: 'Answer in French.' }] },
        { role: 'user', content: 'Hello' },
        { role: 'assistant', content: 'Bonjour' },
        { role: 'user', content: 'Ça va ?' },
      ],
    })
    expect(request).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Hello' }] },
        { role: 'model', parts: [{ text: 'Bonjour' }] },
        { role: 'user', parts: [{ text: 'Ça va ?' }] },
      ],
      systemInstruction: { parts: [{ text: 'You are terse.' }, { text: 'Answer in French.' }] },
    })
    expect(dropped).toEqual([])
  })

  test('images: data URLs go inline, URLs by reference with a type guessed from the extension; a URL of no known type is named', () => {
    const { request, dropped } = openaiToGemini({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Compare these' },
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.JPG?size=large' } },
            { type: 'image_url', image_url: { url: 'https://example.com/render' } },
            { type: 'image_url', image_url: { url: 'https://example.com/dance.gif' } },
          ],
        },
      ],
    })
    expect(request.contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'Compare these' },
          { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } },
          { fileData: { mimeType: 'image/jpeg', fileUri: 'https://example.com/cat.JPG?size=large' } },
        ],
      },
    ])
    // OpenAI's reader has no name of its own for this yet, so the canonical one is used.
    expect(dropped).toEqual(['messages[].content[].image_url'])
  })

  test('tool calls and results: each result gets the name of its call, its text as output, and both keep their ids', () => {
    const { request, dropped } = openaiToGemini({
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
        { role: 'tool', tool_call_id: 'call_1', content: '{"sky":"sunny","celsius":21}' },
        { role: 'tool', tool_call_id: 'call_2', content: [{ type: 'text', text: '14:05' }] },
        { role: 'user', content: 'Thanks!' },
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
    })
    expect(request).toEqual({
      contents: [
        { role: 'user', parts: [{ text: 'Weather and time in Paris?' }] },
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'get_weather', args: { city: 'Paris' }, id: 'call_1' } },
            { functionCall: { name: 'get_time', args: {}, id: 'call_2' } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { output: '{"sky":"sunny","celsius":21}' }, id: 'call_1' } },
            { functionResponse: { name: 'get_time', response: { output: '14:05' }, id: 'call_2' } },
            { text: 'Thanks!' },
          ],
        },
      ],
      tools: [
        {
          functionDeclarations: [
            {
              name: 'get_weather',
              description: 'Current weather',
              parametersJsonSchema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] },
            },
            { name: 'get_time', parametersJsonSchema: { type: 'object', properties: {} } },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY' } },
    })
    expect(dropped).toEqual(['parallel_tool_calls', 'tools[].function.strict'])
  })

  test('tool_choice maps onto functionCallingConfig', () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }]
    const configFor = (tool_choice: unknown) => openaiToGemini({ tools, tool_choice }).request.toolConfig
    expect(configFor('auto')).toEqual({ functionCallingConfig: { mode: 'AUTO' } })
    expect(configFor('none')).toEqual({ functionCallingConfig: { mode: 'NONE' } })
    expect(configFor('required')).toEqual({ functionCallingConfig: { mode: 'ANY' } })
    expect(configFor({ type: 'function', function: { name: 'lookup' } })).toEqual({
      functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] },
    })
    expect(configFor(undefined)).toBeUndefined()
  })

  test('every generation setting has its place in generationConfig; the end user has none and is named', () => {
    const schema = { type: 'object', properties: { celsius: { type: 'number' } }, required: ['celsius'] }
    const { request, dropped } = openaiToGemini({
      messages: [{ role: 'user', content: 'Weather?' }],
      max_completion_tokens: 300,
      temperature: 0.4,
      top_p: 0.9,
      stop: 'END',
      seed: 7,
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      response_format: { type: 'json_schema', json_schema: { name: 'weather', schema } },
      user: 'user-42',
      stream: true,
      stream_options: { include_usage: true },
    })
    expect(request.generationConfig).toEqual({
      maxOutputTokens: 300,
      temperature: 0.4,
      topP: 0.9,
      stopSequences: ['END'],
      seed: 7,
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    })
    // Streaming is the method (streamGenerateContent), not a field of the body.
    expect(Object.keys(request).sort()).toEqual(['contents', 'generationConfig'])
    expect(dropped).toEqual(['user'])
    expect(openaiToGemini({ response_format: { type: 'json_object' } }).request.generationConfig).toEqual({
      responseMimeType: 'application/json',
    })
  })

  test('a call Gemini sent without an id goes back without one, with its signature, and its result with it, paired by name', () => {
    const answer = {
      candidates: [
        {
          content: {
            role: 'model',
            parts: [{ functionCall: { name: 'lookup', args: { q: 'cat' } }, thoughtSignature: 'c2lnbmF0dXJl' }],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      modelVersion: 'gemini-2.5-flash',
      responseId: 'resp-1',
    }
    const completion = fromOpenai.response(answer).body as OpenAIChatCompletion
    const toolCall = completion.choices[0]?.message.tool_calls?.[0]
    expect(toolCall?.id).toBe('call_gw_resp-1_0__thought__c2lnbmF0dXJl')
    const { request, dropped } = openaiToGemini({
      messages: [
        { role: 'user', content: 'Cats?' },
        { role: 'assistant', content: null, tool_calls: [toolCall] },
        { role: 'tool', tool_call_id: toolCall?.id, content: 'A cat.' },
      ],
    })
    // The signature rode in the id, and goes back on the call's part.
    expect(request.contents.slice(1)).toEqual([
      { role: 'model', parts: [{ functionCall: { name: 'lookup', args: { q: 'cat' } }, thoughtSignature: 'c2lnbmF0dXJl' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { output: 'A cat.' } } }] },
    ])
    expect(dropped).toEqual([])
  })

  test('a result that answers no call in the conversation goes without a name, for Gemini to refuse', () => {
    const { request } = openaiToGemini({
      messages: [
        { role: 'user', content: 'Hi' },
        { role: 'tool', tool_call_id: 'call_lost', content: '' },
      ],
    })
    expect(request.contents).toEqual([
      {
        role: 'user',
        parts: [{ text: 'Hi' }, { functionResponse: { name: '', response: { output: '' }, id: 'call_lost' } }],
      },
    ])
  })
})

describe('Anthropic caller, Gemini provider: the request', () => {
  test('thinking, tool use, a failed tool result with an image, a URL image, top_k and the thinking budget', () => {
    const { request, dropped } = anthropicToGemini({
      system: 'Be brief.',
      max_tokens: 4096,
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'What is this?' },
            { type: 'image', source: { type: 'url', url: 'https://example.com/a.webp' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', thinking: 'A cat?', signature: 'EqQBCkgIAhABGAIiQ' },
            { type: 'text', text: 'Let me look.' },
            { type: 'tool_use', id: 'toolu_1', name: 'lookup', input: { q: 'cat' } },
          ],
        },
        {
          role: 'user',
          content: [
            {
              type: 'tool_result',
              tool_use_id: 'toolu_1',
              is_error: true,
              content: [
                { type: 'text', text: 'Timed out' },
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBOR' } },
              ],
            },
          ],
        },
      ],
      tools: [{ name: 'lookup', input_schema: { type: 'object', properties: { q: { type: 'string' } } } }],
      tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true },
      top_k: 40,
      temperature: 0.3,
      stop_sequences: ['###'],
      thinking: { type: 'enabled', budget_tokens: 2048 },
      metadata: { user_id: 'user-42' },
    })
    expect(request).toEqual({
      contents: [
        {
          role: 'user',
          parts: [{ text: 'What is this?' }, { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/a.webp' } }],
        },
        {
          role: 'model',
          parts: [{ text: 'Let me look.' }, { functionCall: { name: 'lookup', args: { q: 'cat' }, id: 'toolu_1' } }],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: { error: 'Timed out' }, id: 'toolu_1' } }] },
      ],
      systemInstruction: { parts: [{ text: 'Be brief.' }] },
      tools: [
        {
          functionDeclarations: [
            { name: 'lookup', parametersJsonSchema: { type: 'object', properties: { q: { type: 'string' } } } },
          ],
        },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
      generationConfig: {
        maxOutputTokens: 4096,
        temperature: 0.3,
        topK: 40,
        stopSequences: ['###'],
        thinkingConfig: { thinkingBudget: 2048, includeThoughts: true },
      },
    })
    expect(dropped).toEqual([
      'messages[].content[].content[].type=image',
      'messages[].content[].type=thinking',
      'metadata.user_id',
      'tool_choice.disable_parallel_tool_use',
    ])
  })

  test('thinking turned off is a budget of 0', () => {
    const { request } = anthropicToGemini({ thinking: { type: 'disabled' } })
    expect(request.generationConfig).toEqual({ maxOutputTokens: 1024, thinkingConfig: { thinkingBudget: 0 } })
  })
})

describe('Gemini provider: the answer', () => {
  const answer: GeminiGenerateContentResponse = {
    candidates: [
      {
        content: {
          role: 'model',
          parts: [
            { text: 'The user wants weather.', thought: true },
            { text: 'Checking ' },
            { text: 'now.' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2lnLTE=' },
            { functionCall: { name: 'get_time', args: {}, id: 'fc_2' } },
            { text: '', thoughtSignature: 'dGFpbA==' },
          ],
        },
        finishReason: 'STOP',
        index: 0,
      },
    ],
    usageMetadata: {
      promptTokenCount: 100,
      cachedContentTokenCount: 60,
      candidatesTokenCount: 20,
      thoughtsTokenCount: 30,
      totalTokenCount: 150,
    },
    modelVersion: 'gemini-2.5-flash',
    responseId: 'resp-1',
  }

  test('thoughts, text and calls with and without ids; thinking counts as output and cached tokens as prompt', () => {
    expect(gemini.readAnswer(answer)).toEqual({
      id: 'resp-1',
      model: 'gemini-2.5-flash',
      content: [
        { type: 'thinking', text: 'The user wants weather.' },
        { type: 'text', text: 'Checking ' },
        { type: 'text', text: 'now.' },
        { type: 'tool_call', id: 'call_gw_resp-1_0__thought__c2lnLTE', name: 'get_weather', arguments: { city: 'Paris' } },
        { type: 'tool_call', id: 'fc_2', name: 'get_time', arguments: {} },
      ],
      stop: 'tool_calls',
      usage: { promptTokens: 100, completionTokens: 50, cacheReadTokens: 60, cacheWriteTokens: 0 },
    })
  })

  test('to an OpenAI caller: joined text, reasoning_content, tool calls and usage', () => {
    expect(fromOpenai.response(answer)).toEqual({
      body: {
        id: 'chatcmpl-resp-1',
        object: 'chat.completion',
        created: 1_700_000_000,
        model: 'gemini-2.5-flash',
        choices: [
          {
            index: 0,
            message: {
              role: 'assistant',
              content: 'Checking now.',
              refusal: null,
              tool_calls: [
                {
                  id: 'call_gw_resp-1_0__thought__c2lnLTE',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
                { id: 'fc_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
              ],
              reasoning_content: 'The user wants weather.',
            },
            finish_reason: 'tool_calls',
            logprobs: null,
          },
        ],
        usage: { prompt_tokens: 100, completion_tokens: 50, total_tokens: 150, prompt_tokens_details: { cached_tokens: 60 } },
      },
      dropped: [],
    })
  })

  test('to an Anthropic caller: blocks in order, and the cached tokens out of input_tokens', () => {
    const message = fromAnthropic.response(answer).body as AnthropicMessage
    expect(message).toEqual({
      id: 'msg_resp-1',
      type: 'message',
      role: 'assistant',
      model: 'gemini-2.5-flash',
      content: [
        { type: 'thinking', thinking: 'The user wants weather.', signature: '' },
        { type: 'text', text: 'Checking ' },
        { type: 'text', text: 'now.' },
        { type: 'tool_use', id: 'call_gw_resp-1_0__thought__c2lnLTE', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'fc_2', name: 'get_time', input: {} },
      ],
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 40, output_tokens: 50, cache_creation_input_tokens: 0, cache_read_input_tokens: 60 },
    })
  })

  test('finish reasons: limits, filters of every kind, and anything else a plain end', () => {
    const stopFor = (finishReason: string | undefined, parts: GeminiPart[] = [{ text: 'ok' }]) =>
      gemini.readAnswer({ candidates: [{ content: { role: 'model', parts }, ...(finishReason ? { finishReason } : {}) }] }).stop
    expect(stopFor('STOP')).toBe('end')
    expect(stopFor('MAX_TOKENS')).toBe('length')
    for (const filtered of [
      'SAFETY',
      'RECITATION',
      'BLOCKLIST',
      'PROHIBITED_CONTENT',
      'SPII',
      'LANGUAGE',
      'IMAGE_SAFETY',
      'IMAGE_PROHIBITED_CONTENT',
      'IMAGE_RECITATION',
    ])
      expect(stopFor(filtered)).toBe('content_filter')
    for (const plain of ['OTHER', 'FINISH_REASON_UNSPECIFIED', 'MALFORMED_FUNCTION_CALL', 'NO_IMAGE', 'SOMETHING_NEW'])
      expect(stopFor(plain)).toBe('end')
    const call: GeminiPart[] = [{ functionCall: { name: 'f', args: {} } }]
    expect(stopFor('STOP', call)).toBe('tool_calls')
    expect(stopFor('MAX_TOKENS', call)).toBe('length')
    expect(stopFor(undefined)).toBeUndefined()
    const finishFor = (finishReason: string) =>
      (fromOpenai.response({ candidates: [{ content: { parts: [{ text: 'ok' }] }, finishReason }] }).body as OpenAIChatCompletion)
        .choices[0]?.finish_reason
    expect(finishFor('MAX_TOKENS')).toBe('length')
    expect(finishFor('RECITATION')).toBe('content_filter')
    expect(finishFor('OTHER')).toBe('stop')
  })

  test('a prompt blocked before any answer: no content, stop content_filter, and the prompt still counted', () => {
    const blocked = {
      promptFeedback: { blockReason: 'PROHIBITED_CONTENT' },
      usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
      modelVersion: 'gemini-2.5-flash',
      responseId: 'resp-b',
    }
    expect(gemini.readAnswer(blocked)).toEqual({
      id: 'resp-b',
      model: 'gemini-2.5-flash',
      content: [],
      stop: 'content_filter',
      usage: { promptTokens: 8, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 },
    })
    const completion = fromOpenai.response(blocked).body as OpenAIChatCompletion
    expect(completion.choices[0]).toMatchObject({ message: { content: '' }, finish_reason: 'content_filter' })
  })

  test("usage: Google's tool results count as input; counts without numbers (Vertex's early chunks) are no usage", () => {
    expect(usageOfGemini({ promptTokenCount: 10, toolUsePromptTokenCount: 5, candidatesTokenCount: 3 })).toEqual({
      promptTokens: 15,
      completionTokens: 3,
      cacheReadTokens: 0,
      cacheWriteTokens: 0,
    })
    expect(usageOfGemini({ trafficType: 'ON_DEMAND' })).toBeUndefined()
    expect(usageOfGemini(undefined)).toBeUndefined()
  })

  test("Vertex's candidates without an index are the first; bodies of the wrong shape read as empty", () => {
    expect(gemini.readAnswer({ candidates: [{ content: { parts: [{ text: 'hi' }] }, finishReason: 'STOP' }] }).content).toEqual([
      { type: 'text', text: 'hi' },
    ])
    expect(gemini.readAnswer('nonsense')).toEqual({ id: '', model: '', content: [], stop: undefined, usage: undefined })
    expect(
      gemini.readAnswer({ candidates: [{ index: 1, content: { parts: [{ text: 'second' }] } }, 7, { content: 'x' }] }).content,
    ).toEqual([])
  })
})

describe('Gemini provider: the stream', () => {
  const base = { id: 'chatcmpl-resp-1', object: 'chat.completion.chunk', created: 1_700_000_000, model: 'gemini-2.5-flash' }
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({
    ...base,
    choices: [{ index: 0, delta, finish_reason: finish }],
    usage: null,
  })
  const textEvents = [
    geminiChunk({ parts: [{ text: 'Hello' }], usage: { promptTokenCount: 20, candidatesTokenCount: 1, totalTokenCount: 21 } }),
    geminiChunk({
      parts: [{ text: ', world' }],
      usage: { promptTokenCount: 20, candidatesTokenCount: 3, thoughtsTokenCount: 10, totalTokenCount: 33 },
    }),
    geminiChunk({
      parts: [{ text: '!' }],
      finishReason: 'STOP',
      usage: { promptTokenCount: 20, candidatesTokenCount: 4, thoughtsTokenCount: 10, totalTokenCount: 34 },
    }),
  ]

  test('text to an OpenAI caller: the chunk with the finish reason ends the stream, as Gemini sends no last event', () => {
    const translator = fromOpenai.stream(true)
    const out = run(translator, textEvents)
    expect(out.every((event) => event.event === undefined)).toBe(true)
    expect(parsed(out)).toEqual([
      chunk({ role: 'assistant', content: '' }),
      chunk({ content: 'Hello' }),
      chunk({ content: ', world' }),
      chunk({ content: '!' }),
      chunk({}, 'stop'),
      {
        ...base,
        choices: [],
        usage: { prompt_tokens: 20, completion_tokens: 14, total_tokens: 34, prompt_tokens_details: { cached_tokens: 0 } },
      },
      '[DONE]',
    ])
    expect(translator.finish()).toEqual([])
  })

  const toolEvents = [
    geminiChunk({ parts: [{ text: 'Thinking about it.', thought: true, thoughtSignature: 'dGhvdWdodA==' }] }),
    geminiChunk({ parts: [{ text: 'Let me check.' }] }),
    geminiChunk({
      parts: [
        { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
        { functionCall: { name: 'get_time', args: {}, id: 'fc_2' } },
      ],
      finishReason: 'STOP',
      usage: {
        promptTokenCount: 100,
        cachedContentTokenCount: 60,
        candidatesTokenCount: 20,
        thoughtsTokenCount: 30,
        totalTokenCount: 150,
      },
    }),
  ]

  test('thinking and whole calls to an OpenAI caller: reasoning_content, then each call at once, numbered in order', () => {
    expect(parsed(run(fromOpenai.stream(false), toolEvents))).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { reasoning_content: 'Thinking about it.' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: { content: 'Let me check.' }, finish_reason: null }] },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: {
              tool_calls: [
                {
                  index: 0,
                  id: 'call_gw_resp-1_0__thought__c2ln',
                  type: 'function',
                  function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
                },
              ],
            },
            finish_reason: null,
          },
        ],
      },
      {
        ...base,
        choices: [
          {
            index: 0,
            delta: { tool_calls: [{ index: 1, id: 'fc_2', type: 'function', function: { name: 'get_time', arguments: '{}' } }] },
            finish_reason: null,
          },
        ],
      },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'tool_calls' }] },
      '[DONE]',
    ])
  })

  test('the OpenAI SDK reads the translated stream into the answer Gemini gave', async () => {
    const out = run(fromOpenai.stream(true), toolEvents)
    const client = new OpenAI({ apiKey: 'test', fetch: serving(out) })
    const completion = await client.chat.completions
      .stream({ model: 'gemini-2.5-flash', messages: [{ role: 'user', content: 'Weather?' }] })
      .finalChatCompletion()
    expect(completion.choices[0]?.message.content).toBe('Let me check.')
    expect(completion.choices[0]?.message.tool_calls).toEqual([
      {
        id: 'call_gw_resp-1_0__thought__c2ln',
        type: 'function',
        function: { name: 'get_weather', arguments: '{"city":"Paris"}' },
      },
      { id: 'fc_2', type: 'function', function: { name: 'get_time', arguments: '{}' } },
    ])
    expect(completion.choices[0]?.finish_reason).toBe('tool_calls')
    expect(completion.usage).toMatchObject({ prompt_tokens: 100, completion_tokens: 50, total_tokens: 150 })
  })

  test('to an Anthropic caller: a thinking block with its signature, a text block, tool_use blocks, then the usage', () => {
    const out = run(fromAnthropic.stream(true), toolEvents)
    expect(out.map((event) => event.event)).toEqual([
      'message_start',
      'content_block_start',
      'content_block_delta',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'content_block_start',
      'content_block_delta',
      'content_block_stop',
      'message_delta',
      'message_stop',
    ])
    expect(parsed(out).slice(1, 4)).toEqual([
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Thinking about it.' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'dGhvdWdodA==' } },
    ])
    expect(parsed(out).at(-2)).toEqual({
      type: 'message_delta',
      delta: { stop_reason: 'tool_use', stop_sequence: null },
      usage: { output_tokens: 50, input_tokens: 40, cache_read_input_tokens: 60 },
    })
  })

  test('the Anthropic SDK reads the translated stream into the answer Gemini gave', async () => {
    const out = run(fromAnthropic.stream(true), toolEvents)
    const client = new Anthropic({ apiKey: 'test', fetch: serving(out) })
    const message = await client.messages
      .stream({ model: 'gemini-2.5-flash', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] })
      .finalMessage()
    expect(message.content).toMatchObject([
      { type: 'thinking', thinking: 'Thinking about it.', signature: 'dGhvdWdodA==' },
      { type: 'text', text: 'Let me check.' },
      { type: 'tool_use', id: 'call_gw_resp-1_0__thought__c2ln', name: 'get_weather', input: { city: 'Paris' } },
      { type: 'tool_use', id: 'fc_2', name: 'get_time', input: {} },
    ])
    expect(message.stop_reason).toBe('tool_use')
    expect(message.usage).toMatchObject({ output_tokens: 50 })
  })

  test('a stream cut off before any finish reason gets no invented ending; error chunks become nothing', () => {
    for (const translator of [fromOpenai.stream(true), fromAnthropic.stream(true)]) {
      const out = [
        ...translator.push(geminiChunk({ parts: [{ text: 'Partial' }] })),
        ...translator.push({ data: JSON.stringify({ error: { code: 500, message: 'Internal error', status: 'INTERNAL' } }) }),
        ...translator.push({ data: '{not json' }),
      ]
      expect(out.some((event) => event.data === '[DONE]' || event.event === 'message_stop')).toBe(false)
      expect(translator.finish()).toEqual([])
    }
  })

  test("Vertex's stream: usage only on the last chunk, candidates without an index", () => {
    const vertexChunk = (candidate: Record<string, unknown>, usageMetadata: Record<string, unknown>): SseEvent => ({
      data: JSON.stringify({ candidates: [candidate], usageMetadata, modelVersion: 'gemini-2.5-pro', responseId: 'v-1' }),
    })
    const translator = fromOpenai.stream(true)
    const out = parsed(
      run(translator, [
        vertexChunk({ content: { role: 'model', parts: [{ text: 'Hi' }] } }, { trafficType: 'ON_DEMAND' }),
        vertexChunk(
          { content: { role: 'model', parts: [{ text: ' there' }] }, finishReason: 'MAX_TOKENS' },
          { promptTokenCount: 5, candidatesTokenCount: 2, totalTokenCount: 7, trafficType: 'ON_DEMAND' },
        ),
      ]),
    )
    expect(out.at(-3)).toMatchObject({ choices: [{ finish_reason: 'length' }] })
    expect(out.at(-2)).toMatchObject({ choices: [], usage: { prompt_tokens: 5, completion_tokens: 2, total_tokens: 7 } })
  })

  test('a prompt blocked in a stream ends it as filtered', () => {
    const blocked: SseEvent = {
      data: JSON.stringify({
        promptFeedback: { blockReason: 'SAFETY' },
        usageMetadata: { promptTokenCount: 8, totalTokenCount: 8 },
        modelVersion: 'gemini-2.5-flash',
        responseId: 'resp-1',
      }),
    }
    const out = parsed(run(fromOpenai.stream(false), [blocked]))
    expect(out).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'content_filter' }] },
      '[DONE]',
    ])
  })
})

describe('thought signatures through callers of other formats', () => {
  /** A signature as Gemini writes one: padded standard base64 of bytes that give both `+` and `/`. */
  const SIGNATURE = Buffer.from(Uint8Array.from({ length: 301 }, (_, i) => (i * 251 + 62) % 256)).toString('base64')
  const ANTHROPIC_ID = /^[a-zA-Z0-9_-]+$/
  const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }]
  const signedCall = (signature: string, id?: string): GeminiPart => ({
    functionCall: { name: 'get_weather', args: { city: 'Paris' }, ...(id ? { id } : {}) },
    thoughtSignature: signature,
  })
  const signedAnswer = (parts: GeminiPart[]): GeminiGenerateContentResponse => ({
    candidates: [{ content: { role: 'model', parts }, finishReason: 'STOP', index: 0 }],
    usageMetadata: { promptTokenCount: 10, candidatesTokenCount: 5, totalTokenCount: 15 },
    modelVersion: 'gemini-3-pro-preview',
    responseId: 'resp-9',
  })
  const isToolUse = (block: unknown): boolean =>
    typeof block === 'object' && block !== null && (block as { type?: unknown }).type === 'tool_use'
  /** The model turn and the results of the next request, as they reach Gemini. */
  const historyOf = (request: GeminiGenerateContentRequest) => request.contents.slice(1)

  test('the signature is standard base64 with + and / and padding, as Gemini sends them', () => {
    expect(SIGNATURE).toMatch(/\+/)
    expect(SIGNATURE).toMatch(/\//)
    expect(SIGNATURE.endsWith('=')).toBe(true)
  })

  test('an OpenAI caller: the call comes with the signature in its id, and the next turn sends it back byte for byte', () => {
    const completion = fromOpenai.response(
      signedAnswer([signedCall(SIGNATURE), { functionCall: { name: 'get_time', args: {} } }]),
    ).body as OpenAIChatCompletion
    const message = completion.choices[0]?.message
    const [signed, unsigned] = message?.tool_calls ?? []
    expect(signed?.id.startsWith('call_gw_resp-9_0__thought__')).toBe(true)
    expect(signed?.id).toMatch(ANTHROPIC_ID)
    // A call without a signature keeps the id it had.
    expect(unsigned?.id).toBe('call_gw_resp-9_1')
    const { request, dropped } = openaiToGemini({
      messages: [
        { role: 'user', content: 'Weather?' },
        message,
        { role: 'tool', tool_call_id: signed?.id, content: 'Sunny' },
        { role: 'tool', tool_call_id: unsigned?.id, content: '12:00' },
      ],
      tools,
    })
    expect(historyOf(request)).toEqual([
      {
        role: 'model',
        parts: [
          { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE },
          { functionCall: { name: 'get_time', args: {} } },
        ],
      },
      {
        role: 'user',
        parts: [
          { functionResponse: { name: 'get_weather', response: { output: 'Sunny' } } },
          { functionResponse: { name: 'get_time', response: { output: '12:00' } } },
        ],
      },
    ])
    expect(dropped).toEqual([])
  })

  test("an OpenAI caller, streamed: the SDK's final message goes back with Gemini's own id and the signature", async () => {
    const out = run(fromOpenai.stream(true), [
      geminiChunk({ parts: [{ text: 'Checking.' }] }),
      geminiChunk({ parts: [signedCall(SIGNATURE, 'fc_7')], finishReason: 'STOP' }),
    ])
    const client = new OpenAI({ apiKey: 'test', fetch: serving(out) })
    const completion = await client.chat.completions
      .stream({ model: 'gemini-3-pro-preview', messages: [{ role: 'user', content: 'Weather?' }] })
      .finalChatCompletion()
    const message = completion.choices[0]?.message
    const call = message?.tool_calls?.[0]
    expect(call?.id.startsWith('fc_7__thought__')).toBe(true)
    const { request } = openaiToGemini({
      messages: [
        { role: 'user', content: 'Weather?' },
        { role: 'assistant', content: message?.content, tool_calls: message?.tool_calls },
        { role: 'tool', tool_call_id: call?.id, content: 'Sunny' },
      ],
      tools,
    })
    expect(historyOf(request)).toEqual([
      {
        role: 'model',
        parts: [
          { text: 'Checking.' },
          { functionCall: { name: 'get_weather', args: { city: 'Paris' }, id: 'fc_7' }, thoughtSignature: SIGNATURE },
        ],
      },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'Sunny' }, id: 'fc_7' } }] },
    ])
  })

  test('an Anthropic caller, whole and streamed: tool_use ids Anthropic accepts, and the signature back byte for byte', async () => {
    const answer = signedAnswer([signedCall(SIGNATURE)])
    const whole = fromAnthropic.response(answer).body as AnthropicMessage
    const client = new Anthropic({
      apiKey: 'test',
      fetch: serving(run(fromAnthropic.stream(true), [geminiChunk({ parts: [signedCall(SIGNATURE)], finishReason: 'STOP' })])),
    })
    const streamed = await client.messages
      .stream({ model: 'gemini-3-pro-preview', max_tokens: 100, messages: [{ role: 'user', content: 'Weather?' }] })
      .finalMessage()
    for (const content of [whole.content as unknown[], streamed.content as unknown[]]) {
      const use = content.find((block): block is { type: 'tool_use'; id: string } => isToolUse(block))
      expect(use?.id).toMatch(ANTHROPIC_ID)
      const { request, dropped } = anthropicToGemini({
        messages: [
          { role: 'user', content: 'Weather?' },
          { role: 'assistant', content },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: use?.id, content: 'Sunny' }] },
        ],
        tools: [{ name: 'get_weather', input_schema: { type: 'object', properties: {} } }],
      })
      expect(historyOf(request)).toEqual([
        {
          role: 'model',
          parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: SIGNATURE }],
        },
        { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'Sunny' } } }] },
      ])
      expect(dropped).toEqual([])
    }
  })

  test('a signature too long to carry, or not in base64 as Gemini writes it, is not carried: the id stays plain', () => {
    const long = 'A'.repeat(16_388)
    const idOf = (signature: string) =>
      (fromOpenai.response(signedAnswer([signedCall(signature)])).body as OpenAIChatCompletion).choices[0]?.message
        .tool_calls?.[0]?.id
    expect(idOf(long)).toBe('call_gw_resp-9_0')
    expect(idOf('not base64!')).toBe('call_gw_resp-9_0')
    expect(idOf('c2ln')).toBe('call_gw_resp-9_0__thought__c2ln')
    expect(idOf('A'.repeat(16_384))).toHaveLength('call_gw_resp-9_0__thought__'.length + 16_384)
  })

  test('to any other provider the ids go without the signature they carry, call and result alike', () => {
    const completion = fromOpenai.response(signedAnswer([signedCall(SIGNATURE)])).body as OpenAIChatCompletion
    const message = completion.choices[0]?.message
    const id = message?.tool_calls?.[0]?.id
    const body = {
      model: 'some-model',
      max_tokens: 100,
      messages: [{ role: 'user', content: 'Weather?' }, message, { role: 'tool', tool_call_id: id, content: 'Sunny' }],
      tools,
    }
    const toAnthropic = (translationBetween('openai', 'anthropic', now) as Translation).request(body).request as {
      messages: Array<{ content: Array<Record<string, unknown>> }>
    }
    expect(toAnthropic.messages[1]?.content[0]).toMatchObject({ type: 'tool_use', id: 'call_gw_resp-9_0' })
    expect(toAnthropic.messages[2]?.content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'call_gw_resp-9_0' })
    const toBedrock = JSON.stringify((translationBetween('openai', 'bedrock', now) as Translation).request(body).request)
    expect(toBedrock).not.toContain('__thought__')
    expect(toBedrock.match(/"toolUseId":"call_gw_resp-9_0"/g)).toHaveLength(2)
    // The caller's history still carries it: back at Gemini, the call is signed again.
    expect(historyOf(openaiToGemini(body).request)[0]?.parts[0]?.thoughtSignature).toBe(SIGNATURE)
  })

  test('ids that only look like they carry a signature are sent as they came', () => {
    const { request } = openaiToGemini({
      messages: [
        { role: 'user', content: 'Weather?' },
        {
          role: 'assistant',
          content: null,
          tool_calls: [
            { id: 'mine__thought__', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            { id: 'mine__thought__a', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
            { id: 'mine__thought__a.b', type: 'function', function: { name: 'get_weather', arguments: '{}' } },
          ],
        },
      ],
    })
    expect(historyOf(request)[0]?.parts).toEqual([
      { functionCall: { name: 'get_weather', args: {}, id: 'mine__thought__' } },
      { functionCall: { name: 'get_weather', args: {}, id: 'mine__thought__a' } },
      { functionCall: { name: 'get_weather', args: {}, id: 'mine__thought__a.b' } },
    ])
  })
})

// ---------------------------------------------------------------------------------------------
// The Gemini caller's side: ready for the inbound route, checked here against Google's own SDK.

/** Google's SDK pointed at gw, with a fetch that keeps what the SDK sent and answers as gw's route will. */
function googleClient(answer: () => Response) {
  const sent: Array<{ url: string; body: Record<string, unknown> }> = []
  const client = new GoogleGenAI({
    apiKey: 'gw-sk-test',
    apiVersion: 'v1beta',
    httpOptions: {
      baseUrl: 'http://localhost/gemini',
      fetch: async (input, init) => {
        const body = JSON.parse(String(init?.body)) as Record<string, unknown>
        sent.push({ url: String(input), body })
        return answer()
      },
    },
  })
  return { client, sent }
}

const jsonResponse = (body: unknown) => new Response(JSON.stringify(body), { headers: { 'content-type': 'application/json' } })

/** What an Anthropic provider answered, in no format's words, for writing to a Gemini caller. */
const anthropicAnswer: Answer = {
  id: 'msg_01',
  model: 'claude-sonnet-4-5',
  content: [
    { type: 'thinking', text: 'Oslo is next.', signature: 'anthropic-signature' },
    { type: 'text', text: 'Paris is sunny; ' },
    { type: 'text', text: 'Rome is cloudy.' },
    { type: 'tool_call', id: 'toolu_9', name: 'get_weather', arguments: { city: 'Oslo' } },
  ],
  stop: 'tool_calls',
  usage: { promptTokens: 120, completionTokens: 30, cacheReadTokens: 100, cacheWriteTokens: 0 },
}

describe('Gemini caller: the request', () => {
  const weatherSchema = { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }

  test("a request as Google's SDK sends it, with calls and results that carry no ids, paired in order by name", async () => {
    const { client, sent } = googleClient(() => jsonResponse(gemini.writeAnswer(anthropicAnswer, { now }).body))
    const response = await client.models.generateContent({
      model: 'gemini-2.5-flash',
      contents: [
        {
          role: 'user',
          parts: [{ text: 'Weather in Paris and Rome?' }, { inlineData: { mimeType: 'image/png', data: 'iVBORw0KGgo=' } }],
        },
        {
          role: 'model',
          parts: [
            { text: 'Two cities.', thought: true, thoughtSignature: 'dGhvdWdodA==' },
            { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'c2ln' },
            { functionCall: { name: 'get_weather', args: { city: 'Rome' } } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'get_weather', response: { output: 'Sunny' } } },
            { functionResponse: { name: 'get_weather', response: { sky: 'cloudy', celsius: 18 } } },
          ],
        },
      ],
      config: {
        systemInstruction: 'Be terse.',
        temperature: 0.2,
        topP: 0.9,
        topK: 40,
        maxOutputTokens: 512,
        stopSequences: ['END'],
        seed: 7,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        thinkingConfig: { thinkingBudget: 1024, includeThoughts: true },
        tools: [
          { functionDeclarations: [{ name: 'get_weather', description: 'Weather now', parametersJsonSchema: weatherSchema }] },
        ],
        toolConfig: { functionCallingConfig: { mode: FunctionCallingConfigMode.ANY, allowedFunctionNames: ['get_weather'] } },
      },
    })
    expect(sent.map((request) => request.url)).toEqual(['http://localhost/gemini/v1beta/models/gemini-2.5-flash:generateContent'])
    const { call, dropped } = gemini.readRequest(sent[0]?.body ?? {})
    const { names, ...read } = call
    expect(read).toEqual({
      model: '',
      system: [{ type: 'text', text: 'Be terse.' }],
      turns: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Weather in Paris and Rome?' },
            { type: 'image', source: { kind: 'base64', mediaType: 'image/png', data: 'iVBORw0KGgo=' } },
          ],
        },
        {
          role: 'assistant',
          content: [
            { type: 'thinking', text: 'Two cities.', signature: 'dGhvdWdodA==' },
            { type: 'tool_call', id: 'call_1_1', name: 'get_weather', arguments: { city: 'Paris' }, signature: 'c2ln' },
            { type: 'tool_call', id: 'call_1_2', name: 'get_weather', arguments: { city: 'Rome' } },
          ],
        },
        {
          role: 'user',
          content: [
            { type: 'tool_result', callId: 'call_1_1', name: 'get_weather', content: [{ type: 'text', text: 'Sunny' }] },
            {
              type: 'tool_result',
              callId: 'call_1_2',
              name: 'get_weather',
              content: [{ type: 'text', text: '{"sky":"cloudy","celsius":18}' }],
            },
          ],
        },
      ],
      stream: undefined,
      tools: [{ name: 'get_weather', description: 'Weather now', parameters: weatherSchema }],
      toolChoice: { type: 'tool', name: 'get_weather' },
      maxTokens: 512,
      temperature: 0.2,
      topP: 0.9,
      topK: 40,
      stop: ['END'],
      seed: 7,
      presencePenalty: 0.1,
      frequencyPenalty: 0.2,
      thinkingBudget: 1024,
    })
    expect(names).toMatchObject({ topK: 'generationConfig.topK', thinking: 'contents[].parts[].thought' })
    expect(dropped).toEqual([])

    // The SDK reads gw's answer: the text without the thought, the call with its id, and the usage.
    expect(response.candidates?.[0]?.content?.parts?.filter((part) => part.text !== undefined && !part.thought)).toEqual([
      { text: 'Paris is sunny; ' },
      { text: 'Rome is cloudy.' },
    ])
    expect(response.functionCalls).toEqual([{ name: 'get_weather', args: { city: 'Oslo' }, id: 'toolu_9' }])
    expect(response.candidates?.[0]?.finishReason).toBe(FinishReason.STOP)
    expect(response.usageMetadata).toMatchObject({
      promptTokenCount: 120,
      candidatesTokenCount: 30,
      totalTokenCount: 150,
      cachedContentTokenCount: 100,
    })
    expect(response.responseId).toBe('msg_01')
    expect(response.modelVersion).toBe('claude-sonnet-4-5')
  })

  test('results with ids pair by id; a new model turn starts the pairing afresh; a result for no call keeps its own id', () => {
    const { call } = gemini.readRequest({
      contents: [
        {
          role: 'model',
          parts: [
            { functionCall: { name: 'f', args: { n: 1 }, id: 'fc_a' } },
            { functionCall: { name: 'f', args: { n: 2 }, id: 'fc_b' } },
          ],
        },
        {
          role: 'user',
          parts: [
            { functionResponse: { name: 'f', id: 'fc_b', response: { output: 2 } } },
            { functionResponse: { name: 'f', response: { output: 1 } } },
          ],
        },
        { role: 'model', parts: [{ functionCall: { name: 'g', args: {} } }] },
        {
          parts: [
            { functionResponse: { name: 'f', response: { error: 'no call' } } },
            { functionResponse: { name: 'g', response: {} } },
          ],
        },
      ],
    })
    const results = call.turns.flatMap((turn) => turn.content.filter((block) => block.type === 'tool_result'))
    expect(results).toEqual([
      { type: 'tool_result', callId: 'fc_b', name: 'f', content: [{ type: 'text', text: '2' }] },
      { type: 'tool_result', callId: 'fc_a', name: 'f', content: [{ type: 'text', text: '1' }] },
      { type: 'tool_result', callId: 'call_3_0', name: 'f', content: [{ type: 'text', text: 'no call' }], isError: true },
      { type: 'tool_result', callId: 'call_2_0', name: 'g', content: [{ type: 'text', text: '{}' }] },
    ])
  })

  test("Gemini's OpenAPI-style schemas (tools and responseSchema) become JSON Schema", () => {
    const openApi = {
      type: 'OBJECT',
      properties: {
        city: { type: 'STRING', nullable: true, description: 'City' },
        days: { type: 'ARRAY', items: { type: 'INTEGER' }, minItems: '1' },
      },
      required: ['city'],
      propertyOrdering: ['city', 'days'],
    }
    const jsonSchema = {
      type: 'object',
      properties: {
        city: { type: ['string', 'null'], description: 'City' },
        days: { type: 'array', items: { type: 'integer' }, minItems: 1 },
      },
      required: ['city'],
    }
    const { call, dropped } = gemini.readRequest({
      contents: [{ role: 'user', parts: [{ text: 'Forecast?' }] }],
      tools: [{ functionDeclarations: [{ name: 'forecast', parameters: openApi }, { name: 'now' }] }],
      generationConfig: { responseMimeType: 'application/json', responseSchema: openApi },
    })
    expect(call.tools).toEqual([
      { name: 'forecast', parameters: jsonSchema },
      { name: 'now', parameters: { type: 'object', properties: {} } },
    ])
    expect(call.responseFormat).toEqual({ type: 'json_schema', schema: jsonSchema })
    expect(dropped).toEqual([])
  })

  test('what no other format can carry is named by its Gemini path', () => {
    const { call, dropped } = gemini.readRequest({
      contents: [
        {
          role: 'user',
          parts: [
            { text: 'Look', videoMetadata: { startOffset: '1s' } },
            { inlineData: { mimeType: 'application/pdf', data: 'JVBER' } },
            { fileData: { fileUri: 'gs://bucket/a.png', mimeType: 'image/png' } },
            { fileData: { fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc', mimeType: 'image/png' } },
            { fileData: { fileUri: 'https://example.com/a.png' } },
            { functionCall: { name: 'f', args: {} } },
            'nonsense',
          ],
        },
        { role: 'system', parts: [{ text: 'x' }] },
        {
          role: 'model',
          parts: [
            { text: 'Done.', thoughtSignature: 'c2ln' },
            { executableCode: { language: 'PYTHON', code: 'print(1)' } },
            { functionResponse: { name: 'f', response: {} } },
          ],
        },
      ],
      systemInstruction: { role: 'user', parts: [{ text: 'Be kind.' }, { inlineData: { mimeType: 'image/png', data: 'x' } }] },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
      cachedContent: 'cachedContents/abc',
      tools: [{ googleSearch: {} }, { functionDeclarations: [{ name: 'f', behavior: 'BLOCKING' }] }],
      toolConfig: { functionCallingConfig: { mode: 'VALIDATED' }, retrievalConfig: {} },
      generationConfig: {
        candidateCount: 2,
        responseLogprobs: true,
        temperature: 'hot',
        responseMimeType: 'text/x.enum',
        thinkingConfig: { thinkingBudget: -1, thinkingLevel: 'HIGH' },
      },
    })
    expect(call.turns).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Look' },
          { type: 'image', source: { kind: 'url', url: 'https://example.com/a.png' } },
        ],
      },
      { role: 'assistant', content: [{ type: 'text', text: 'Done.' }] },
    ])
    expect(call.system).toEqual([{ type: 'text', text: 'Be kind.' }])
    expect(call.toolChoice).toEqual({ type: 'auto' })
    expect(call.temperature).toBeUndefined()
    expect(call.thinkingBudget).toBeUndefined()
    expect(dropped.sort()).toEqual([
      'cachedContent',
      'contents[].parts[]',
      'contents[].parts[].executableCode',
      'contents[].parts[].fileData',
      'contents[].parts[].functionCall',
      'contents[].parts[].functionResponse',
      'contents[].parts[].inlineData',
      'contents[].parts[].thoughtSignature',
      'contents[].parts[].videoMetadata',
      'contents[].role=system',
      'generationConfig.candidateCount',
      'generationConfig.responseLogprobs',
      'generationConfig.responseMimeType',
      'generationConfig.temperature',
      'generationConfig.thinkingConfig.thinkingBudget',
      'generationConfig.thinkingConfig.thinkingLevel',
      'safetySettings',
      'systemInstruction.parts[].inlineData',
      'toolConfig.functionCallingConfig.mode=VALIDATED',
      'toolConfig.retrievalConfig',
      'tools[].functionDeclarations[].behavior',
      'tools[].googleSearch',
    ])
  })

  test("the provider's format names what it drops in the Gemini caller's words", () => {
    const { call } = gemini.readRequest({
      contents: [
        { role: 'user', parts: [{ text: 'Hi' }] },
        { role: 'model', parts: [{ text: 'Hmm.', thought: true }, { text: 'Hello!' }] },
        { role: 'user', parts: [{ text: 'Again' }] },
      ],
      generationConfig: { topK: 40, seed: 3, candidateCount: 1 },
    })
    expect(openaiChat.writeRequest(call).dropped.sort()).toEqual(['contents[].parts[].thought', 'generationConfig.topK'])
    expect(anthropicMessages.writeRequest(call).dropped.sort()).toEqual(['contents[].parts[].thought', 'generationConfig.seed'])
  })
})

describe('Gemini caller: the answer and the stream', () => {
  test('an answer: thoughts without a foreign signature, calls with their ids, usage with the cached part', () => {
    const { body, dropped } = gemini.writeAnswer(
      { ...anthropicAnswer, content: [{ type: 'redacted_thinking', data: 'Encrypted' }, ...anthropicAnswer.content] },
      { now },
    )
    expect(body).toEqual({
      candidates: [
        {
          content: {
            role: 'model',
            parts: [
              { text: 'Oslo is next.', thought: true },
              { text: 'Paris is sunny; ' },
              { text: 'Rome is cloudy.' },
              { functionCall: { name: 'get_weather', args: { city: 'Oslo' }, id: 'toolu_9' } },
            ],
          },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 120, candidatesTokenCount: 30, totalTokenCount: 150, cachedContentTokenCount: 100 },
      modelVersion: 'claude-sonnet-4-5',
      responseId: 'msg_01',
    })
    expect(dropped).toEqual(['redacted_thinking'])
    const finishFor = (stop: Answer['stop']) =>
      (gemini.writeAnswer({ ...anthropicAnswer, stop }, { now }).body as GeminiGenerateContentResponse).candidates?.[0]
        ?.finishReason
    expect(finishFor('length')).toBe('MAX_TOKENS')
    expect(finishFor('refusal')).toBe('SAFETY')
    expect(finishFor('content_filter')).toBe('SAFETY')
    expect(finishFor('stop_sequence')).toBe('STOP')
    expect(finishFor(undefined)).toBe('STOP')
  })

  const deltas: Delta[] = [
    { type: 'start', id: 'msg_01', model: 'claude-sonnet-4-5' },
    { type: 'thinking', text: 'Hmm.' },
    { type: 'thinking_signature', signature: 'anthropic-signature' },
    { type: 'text', text: 'Let me check.' },
    { type: 'tool_call', call: 0, id: 'toolu_1', name: 'lookup', arguments: '' },
    { type: 'tool_arguments', call: 0, fragment: '{"q":' },
    { type: 'tool_arguments', call: 0, fragment: '"cat"}' },
    { type: 'tool_call', call: 1, id: 'toolu_2', name: 'now', arguments: '{}' },
    { type: 'usage', usage: { promptTokens: 50, completionTokens: 20, cacheReadTokens: 0, cacheWriteTokens: 0 } },
    { type: 'stop', reason: 'tool_calls' },
    { type: 'end' },
  ]
  const response = (parts: GeminiPart[], end: Record<string, unknown> = {}) => ({
    candidates: [{ content: { role: 'model', parts }, index: 0, ...end }],
    modelVersion: 'claude-sonnet-4-5',
    responseId: 'msg_01',
  })

  test('the stream: data-only chunks, each call whole once its arguments are, the finish reason and usage last', () => {
    const writer = gemini.streamWriter({ includeUsage: false, now })
    const out = deltas.flatMap((delta) => writer.push(delta))
    expect(out.every((event) => event.event === undefined)).toBe(true)
    expect(parsed(out)).toEqual([
      response([{ text: 'Hmm.', thought: true }]),
      response([{ text: 'Let me check.' }]),
      response([{ functionCall: { name: 'lookup', args: { q: 'cat' }, id: 'toolu_1' } }]),
      {
        ...response([{ functionCall: { name: 'now', args: {}, id: 'toolu_2' } }], { finishReason: 'STOP' }),
        usageMetadata: { promptTokenCount: 50, candidatesTokenCount: 20, totalTokenCount: 70 },
      },
    ])
    expect(writer.finish()).toEqual([])
    expect(writer.dropped()).toEqual([])
  })

  test('finish(): a stop without its end closes the stream with a part the SDK keeps; no stop, nothing', () => {
    const stopped = gemini.streamWriter({ includeUsage: false, now })
    for (const delta of [deltas[0], { type: 'text', text: 'Hi' }, { type: 'stop', reason: 'length' }] as Delta[])
      stopped.push(delta)
    expect(parsed(stopped.finish())).toEqual([response([{ text: '' }], { finishReason: 'MAX_TOKENS' })])
    expect(stopped.finish()).toEqual([])
    const cut = gemini.streamWriter({ includeUsage: false, now })
    for (const delta of [deltas[0], { type: 'text', text: 'Hi' }] as Delta[]) cut.push(delta)
    expect(cut.finish()).toEqual([])
  })

  test('arguments that are no JSON object, and pieces of a call already sent, are named', () => {
    const writer = gemini.streamWriter({ includeUsage: false, now })
    const out = [
      { type: 'tool_call', call: 0, id: 'a', name: 'f', arguments: '{"x":' },
      { type: 'tool_call', call: 1, id: 'b', name: 'g', arguments: '' },
      { type: 'tool_arguments', call: 0, fragment: '1}' },
      { type: 'redacted_thinking', data: 'Encrypted' },
      { type: 'end' },
    ].flatMap((delta) => writer.push(delta as Delta))
    expect(parsed(out).length).toBe(2)
    expect(writer.dropped().sort()).toEqual(['functionCall.args', 'redacted_thinking'])
  })

  /** An OpenAI provider's stream, read and written for a Gemini caller as the inbound route will. */
  function openaiStreamToGemini(): SseEvent[] {
    const reader = openaiChat.streamReader()
    const writer = gemini.streamWriter({ includeUsage: true, now })
    const chunk = (fields: Record<string, unknown>): SseEvent => ({
      data: JSON.stringify({ id: 'chatcmpl-abc', object: 'chat.completion.chunk', created: 1, model: 'gpt-4o', ...fields }),
    })
    const delta = (change: Record<string, unknown>, finish: string | null = null) =>
      chunk({ choices: [{ index: 0, delta: change, finish_reason: finish }] })
    const events = [
      delta({ role: 'assistant', content: '' }),
      delta({ content: 'The weather' }),
      delta({ content: ' is:' }),
      delta({ tool_calls: [{ index: 0, id: 'call_a', type: 'function', function: { name: 'get_weather', arguments: '' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] }),
      delta({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }),
      delta({}, 'tool_calls'),
      chunk({
        choices: [],
        usage: { prompt_tokens: 50, completion_tokens: 20, total_tokens: 70, prompt_tokens_details: { cached_tokens: 30 } },
      }),
      { data: '[DONE]' },
    ]
    return [...events.flatMap((event) => reader.push(event).flatMap((change) => writer.push(change))), ...writer.finish()]
  }

  test("Google's SDK reads the stream: the text, the call with its id, the finish reason and usage on the last chunk", async () => {
    const { client } = googleClient(() => sseResponse(openaiStreamToGemini()))
    const chunks: SdkResponse[] = []
    for await (const chunk of await client.models.generateContentStream({ model: 'gpt-4o', contents: 'Weather in Paris?' }))
      chunks.push(chunk)
    expect(chunks.map((chunk) => chunk.candidates?.[0]?.content?.parts?.find((part) => part.text)?.text ?? '').join('')).toBe(
      'The weather is:',
    )
    expect(chunks.flatMap((chunk) => chunk.functionCalls ?? [])).toEqual([
      { name: 'get_weather', args: { city: 'Paris' }, id: 'call_a' },
    ])
    const last = chunks.at(-1)
    expect(last?.candidates?.[0]?.finishReason).toBe(FinishReason.STOP)
    expect(last?.usageMetadata).toMatchObject({
      promptTokenCount: 50,
      candidatesTokenCount: 20,
      totalTokenCount: 70,
      cachedContentTokenCount: 30,
    })
    expect(last?.responseId).toBe('chatcmpl-abc')
  })

  test('a chat session keeps a streamed turn in its history, which it does only when every chunk has a part', async () => {
    const writer = gemini.streamWriter({ includeUsage: true, now })
    const plainAnswer: Delta[] = [
      { type: 'start', id: 'msg_02', model: 'claude-sonnet-4-5' },
      { type: 'text', text: 'Sunny.' },
      { type: 'stop', reason: 'end' },
      { type: 'usage', usage: { promptTokens: 9, completionTokens: 2, cacheReadTokens: 0, cacheWriteTokens: 0 } },
      { type: 'end' },
    ]
    const out = plainAnswer.flatMap((delta) => writer.push(delta))
    const { client, sent } = googleClient(() => sseResponse(out))
    const chat = client.chats.create({ model: 'claude-sonnet-4-5' })
    for await (const _ of await chat.sendMessageStream({ message: 'Weather in Paris?' })) {
      // The chat records the turn once the stream is read to its end.
    }
    expect(sent[0]?.url).toBe('http://localhost/gemini/v1beta/models/claude-sonnet-4-5:streamGenerateContent?alt=sse')
    // Google's SDK keeps each chunk's content as it came.
    expect(chat.getHistory()).toEqual([
      { role: 'user', parts: [{ text: 'Weather in Paris?' }] },
      { role: 'model', parts: [{ text: 'Sunny.' }] },
      { role: 'model', parts: [{ text: '' }] },
    ])
  })
})

describe("Google's errors", () => {
  const rateLimited = (retryDelay: unknown, type = 'type.googleapis.com/google.rpc.RetryInfo') => ({
    error: {
      code: 429,
      message: 'Resource has been exhausted (e.g. check quota).',
      status: 'RESOURCE_EXHAUSTED',
      details: [
        { '@type': 'type.googleapis.com/google.rpc.QuotaFailure', violations: [] },
        { '@type': type, retryDelay },
      ],
    },
  })

  test('the wait in a RetryInfo detail is read as a Retry-After would be, fractions of a second included', () => {
    expect(readFailure(rateLimited('7s'), 429, 'fallback')).toEqual({
      kind: 'rate_limit',
      message: 'Resource has been exhausted (e.g. check quota).',
      retryAfterMs: 7_000,
    })
    expect(readFailure(rateLimited('0.250s'), 429, 'fallback').retryAfterMs).toBe(250)
  })

  test('a wait that is not a Duration, or a detail of another type, is no wait', () => {
    for (const delay of ['7', '-1s', '7 s', 'soon', 7, null, '1e3s', '99999999999s'])
      expect(readFailure(rateLimited(delay), 429, 'fallback').retryAfterMs).toBeUndefined()
    expect(readFailure(rateLimited('7s', 'type.googleapis.com/google.rpc.ErrorInfo'), 429, 'f').retryAfterMs).toBeUndefined()
    expect(readFailure({ error: { code: 429, details: 'not a list' } }, 429, 'f').retryAfterMs).toBeUndefined()
  })
})
