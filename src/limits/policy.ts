import { badRequest } from '../errors'

/**
 * A token-bucket policy (spec 2.3 and 8.2), from the `Gw-RateLimit-Policy` header or an organisation
 * rule. Header form: `<quota>;w=<seconds>;u=<unit>;s=<segment>[;p=<property>]`.
 */
export const UNITS = ['request', 'cents'] as const
export const SEGMENTS = ['global', 'user', 'prop', 'model'] as const
export type Unit = (typeof UNITS)[number]
export type Segment = (typeof SEGMENTS)[number]

export interface Policy {
  quota: number
  windowSeconds: number
  unit: Unit
  segment: Segment
  /** For `s=prop`: which `Gw-Property-<name>` header supplies the value (lower-cased). */
  property?: string
}

export const DEFAULT_WINDOW_SECONDS = 3600
export const MAX_WINDOW_SECONDS = 366 * 24 * 3600
const PROPERTY_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** The canonical header form, echoed back in `Gw-RateLimit-Policy`. */
export const formatPolicy = (p: Policy): string =>
  `${p.quota};w=${p.windowSeconds};u=${p.unit};s=${p.segment}${p.property ? `;p=${p.property}` : ''}`

/** Checks a policy's parts, whichever way it arrived; the message names the bad part. */
export function validatePolicy(p: Policy, where: string): Policy {
  if (!(UNITS as readonly string[]).includes(p.unit)) throw badRequest(`${where}: u (unit) must be request or cents`)
  if (!(SEGMENTS as readonly string[]).includes(p.segment))
    throw badRequest(`${where}: s (segment) must be global, user, prop or model`)
  if (!Number.isFinite(p.quota) || p.quota <= 0) throw badRequest(`${where}: the quota must be a positive number`)
  if (p.unit === 'request' && !Number.isInteger(p.quota)) throw badRequest(`${where}: a quota of requests must be a whole number`)
  if (!Number.isInteger(p.windowSeconds) || p.windowSeconds < 1 || p.windowSeconds > MAX_WINDOW_SECONDS) {
    throw badRequest(`${where}: w must be a whole number of seconds from 1 to ${MAX_WINDOW_SECONDS}`)
  }
  if (p.segment === 'prop') {
    if (p.property === undefined || !PROPERTY_NAME.test(p.property)) {
      throw badRequest(`${where}: s=prop needs p=<property name> (letters, digits, - and _), naming a Gw-Property-<name> header`)
    }
  } else if (p.property !== undefined) {
    throw badRequest(`${where}: p=<property> applies only to s=prop`)
  }
  return p.property ? { ...p, property: p.property.toLowerCase() } : p
}

/** Parses the header; a malformed policy is refused (400) naming the bad part, never ignored. */
export function parsePolicyHeader(header: string): Policy {
  const where = `invalid Gw-RateLimit-Policy "${header}"`
  const [quotaPart, ...rest] = header.split(';').map((part) => part.trim())
  if (!quotaPart || !/^\d+(\.\d+)?$/.test(quotaPart))
    throw badRequest(`${where}: it must start with a positive quota, e.g. 100;w=3600`)
  const seen = new Map<string, string>()
  for (const part of rest) {
    const match = /^([a-z])=(.+)$/.exec(part)
    if (!match) throw badRequest(`${where}: "${part}" is not <key>=<value>`)
    const [, key, value] = match as unknown as [string, string, string]
    if (!['w', 'u', 's', 'p'].includes(key)) throw badRequest(`${where}: unknown part "${key}"; allowed are w, u, s and p`)
    if (seen.has(key)) throw badRequest(`${where}: "${key}" is given twice`)
    seen.set(key, value)
  }
  const w = seen.get('w')
  if (w !== undefined && !/^\d+$/.test(w)) throw badRequest(`${where}: w must be a whole number of seconds`)
  return validatePolicy(
    {
      quota: Number(quotaPart),
      windowSeconds: w === undefined ? DEFAULT_WINDOW_SECONDS : Number(w),
      unit: (seen.get('u') ?? 'request') as Unit,
      segment: (seen.get('s') ?? 'global') as Segment,
      property: seen.get('p'),
    },
    where,
  )
}
