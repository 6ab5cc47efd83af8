/**
 * One model call through an arm, timed the way a user feels it: a plain answer until its last byte, a
 * stream until its first body byte (the first frame), then read to the end so the connection is
 * reusable. An arm's call is the suite's chat completion unless the arm brings its own (another
 * caller's format, another provider's).
 */
import type { FakeRoute, Target } from './arms'

const messages = [{ role: 'user', content: 'hi' }]
/** OpenAI's chat completion; a stream asks for its usage, as gw's users' SDKs do to see what a call cost. */
export const chatBody = (model: string, stream: boolean): string =>
  JSON.stringify({ model, messages, ...(stream ? { stream: true, stream_options: { include_usage: true } } : {}) })
export const PLAIN_BODY = chatBody('gpt-4o', false)
export const STREAM_BODY = chatBody('gpt-4o', true)

/** The same two-word prompt in Anthropic's Messages; `max_tokens` is required there. */
export const messagesBody = (model: string, stream: boolean): string =>
  JSON.stringify({ model, max_tokens: 64, messages, ...(stream ? { stream: true } : {}) })
/** In Google's generateContent: the model and whether it streams are in the URL. */
export const GENERATE_CONTENT_BODY = JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'hi' }] }] })
/** In Bedrock's Converse: the model and whether it streams are in the URL. */
export const CONVERSE_BODY = JSON.stringify({ messages: [{ role: 'user', content: [{ text: 'hi' }] }] })

function refuse(arm: Target, response: Response, text: string): never {
  throw new Error(`${arm.name} answered ${response.status}: ${text.slice(0, 300)}`)
}

/** The headers of the arm's next call. */
export const headersOf = (arm: Target): Record<string, string> => arm.nextHeaders?.() ?? arm.headers

/** Milliseconds until the whole answer arrived. */
export async function timePlain(arm: Target): Promise<number> {
  const started = performance.now()
  const response = await fetch(arm.url, { method: 'POST', headers: headersOf(arm), body: arm.body ?? PLAIN_BODY })
  const text = await response.text()
  const elapsed = performance.now() - started
  if (response.status !== 200) refuse(arm, response, text)
  return elapsed
}

/** Milliseconds until the stream's first body bytes arrived. */
export async function timeFirstByte(arm: Target): Promise<number> {
  const started = performance.now()
  const response = await fetch(arm.stream?.url ?? arm.url, {
    method: 'POST',
    headers: headersOf(arm),
    body: arm.stream?.body ?? STREAM_BODY,
  })
  if (response.status !== 200 || !response.body) refuse(arm, response, await response.text())
  const reader = response.body.getReader()
  let chunk = await reader.read()
  const elapsed = performance.now() - started
  while (!chunk.done) chunk = await reader.read()
  return elapsed
}

/** The fake provider's counts of model calls served, in all and by format (token requests apart). */
export async function providerStats(fakePort: number): Promise<{ calls: number; routes: Record<FakeRoute, number> }> {
  return (await (await fetch(`http://127.0.0.1:${fakePort}/stats`)).json()) as {
    calls: number
    routes: Record<FakeRoute, number>
  }
}

/**
 * Before anything is timed: each arm answers a plain call and a stream with the fake provider's text,
 * the stream ends as its format ends one, and the provider saw exactly those two calls, in the format
 * the arm means to reach (so no arm answers from a cache or a stub of its own, nor reaches another
 * provider than it says).
 */
export async function verifyArm(arm: Target, fakePort: number): Promise<void> {
  const before = await providerStats(fakePort)
  const plain = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: arm.body ?? PLAIN_BODY })
  const plainText = await plain.text()
  if (plain.status !== 200 || !plainText.includes('Hello from the fake provider.')) refuse(arm, plain, plainText)
  const stream = await fetch(arm.stream?.url ?? arm.url, {
    method: 'POST',
    headers: arm.headers,
    body: arm.stream?.body ?? STREAM_BODY,
  })
  const streamText = await stream.text()
  if (stream.status !== 200 || !streamText.includes(' provider.') || !streamText.includes(arm.streamEnd ?? 'data: [DONE]'))
    refuse(arm, stream, streamText)
  const after = await providerStats(fakePort)
  const reached = arm.reaches ? after.routes[arm.reaches] - before.routes[arm.reaches] : after.calls - before.calls
  const all = after.calls - before.calls
  if (reached !== 2 || all !== 2)
    throw new Error(`${arm.name}: the fake provider saw ${all} calls (${reached} as ${arm.reaches ?? 'any'}) for 2 requests`)
}

/**
 * Four callers back to back for a while, plain and streamed: enough for the JIT to compile what the
 * timed part runs. gw's compilation takes about 15,000 calls (1.3 s of the JIT's threads' CPU, which on
 * 2 cores competes with the event loop); a server measured before that is measured warming up.
 */
export async function warmUp(target: Target, seconds: number): Promise<void> {
  const until = performance.now() + seconds * 1000
  const caller = async () => {
    while (performance.now() < until) {
      await timePlain(target)
      await timeFirstByte(target)
    }
  }
  await Promise.all([caller(), caller(), caller(), caller()])
}
