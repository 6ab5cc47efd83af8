import Anthropic from '@anthropic-ai/sdk'
import OpenAI from 'openai'
import type { RequestRecord } from '../../src/store/repositories/requests'
import { type SseEvent, SseParser } from '../../src/util/sse'
import type { Harness } from './harness'

/**
 * What tests that call gw over HTTP with the official SDKs share: the clients, a raw stream read into
 * its events, what a call rejects with, and the record the request log writes of it.
 */

/** The official SDKs pointed at gw with a caller's key (Bearer for both), retrying nothing themselves. */
export function gatewaySdks(url: string, apiKey: string): { openai: OpenAI; anthropic: Anthropic } {
  return {
    openai: new OpenAI({ apiKey, baseURL: `${url}/v1`, maxRetries: 0 }),
    anthropic: new Anthropic({ authToken: apiKey, apiKey: null, baseURL: url, maxRetries: 0 }),
  }
}

/** What a promise rejects with, or undefined when it resolves. */
export async function failureOf(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
    return undefined
  } catch (error) {
    return error
  }
}

/** A streamed call to gw at `url`, read to its end and parsed into its SSE events. */
export async function rawStream(
  url: string,
  token: string,
  path: string,
  body: Record<string, unknown>,
  headers: Record<string, string> = {},
): Promise<{ response: Response; events: SseEvent[] }> {
  const response = await fetch(`${url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify({ ...body, stream: true }),
  })
  const parser = new SseParser()
  const events = parser.push(new Uint8Array(await response.arrayBuffer()))
  return { response, events: [...events, ...parser.end()] }
}

/** The request record of a call, once the log has written it (a stream's is written when the stream ends). */
export async function writtenRecord(h: Harness, orgId: string, requestId: string | null): Promise<RequestRecord> {
  if (!requestId) throw new Error('the answer has no Gw-Id')
  for (let i = 0; i < 100; i++) {
    await h.requestLog.flush()
    const record = await h.store.requests.get(orgId, requestId)
    if (record) return record
    await Bun.sleep(20)
  }
  throw new Error(`no record for ${requestId}`)
}
