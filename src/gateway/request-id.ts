import { orderedId } from '../util/ordered-id'

/**
 * A request's id: the `Gw-Id` header, the `gw` frame's `requestId` and the request log's key. It is a
 * UUID with version 4 and its variant, as spec 2.1's pattern requires, whose first 48 bits are the
 * creation time in milliseconds (then a counter and 62 random bits). Ids made later sort later, so the
 * log's primary-key indexes grow at one end instead of dirtying a random page per record: the writer
 * thread's cost per record fell from 51-60 to 31-32 µs on a new database, and stays there as the
 * table grows, where random ids cost 86-94 µs a record at 200 MB (bench/results/2026-11-22-log-writer.md).
 */
export function newRequestId(): string {
  const ordered = orderedId()
  return `${ordered.slice(0, 14)}4${ordered.slice(15)}`
}
