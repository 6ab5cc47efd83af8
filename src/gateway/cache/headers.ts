import { badRequest } from '../../errors'
import { readCacheControl } from './key'

/** What the caller asked of the response cache on one call. */
export interface CacheRequest {
  read: boolean
  save: boolean
  /** Separates answers to the same request: a caller's namespace (`Gw-Cache-Seed`). */
  seed: string
  /** How many different answers one request collects before they are served at random. */
  bucketMax: number
  ttlMs: number
}

/** How long an answer is kept when the caller's Cache-Control names no max-age, and the most it may. */
export const CACHE_TTL = { defaultSeconds: 24 * 3600, maxSeconds: 30 * 24 * 3600 } as const
/** The most answers one request may collect (`Gw-Cache-Bucket-Max-Size`). */
export const MAX_BUCKET = 20
const MAX_SEED_LENGTH = 255
const PRINTABLE = /^[\x20-\x7e]*$/

function flag(headers: Headers, name: string): boolean | undefined {
  const raw = headers.get(name)
  if (raw === null) return undefined
  const value = raw.trim().toLowerCase()
  if (value === 'true') return true
  if (value === 'false') return false
  throw badRequest(`header ${name} must be true or false; it was ${JSON.stringify(raw.slice(0, 40))}`)
}

/**
 * The caller's cache headers: `Gw-Cache-Enabled` reads and saves, `Gw-Cache-Read` and `Gw-Cache-Save`
 * each alone (and win over Enabled), `Gw-Cache-Seed`, `Gw-Cache-Bucket-Max-Size` and the TTL from
 * `Cache-Control: max-age`. Undefined when the call does not use the cache; a malformed value is a 400.
 */
export function readCacheRequest(headers: Headers): CacheRequest | undefined {
  const enabled = flag(headers, 'gw-cache-enabled')
  const read = flag(headers, 'gw-cache-read') ?? enabled ?? false
  const save = flag(headers, 'gw-cache-save') ?? enabled ?? false
  if (!read && !save) return undefined
  const seed = headers.get('gw-cache-seed') ?? ''
  if (seed.length > MAX_SEED_LENGTH || !PRINTABLE.test(seed))
    throw badRequest(`header gw-cache-seed must be at most ${MAX_SEED_LENGTH} printable ASCII characters`)
  const bucketRaw = headers.get('gw-cache-bucket-max-size')
  const bucketMax = bucketRaw === null ? 1 : Number(bucketRaw.trim())
  if (!Number.isInteger(bucketMax) || bucketMax < 1 || bucketMax > MAX_BUCKET || bucketRaw?.trim() === '')
    throw badRequest(`header gw-cache-bucket-max-size must be a whole number from 1 to ${MAX_BUCKET}`)
  const maxAge = readCacheControl(headers.get('cache-control'))
  const seconds = Math.min(maxAge ?? CACHE_TTL.defaultSeconds, CACHE_TTL.maxSeconds)
  // `max-age=0` or `no-store`: the answer may be read from the cache but is not kept.
  return { read, save: save && seconds > 0, seed, bucketMax, ttlMs: seconds * 1000 }
}
