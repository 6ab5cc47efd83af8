import { nanoToUsd } from '../../money/cost'
import type { RequestRecord } from '../../store/repositories/requests'
import type { GatewayMeta, StoredMeta } from './store'

/**
 * A finished call's metadata, from its request-log record: settlement puts this in the store, and the
 * lookup reads it back from the log when the store no longer holds the call (its bound passed at a
 * high rate, another instance served it, a restart), so spec 4.2's 300 seconds do not depend on how
 * much memory the store may take. Written field by field: a spread of a small object for each
 * optional field was a dozen objects a call.
 */
export function metaOfRecord(record: RequestRecord): StoredMeta {
  const meta: GatewayMeta = { requestId: record.id, provider: record.provider, model: record.model, status: record.status }
  if (record.costNano !== null) meta.requestCost = nanoToUsd(record.costNano)
  if (record.estimatedCostNano !== null) meta.estimatedCost = nanoToUsd(record.estimatedCostNano)
  if (record.creditsRemainingNano !== null) meta.creditsRemaining = nanoToUsd(record.creditsRemainingNano)
  if (record.gatewayMode !== null) meta.gatewayMode = record.gatewayMode
  if (record.translationWarning) meta.translationWarning = record.translationWarning
  if (record.downgradedFrom) meta.downgradedFrom = record.downgradedFrom
  if (record.attempts?.length) meta.attempts = record.attempts
  if (record.cached) {
    meta.cached = true
    if (record.cacheSavedNano !== null) meta.cacheSavings = nanoToUsd(record.cacheSavedNano)
  }
  return { orgId: record.orgId, meta }
}

/** When a call's metadata lapses: the TTL after it finished (its record holds its start and how long it took). */
export const lapsesAt = (record: RequestRecord, ttlSeconds: number): number =>
  record.createdAt.getTime() + (record.latencyMs ?? 0) + ttlSeconds * 1000
