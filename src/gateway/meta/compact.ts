/**
 * The in-process metadata store's entries in their compact form: a call's values without their names,
 * the request id only when it differs from the key (which is lower case). Half the bytes of the
 * entry's JSON, which at the store's full 200,000 entries is about 40 MB less memory.
 */
import type { CallAttempt } from '../../store/json-columns'
import type { GatewayMeta, StoredMeta } from './store'

/** A call's fields as the in-process store writes them, in the order a lookup answers them; `requestId` is the entry's key. */
const META_FIELDS = [
  'provider',
  'model',
  'status',
  'requestCost',
  'estimatedCost',
  'creditsRemaining',
  'gatewayMode',
  'translationWarning',
  'downgradedFrom',
  'attempts',
  'cached',
  'cacheSavings',
] as const satisfies ReadonlyArray<Exclude<keyof GatewayMeta, 'requestId'>>
const ATTEMPT_FIELDS = ['provider', 'model', 'httpStatus', 'error', 'latencyMs'] as const satisfies ReadonlyArray<
  keyof CallAttempt
>
// A field added to GatewayMeta or CallAttempt and not to the lists above fails to compile here.
const everyField: [
  Exclude<keyof GatewayMeta, 'requestId' | (typeof META_FIELDS)[number]>,
  Exclude<keyof CallAttempt, (typeof ATTEMPT_FIELDS)[number]>,
] extends [never, never]
  ? true
  : never = true
void everyField
const ATTEMPTS = META_FIELDS.indexOf('attempts')
/** Where the fields start in an entry: after the organisation and the request id. */
const FIRST_FIELD = 2

/** An object's values in the order of `fields`, after `into`'s; absent ones at the end left out rather than written as nulls. */
const valuesOf = <T>(object: T, fields: ReadonlyArray<keyof T>, into: unknown[] = []): unknown[] => {
  for (const field of fields) into.push(object[field])
  while (into.length > 0 && into[into.length - 1] === undefined) into.pop()
  return into
}

const objectOf = (values: readonly unknown[], fields: readonly string[], into: Record<string, unknown> = {}) => {
  for (let i = 0; i < values.length; i++) if (values[i] !== null) into[fields[i] as string] = values[i]
  return into
}

/** An entry as the in-process store keeps it. */
export function compactEntry({ orgId, meta }: StoredMeta, id: string): string {
  const values = valuesOf(meta, META_FIELDS, [orgId, meta.requestId === id ? 0 : meta.requestId])
  const attempts = values[FIRST_FIELD + ATTEMPTS] as CallAttempt[] | undefined
  if (attempts) values[FIRST_FIELD + ATTEMPTS] = attempts.map((attempt) => valuesOf(attempt, ATTEMPT_FIELDS))
  return JSON.stringify(values)
}

export function entryOf(compact: string, id: string): StoredMeta {
  const [orgId, requestId, ...values] = JSON.parse(compact) as [string, string | 0, ...unknown[]]
  const meta = objectOf(values, META_FIELDS, { requestId: requestId === 0 ? id : requestId }) as unknown as GatewayMeta
  if (meta.attempts)
    meta.attempts = (meta.attempts as unknown as unknown[][]).map(
      (attempt) => objectOf(attempt, ATTEMPT_FIELDS) as unknown as CallAttempt,
    )
  return { orgId, meta }
}
