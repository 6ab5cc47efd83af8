import fc from 'fast-check'
import { DISPATCH_ROUTES, type DispatchPath } from '../../src/gateway/dispatch-routes'
import { type Caller, type Expectation, type HostileCall, hostileCall } from './hostile-calls'
import {
  type Body,
  encodedParam,
  headerBytes,
  headerNameSuffix,
  headerValue,
  hostileJson,
  hostileKey,
  hostileNumber,
  hostileShortText,
  hostileText,
  type PathParam,
  RAW_BODIES,
  sometimes,
  wrongType,
} from './hostile-values'

/**
 * Hostile calls for the gateway's dispatch paths: bodies shaped like each path's SDK request with
 * hostile models, messages, flags and numbers, and the gateway's own request headers with hostile values.
 */

/** Models each path serves (passthrough and, for chat, translated), so that a call reaches the provider. */
export const MODELS: Record<DispatchPath, readonly [string, ...string[]]> = {
  '/v1/chat/completions': ['gpt-4o', 'claude-sonnet-4-5', 'openai/llama3.1:8b'],
  '/v1/messages': ['claude-sonnet-4-5', 'gpt-4o'],
  '/v1/completions': ['gpt-3.5-turbo-instruct'],
  '/v1/embeddings': ['text-embedding-3-small'],
  '/v1/responses': ['gpt-4o'],
  '/v1/messages/count_tokens': ['claude-sonnet-4-5'],
  '/v1/images/generations': ['dall-e-3'],
  '/v1/moderations': ['omni-moderation-latest'],
  '/v1/audio/speech': ['tts-1'],
  '/v1/audio/transcriptions': ['whisper-1'],
  '/v1/audio/translations': ['whisper-1'],
  '/v1beta/models/*': ['gpt-4o', 'claude-sonnet-4-5'],
  '/v1/models/*': ['gpt-4o', 'claude-sonnet-4-5'],
}

export const dispatchExpectation = (path: DispatchPath): Expectation => ({
  family: DISPATCH_ROUTES[path].format,
  success: DISPATCH_ROUTES[path].answer === 'raw' ? 'provider-raw' : 'provider',
  stubs: false,
})

/** The field that carries the prompt on each path. */
const PROMPT_FIELD: Record<DispatchPath, 'messages' | 'prompt' | 'input' | 'contents'> = {
  '/v1/chat/completions': 'messages',
  '/v1/messages': 'messages',
  '/v1/completions': 'prompt',
  '/v1/embeddings': 'input',
  '/v1/responses': 'input',
  '/v1/messages/count_tokens': 'messages',
  '/v1/images/generations': 'prompt',
  '/v1/moderations': 'input',
  '/v1/audio/speech': 'input',
  '/v1/audio/transcriptions': 'prompt',
  '/v1/audio/translations': 'prompt',
  '/v1beta/models/*': 'contents',
  '/v1/models/*': 'contents',
}

/**
 * Google's format names the model and the method in the path: a path that takes the rest of it
 * (`/v1beta/models/*`) is called as `/v1beta/models/{call}`, the call `<model>:<method>`.
 */
const takesRest = (path: DispatchPath) => path.endsWith('/*')
const GEMINI_METHODS = ['generateContent', 'streamGenerateContent'] as const
export const geminiCallParam = (model: string, method: string = GEMINI_METHODS[0]): PathParam =>
  encodedParam(`${model}:${method}`)

/** The route and parameters a call of the path is sent to: its own path, or Google's with a model in it. */
export function dispatchRoute(path: DispatchPath, model: string = MODELS[path][0]): Pick<HostileCall, 'route' | 'params'> {
  if (!takesRest(path)) return { route: path, params: {} }
  return { route: path.replace('*', '{call}'), params: { call: geminiCallParam(model) } }
}

const text = fc.oneof(
  { weight: 2, arbitrary: fc.constant('hi') },
  { weight: 3, arbitrary: hostileText },
  { weight: 1, arbitrary: wrongType },
)

const contentPart = fc.oneof(
  fc.record({ type: fc.constant('text'), text }),
  fc.record({ type: hostileShortText, text }),
  fc.record({ type: fc.constant('image_url'), image_url: fc.record({ url: hostileText }) }),
  wrongType,
)

const message = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        role: fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom('user', 'assistant', 'system', 'tool', 'developer') },
          { weight: 1, arbitrary: hostileShortText },
          { weight: 1, arbitrary: wrongType },
        ),
        content: fc.oneof({ weight: 4, arbitrary: text }, { weight: 2, arbitrary: fc.array(contentPart, { maxLength: 3 }) }),
        name: hostileShortText,
      },
      { requiredKeys: ['role', 'content'] },
    ),
  },
  { weight: 1, arbitrary: wrongType },
)

const part = fc.oneof(
  { weight: 4, arbitrary: fc.record({ text }) },
  { weight: 1, arbitrary: fc.record({ inlineData: fc.record({ mimeType: hostileShortText, data: hostileText }) }) },
  { weight: 1, arbitrary: fc.record({ functionCall: fc.record({ name: hostileShortText, args: hostileJson }) }) },
  { weight: 1, arbitrary: wrongType },
)

const content = fc.oneof(
  {
    weight: 6,
    arbitrary: fc.record(
      {
        role: fc.oneof({ weight: 4, arbitrary: fc.constantFrom('user', 'model') }, { weight: 1, arbitrary: hostileShortText }),
        parts: fc.oneof({ weight: 4, arbitrary: fc.array(part, { maxLength: 3 }) }, { weight: 1, arbitrary: wrongType }),
      },
      { requiredKeys: ['parts'] },
    ),
  },
  { weight: 1, arbitrary: wrongType },
)

const prompt: Record<'messages' | 'prompt' | 'input' | 'contents', fc.Arbitrary<unknown>> = {
  messages: fc.oneof(
    { weight: 6, arbitrary: fc.array(message, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: wrongType },
  ),
  prompt: fc.oneof(text, fc.array(text, { maxLength: 3 })),
  input: fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.constant([[1, 2, 3]]), fc.array(message, { maxLength: 2 })),
  contents: fc.oneof(
    { weight: 6, arbitrary: fc.array(content, { minLength: 1, maxLength: 3 }) },
    { weight: 1, arbitrary: fc.constant([]) },
    { weight: 1, arbitrary: wrongType },
  ),
}

const TOOL = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } }

/** A model as callers name it: one the path serves, hostile text, a provider's prefix with hostile text, a wrong type. */
function modelName(path: DispatchPath): fc.Arbitrary<unknown> {
  return fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...MODELS[path]) },
    { weight: 4, arbitrary: hostileText },
    {
      weight: 2,
      arbitrary: fc
        .tuple(fc.constantFrom('openai/', 'anthropic/', 'gpt-', 'claude-'), hostileShortText)
        .map(([prefix, rest]) => `${prefix}${rest}`),
    },
    { weight: 1, arbitrary: wrongType },
  )
}

function dispatchBody(path: DispatchPath): fc.Arbitrary<Body> {
  const field = PROMPT_FIELD[path]
  const fields = {
    model: modelName(path),
    [field]: prompt[field],
    stream: fc.oneof({ weight: 3, arbitrary: fc.boolean() }, { weight: 1, arbitrary: wrongType }),
    stream_options: fc.oneof(fc.record({ include_usage: fc.oneof(fc.boolean(), wrongType) }), wrongType),
    max_tokens: fc.oneof(
      { weight: 3, arbitrary: fc.integer({ min: 1, max: 100 }) },
      { weight: 2, arbitrary: hostileNumber },
      { weight: 1, arbitrary: wrongType },
    ),
    temperature: fc.oneof(fc.double({ min: 0, max: 2, noNaN: true }), hostileNumber, wrongType),
    system: fc.oneof(text, fc.array(contentPart, { maxLength: 2 })),
    tools: fc.oneof(fc.constant([TOOL]), fc.array(hostileJson, { maxLength: 2 }), wrongType),
    user: text,
    metadata: hostileJson,
    generationConfig: fc.oneof(
      fc.record(
        { maxOutputTokens: fc.oneof(fc.integer({ min: 1, max: 100 }), hostileNumber, wrongType), temperature: hostileNumber },
        { requiredKeys: [] },
      ),
      wrongType,
    ),
    systemInstruction: fc.oneof(content, wrongType),
  }
  const required = takesRest(path) ? [field] : path === '/v1/messages' ? ['model', field, 'max_tokens'] : ['model', field]
  const body = fc.record(fields, { requiredKeys: required }) as fc.Arbitrary<Record<string, unknown>>
  const withExtra = fc.tuple(body, sometimes(fc.tuple(hostileKey, hostileJson))).map(([value, extra]) => {
    if (!extra) return value
    const out: Record<string, unknown> = { ...value }
    Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true })
    return out
  })
  return fc.oneof(
    { weight: 8, arbitrary: withExtra.map((value): Body => ({ kind: 'json', value })) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_BODIES).map((raw): Body => ({ kind: 'raw', text: raw })) },
  )
}

const RATE_LIMIT_POLICIES = [
  '1000;w=60',
  '0;w=0',
  '-1;w=-1',
  '1e308;w=1e308',
  'abc',
  ';;;;',
  '10;w=60;u=cents;s=prop',
  '10;w=60;s=user',
  '10;u=bogus',
  '99999999999999999999;w=1',
  '5;w=1.5;s=model',
] as const

/** The gateway's request headers (spec 8.2 and DESIGN 4), with hostile values a client can send. */
export const gatewayHeaders: fc.Arbitrary<Record<string, string>> = fc
  .tuple(
    fc.record(
      {
        'gw-user-id': headerValue,
        'gw-session-id': headerValue,
        'gw-customer-id': headerValue,
        'gw-ratelimit-policy': fc.oneof(fc.constantFrom(...RATE_LIMIT_POLICIES), headerValue),
        'gw-stream-meta': fc.oneof(fc.constant('frame'), headerValue),
      },
      { requiredKeys: [] },
    ),
    fc.dictionary(headerNameSuffix, headerValue, { maxKeys: 3 }),
  )
  .map(([named, properties]) => {
    const headers: Record<string, string> = {}
    for (const [name, value] of Object.entries(named)) if (value !== undefined) headers[name] = value
    for (const [name, value] of Object.entries(properties)) headers[`gw-property-${name.toLowerCase()}`] = value
    return headers
  })

export function dispatchCall(path: DispatchPath): fc.Arbitrary<HostileCall> {
  const modelInPath = modelName(path).map((model) => (typeof model === 'string' ? model : (JSON.stringify(model) ?? '')))
  const call = takesRest(path)
    ? fc
        .record({
          model: modelInPath,
          method: fc.oneof(
            { weight: 6, arbitrary: fc.constantFrom(...GEMINI_METHODS) },
            { weight: 1, arbitrary: hostileShortText },
          ),
        })
        .map(({ model, method }) => ({ route: path.replace('*', '{call}'), params: { call: geminiCallParam(model, method) } }))
    : fc.constant(dispatchRoute(path))
  return fc
    .record({
      at: call,
      body: dispatchBody(path),
      headers: gatewayHeaders,
      caller: fc.constantFrom<Caller>('apiKey', 'owner'),
      contentType: fc.oneof(
        { weight: 10, arbitrary: fc.constant<string | undefined>('application/json') },
        { weight: 1, arbitrary: fc.constantFrom<string | undefined>('text/plain', undefined) },
      ),
    })
    .map(({ at, body, headers, caller, contentType }) =>
      hostileCall({
        method: 'POST',
        ...at,
        query: '',
        headers,
        body,
        contentType,
        caller,
        expect: dispatchExpectation(path),
      }),
    )
}

/** A valid body for the path, changed by `fields`. */
export function validDispatchBody(path: DispatchPath, fields: Record<string, unknown> = {}): Record<string, unknown> {
  const base: Record<string, unknown> = takesRest(path)
    ? { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] }
    : path === '/v1/chat/completions'
      ? { model: MODELS[path][0], messages: [{ role: 'user', content: 'hi' }] }
      : path === '/v1/messages' || path === '/v1/messages/count_tokens'
        ? { model: MODELS[path][0], max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] }
        : path === '/v1/completions'
          ? { model: MODELS[path][0], prompt: 'hi' }
          : { model: MODELS[path][0], input: 'hi' }
  return { ...base, ...fields }
}

/** The calls every dispatch path gets on every run: the hostile model names, the wrong types, the raw bodies, the headers. */
export function dispatchExamples(path: DispatchPath): HostileCall[] {
  const call = (body: Body, headers: Record<string, string> = {}): HostileCall =>
    hostileCall({
      method: 'POST',
      ...dispatchRoute(path),
      query: '',
      headers,
      body,
      contentType: 'application/json',
      caller: 'apiKey',
      expect: dispatchExpectation(path),
    })
  const json = (fields: Record<string, unknown>): Body => ({ kind: 'json', value: validDispatchBody(path, fields) })
  const promptField = PROMPT_FIELD[path]
  return [
    call(json({})),
    ...[
      'openai/模型',
      'gpt-4o-😀',
      'gpt-4o\u0000',
      '模型',
      'gpt-4o\ud800',
      'openai/\udfff\ud800',
      'anthropic/\u0001',
      `openai/${'x'.repeat(10_000)}`,
    ].map((model) => call(json({ model }))),
    ...[1, null, [], {}, true].map((model) => call(json({ model }))),
    ...['hi', null, 1, {}, [null], [{}], [[]], [{ role: 'user', content: [{ type: 'text', text: 'a\u0000b' }] }]].map((value) =>
      call(json({ [promptField]: value })),
    ),
    call(
      json({
        [promptField]:
          promptField === 'messages'
            ? [{ role: 'user', content: 'a\u0000b' }]
            : promptField === 'contents'
              ? [{ role: 'user', parts: [{ text: 'a\u0000b' }] }]
              : 'a\u0000b',
      }),
    ),
    ...['10', -1, 0, 1e308, 1.5, null].map((maxTokens) => call(json({ max_tokens: maxTokens }))),
    call(json({ stream: true, stream_options: 'x' })),
    call(json({ stream: true, stream_options: { include_usage: 'yes' } })),
    call(json({ tools: [null] })),
    ...RAW_BODIES.map((text) => call({ kind: 'raw', text })),
    call(json({}), { 'gw-user-id': 'a\u0001b', 'gw-session-id': headerBytes('模型😀') }),
    call(json({}), { 'gw-property-env': headerBytes('\u007f模型'), [`gw-property-${'x'.repeat(200)}`]: 'x' }),
    call(json({}), { 'gw-ratelimit-policy': '0;w=0' }),
    call(json({}), { 'gw-ratelimit-policy': '1e308;w=1e308;u=cents' }),
    call(json({}), { 'gw-user-id': 'x'.repeat(8_000) }),
  ]
}
