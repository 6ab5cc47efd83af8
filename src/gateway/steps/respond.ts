import { headerValue } from '../../util/header-value'
import type { CallFacts } from '../call'

/**
 * The Gw-* headers (spec 4.3) on every gateway answer, errors included. Values that come from the
 * caller or the provider (the model, the names in a warning, a policy) go through `headerValue`, so
 * setting them cannot throw.
 */
export function withGatewayHeaders(facts: CallFacts, status: 'success' | 'error', response: Response): Response {
  const headers = response.headers
  headers.set('Gw-Id', facts.requestId)
  headers.set('Gw-Provider', facts.provider)
  headers.set('Gw-Model', headerValue(facts.model))
  headers.set('Gw-Status', status)
  headers.set('Gw-Gateway-Mode', facts.mode)
  if (facts.translationWarning) headers.set('Gw-Translation-Warning', headerValue(facts.translationWarning))
  if (facts.downgradedFrom) headers.set('Gw-Downgraded-From', headerValue(facts.downgradedFrom))
  if (facts.cacheStatus) headers.set('Gw-Cache', facts.cacheStatus)
  if (facts.attempts?.length) headers.set('Gw-Attempts', String(facts.attempts.length))
  const { limit } = facts
  if (limit) {
    headers.set('Gw-RateLimit-Limit', String(limit.limit))
    headers.set('Gw-RateLimit-Remaining', String(limit.remaining))
    headers.set('Gw-RateLimit-Policy', headerValue(limit.policy))
    if (!limit.allowed) headers.set('Retry-After', String(limit.retryAfterSeconds))
  }
  return response
}

/** A JSON answer of the gateway's own (a whole provider answer, or an error in the caller's format). */
export const jsonAnswer = (text: string, status: number, extraHeaders: Record<string, string> = {}): Response =>
  new Response(text, { status, headers: { 'content-type': 'application/json', ...extraHeaders } })
