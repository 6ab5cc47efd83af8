import type { RequestRecord } from '../../src/store/repositories/requests'

/**
 * A request-log record for tests that seed the log directly: a plain successful, priced chat call
 * at a fixed time, changed by `fields`. Tests name only what their assertions depend on.
 */
export const requestRecord = (fields: Partial<RequestRecord> & Pick<RequestRecord, 'id' | 'orgId'>): RequestRecord => ({
  apiKeyId: null,
  userId: null,
  sessionId: null,
  customerId: null,
  stripeCustomerId: null,
  memberId: null,
  properties: null,
  provider: 'openai',
  model: 'gpt-4o',
  path: '/v1/chat/completions',
  gatewayMode: 'passthrough',
  translationWarning: null,
  status: 'success',
  httpStatus: 200,
  latencyMs: 100,
  timeToFirstTokenMs: null,
  promptTokens: 10,
  completionTokens: 10,
  cacheReadTokens: 0,
  cacheWriteTokens: 0,
  totalTokens: 20,
  costNano: 1_000_000,
  costNote: null,
  priceSource: null,
  estimatedCostNano: null,
  ptb: true,
  error: null,
  country: null,
  attempts: null,
  cached: false,
  fallbackChainId: null,
  cacheSavedNano: null,
  downgradedFrom: null,
  creditsRemainingNano: null,
  createdAt: new Date(Date.UTC(2026, 0, 1)),
  ...fields,
})
