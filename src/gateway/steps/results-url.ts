import { asRecord, parseJson } from '../providers/provider'

/**
 * A message batch (or a page of them) with each `results_url` at gw's own address: the provider's would
 * take the caller's SDK, with the caller's gw key, to the provider itself.
 */
export function pointResultsAtGw(text: string, origin: string): string {
  const payload = asRecord(parseJson(text))
  if (!payload) return text
  const batches = Array.isArray(payload.data) ? payload.data : [payload]
  for (const batch of batches) {
    const record = asRecord(batch)
    if (typeof record?.results_url === 'string' && typeof record.id === 'string')
      record.results_url = `${origin}/v1/messages/batches/${encodeURIComponent(record.id)}/results`
  }
  return JSON.stringify(payload)
}
