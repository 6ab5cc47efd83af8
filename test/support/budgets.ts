import { expect } from 'bun:test'
import type { Harness, Org } from './harness'

/**
 * What the budget tests share: a chat call whose worst case gw can bound (its body is longer than the
 * prompt tokens the fake provider reports, as a real prompt always is, and it caps its output at what
 * the fake writes), and the spend the request log holds.
 */

/** The fake's usage of a gpt-4o chat call: 1,000 prompt and 500 completion tokens, $0.0075. */
export const CALL_COST_NANO = 1_000 * 2_500 + 500 * 10_000
export const CALL_TOKENS = 1_500

const PROMPT = 'x'.repeat(1_100)

export const data = async <T>(response: Response): Promise<T> => ((await response.json()) as { data: T }).data
export const errorOf = async (response: Response) =>
  ((await response.json()) as { error: { code: string; message: string; type?: string } }).error

export function chat(
  h: Harness,
  token: string,
  options: { headers?: Record<string, string>; model?: string; content?: string } = {},
): Promise<Response> {
  return h.request('POST', '/v1/chat/completions', {
    token,
    headers: options.headers,
    body: {
      model: options.model ?? 'gpt-4o',
      max_tokens: 500,
      messages: [{ role: 'user', content: options.content ?? PROMPT }],
    },
  })
}

export async function putLimit(h: Harness, org: Org, body: Record<string, unknown>, path = '/v1/budget/window-limit') {
  const response = await h.request('PUT', path, { token: org.ownerSession, body })
  expect(response.status).toBe(200)
  return data<{ id: string }>(response)
}

/** What the request log says an organisation's successful calls used: how many, their cost, their tokens. */
export async function logged(h: Harness, orgId: string) {
  await h.requestLog.flush()
  const all = { orgId, start: new Date(0), end: new Date(Date.now() + 3_600_000), match: {} }
  return {
    successes: await h.store.requests.spendOf(all, 'requests'),
    usd: await h.store.requests.spendOf(all, 'usd'),
    tokens: await h.store.requests.spendOf(all, 'tokens'),
  }
}
