/**
 * One chat completion through an arm, timed the way a user feels it: a plain answer until its last
 * byte, a stream until its first body byte (the first frame), then read to the end so the connection
 * is reusable.
 */
import type { Target } from './arms'

const messages = [{ role: 'user', content: 'hi' }]
export const PLAIN_BODY = JSON.stringify({ model: 'gpt-4o', messages })
export const STREAM_BODY = JSON.stringify({ model: 'gpt-4o', messages, stream: true, stream_options: { include_usage: true } })

function refuse(arm: Target, response: Response, text: string): never {
  throw new Error(`${arm.name} answered ${response.status}: ${text.slice(0, 300)}`)
}

/** Milliseconds until the whole answer arrived. */
export async function timePlain(arm: Target): Promise<number> {
  const started = performance.now()
  const response = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: PLAIN_BODY })
  const text = await response.text()
  const elapsed = performance.now() - started
  if (response.status !== 200) refuse(arm, response, text)
  return elapsed
}

/** Milliseconds until the stream's first body bytes arrived. */
export async function timeFirstByte(arm: Target): Promise<number> {
  const started = performance.now()
  const response = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: STREAM_BODY })
  if (response.status !== 200 || !response.body) refuse(arm, response, await response.text())
  const reader = response.body.getReader()
  let chunk = await reader.read()
  const elapsed = performance.now() - started
  while (!chunk.done) chunk = await reader.read()
  return elapsed
}

/** The fake provider's count of chat completions served. */
export async function providerCalls(fakePort: number): Promise<number> {
  const stats = (await (await fetch(`http://127.0.0.1:${fakePort}/stats`)).json()) as { calls: number }
  return stats.calls
}

/**
 * Before anything is timed: each arm answers a plain call and a stream with the fake provider's text,
 * and the provider saw exactly those two calls (so no arm answers from a cache or a stub of its own).
 */
export async function verifyArm(arm: Target, fakePort: number): Promise<void> {
  const before = await providerCalls(fakePort)
  const plain = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: PLAIN_BODY })
  const plainText = await plain.text()
  if (plain.status !== 200 || !plainText.includes('Hello from the fake provider.')) refuse(arm, plain, plainText)
  const stream = await fetch(arm.url, { method: 'POST', headers: arm.headers, body: STREAM_BODY })
  const streamText = await stream.text()
  if (stream.status !== 200 || !streamText.includes(' provider.') || !streamText.includes('data: [DONE]'))
    refuse(arm, stream, streamText)
  const reached = (await providerCalls(fakePort)) - before
  if (reached !== 2) throw new Error(`${arm.name}: the fake provider saw ${reached} calls for 2 requests`)
}
