import type { GatewayMeta, MetaStore } from './store'

export type LookupResult = { status: 200; body: GatewayMeta } | { status: 202; body: { status: 'pending' } } | { status: 404 }

/**
 * Spec 4.2: no entry for the id (in flight, lapsed, never existed) is 202 pending; an entry of another
 * organisation is 404, never 403, so the id's existence is not disclosed beyond "not yours".
 */
export async function lookupMeta(store: MetaStore, orgId: string, requestId: string): Promise<LookupResult> {
  const entry = await store.get(requestId)
  if (!entry) return { status: 202, body: { status: 'pending' } }
  if (entry.orgId !== orgId) return { status: 404 }
  return { status: 200, body: entry.meta }
}
