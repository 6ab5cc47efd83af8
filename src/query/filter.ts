import { and, eq, gte, lte, or, type SQL, sql } from 'drizzle-orm'
import { badRequest } from '../errors'
import type { Database, Tables } from '../store/database'
import type { TimeWindow } from './time'

/**
 * The request filter language of spec 2.5, compiled to SQL with bound parameters only. A leaf is
 * `{<wrapper>: {<field>: {<operator>: value}}}` (several fields in one leaf are AND-ed; properties
 * nest one level more: `{properties: {<name>: {<operator>: value}}}`); a branch is
 * `{operator: 'and' | 'or', left, right}`; `"all"` matches everything. Field names, operators and
 * property names are checked against tables; values only ever travel as parameters. A field with no
 * value (NULL) matches no condition, `not-equals` and `not-contains` included.
 */
export type Wrapper = 'request' | 'request_response_rmt'
type FieldType = 'text' | 'number' | 'time' | 'boolean'
type Column = Tables['requests'][keyof Tables['requests']['_']['columns']]

interface Field {
  type: FieldType
  column: (t: Tables['requests']) => Column
  /** Numbers shown in one unit and stored in another (USD shown, nano-USD stored). */
  scale?: number
  /** The largest magnitude the column holds: 32-bit integers unless said (costs are 64-bit). */
  limit?: number
}

/** Postgres's `integer`; a value past it is refused as the caller's mistake, never sent to fail in the database. */
const INT32_LIMIT = 2 ** 31 - 1

export const FIELDS: Record<string, Field> = {
  request_id: { type: 'text', column: (t) => t.id },
  user_id: { type: 'text', column: (t) => t.userId },
  session_id: { type: 'text', column: (t) => t.sessionId },
  customer_id: { type: 'text', column: (t) => t.customerId },
  api_key_id: { type: 'text', column: (t) => t.apiKeyId },
  model: { type: 'text', column: (t) => t.model },
  provider: { type: 'text', column: (t) => t.provider },
  path: { type: 'text', column: (t) => t.path },
  status: { type: 'text', column: (t) => t.status },
  gateway_mode: { type: 'text', column: (t) => t.gatewayMode },
  error: { type: 'text', column: (t) => t.error },
  country: { type: 'text', column: (t) => t.country },
  http_status: { type: 'number', column: (t) => t.httpStatus },
  latency_ms: { type: 'number', column: (t) => t.latencyMs },
  time_to_first_token_ms: { type: 'number', column: (t) => t.timeToFirstTokenMs },
  prompt_tokens: { type: 'number', column: (t) => t.promptTokens },
  completion_tokens: { type: 'number', column: (t) => t.completionTokens },
  cache_read_tokens: { type: 'number', column: (t) => t.cacheReadTokens },
  cache_write_tokens: { type: 'number', column: (t) => t.cacheWriteTokens },
  total_tokens: { type: 'number', column: (t) => t.totalTokens },
  cost: { type: 'number', column: (t) => t.costNano, scale: 1e9, limit: Number.MAX_SAFE_INTEGER },
  estimated_cost: { type: 'number', column: (t) => t.estimatedCostNano, scale: 1e9, limit: Number.MAX_SAFE_INTEGER },
  ptb: { type: 'boolean', column: (t) => t.ptb },
  created_at: { type: 'time', column: (t) => t.createdAt },
}

export const OPERATORS: Record<FieldType, readonly string[]> = {
  text: ['equals', 'not-equals', 'contains', 'not-contains', 'like', 'ilike'],
  number: ['equals', 'not-equals', 'gt', 'gte', 'lt', 'lte'],
  time: ['equals', 'not-equals', 'gt', 'gte', 'lt', 'lte'],
  boolean: ['equals'],
}

export const MAX_DEPTH = 16
export const MAX_CONDITIONS = 100
const PROPERTY_NAME = /^[A-Za-z0-9_-]{1,64}$/

type Db = Pick<Database, 'tables' | 'dialect'>

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v)

/** LIKE's wildcards in GLOB's syntax, every other GLOB metacharacter made literal: SQLite's LIKE ignores case. */
function likeToGlob(pattern: string): string {
  let out = ''
  for (const c of pattern) {
    if (c === '%') out += '*'
    else if (c === '_') out += '?'
    else if (c === '*' || c === '?' || c === '[') out += `[${c}]`
    else out += c
  }
  return out
}

function value(field: string, type: FieldType, raw: unknown, scale = 1, limit = INT32_LIMIT): unknown {
  switch (type) {
    case 'text':
      if (typeof raw !== 'string') throw badRequest(`filter: ${field} takes a string`)
      return raw
    case 'number': {
      if (typeof raw !== 'number' || !Number.isFinite(raw)) throw badRequest(`filter: ${field} takes a number`)
      const stored = Math.round(raw * scale)
      if (Math.abs(stored) > limit) throw badRequest(`filter: ${field} takes a number from ${-limit / scale} to ${limit / scale}`)
      return stored
    }
    case 'boolean':
      if (typeof raw !== 'boolean') throw badRequest(`filter: ${field} takes true or false`)
      return raw
    case 'time': {
      const date = typeof raw === 'string' ? new Date(raw) : undefined
      if (!date || Number.isNaN(date.getTime())) throw badRequest(`filter: ${field} takes an ISO 8601 date-time`)
      return date
    }
  }
}

function textCondition(db: Db, target: SQL | Column, op: string, v: string): SQL {
  const pg = db.dialect === 'postgres'
  switch (op) {
    case 'equals':
      return sql`${target} = ${v}`
    case 'not-equals':
      return sql`${target} <> ${v}`
    // A literal substring: no wildcard in the value means anything, so nothing needs escaping.
    case 'contains':
      return pg ? sql`strpos(${target}, ${v}) > 0` : sql`instr(${target}, ${v}) > 0`
    case 'not-contains':
      return pg ? sql`strpos(${target}, ${v}) = 0` : sql`instr(${target}, ${v}) = 0`
    case 'like':
      return pg ? sql`${target} LIKE ${v}` : sql`${target} GLOB ${likeToGlob(v)}`
    default:
      return pg ? sql`${target} ILIKE ${v}` : sql`${target} LIKE ${v}`
  }
}

const COMPARISONS: Record<string, string> = { equals: '=', 'not-equals': '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' }

/** The value is encoded by the column itself (a date becomes what the dialect stores), and bound. */
const columnCondition = (column: Column, op: string, v: unknown): SQL =>
  sql`${column} ${sql.raw(COMPARISONS[op] as string)} ${sql.param(v, column)}`

class Compiler {
  private conditions = 0

  constructor(
    private readonly db: Db,
    private readonly wrapper: Wrapper,
  ) {}

  node(node: unknown, depth: number): SQL {
    if (depth > MAX_DEPTH) throw badRequest(`filter: nested deeper than ${MAX_DEPTH} levels`)
    if (!isObject(node)) throw badRequest('filter: every node must be an object (or the whole filter "all")')
    if ('operator' in node) {
      const { operator, left, right, ...rest } = node
      if (operator !== 'and' && operator !== 'or') throw badRequest('filter: a branch operator must be "and" or "or"')
      if (Object.keys(rest).length > 0) throw badRequest(`filter: unknown key "${Object.keys(rest)[0]}" in a branch`)
      const both = [this.node(left, depth + 1), this.node(right, depth + 1)]
      return (operator === 'and' ? and(...both) : or(...both)) as SQL
    }
    const keys = Object.keys(node)
    if (keys.length !== 1 || keys[0] !== this.wrapper)
      throw badRequest(`filter: a leaf is {"${this.wrapper}": {<field>: {<operator>: value}}}`)
    const fields = node[this.wrapper]
    if (!isObject(fields) || Object.keys(fields).length === 0) throw badRequest('filter: a leaf names at least one field')
    return and(...Object.entries(fields).map(([field, test]) => this.field(field, test))) as SQL
  }

  private field(field: string, test: unknown): SQL {
    if (field === 'properties') {
      if (!isObject(test) || Object.keys(test).length === 0)
        throw badRequest('filter: properties take {<name>: {<operator>: value}}')
      return and(...Object.entries(test).map(([name, inner]) => this.property(name, inner))) as SQL
    }
    // Own keys only: `constructor` or `toString` must name no field, not Object's prototype.
    const known = Object.hasOwn(FIELDS, field) ? FIELDS[field] : undefined
    if (!known) throw badRequest(`filter: unknown field "${field}"`)
    const [op, raw] = this.operation(field, known.type, test)
    const v = value(field, known.type, raw, known.scale, known.limit)
    const column = known.column(this.db.tables.requests)
    return known.type === 'text' ? textCondition(this.db, column, op, v as string) : columnCondition(column, op, v)
  }

  private property(name: string, test: unknown): SQL {
    if (!PROPERTY_NAME.test(name)) throw badRequest(`filter: property name "${name}" is not letters, digits, - and _`)
    const [op, raw] = this.operation(`properties.${name}`, 'text', test)
    const key = name.toLowerCase()
    const column = this.db.tables.requests.properties
    const extracted = this.db.dialect === 'postgres' ? sql`(${column} ->> ${key})` : sql`json_extract(${column}, ${`$."${key}"`})`
    return textCondition(this.db, extracted, op, value(`properties.${name}`, 'text', raw) as string)
  }

  private operation(field: string, type: FieldType, test: unknown): [string, unknown] {
    if (!isObject(test) || Object.keys(test).length !== 1)
      throw badRequest(`filter: ${field} takes exactly one {<operator>: value}`)
    const [op, raw] = Object.entries(test)[0] as [string, unknown]
    if (!OPERATORS[type].includes(op))
      throw badRequest(`filter: operator "${op}" does not apply to ${field}; use ${OPERATORS[type].join(', ')}`)
    this.conditions += 1
    if (this.conditions > MAX_CONDITIONS) throw badRequest(`filter: more than ${MAX_CONDITIONS} conditions`)
    return [op, raw]
  }
}

/** The filter as a SQL condition, or undefined for "all". The organisation is added by `requestScope`, not here. */
export function compileFilter(db: Db, filter: unknown, wrapper: Wrapper = 'request'): SQL | undefined {
  if (filter === 'all' || filter === undefined) return undefined
  return new Compiler(db, wrapper).node(filter, 1)
}

/** The one place the organisation's scope joins a request query. */
export function requestScope(db: Db, orgId: string, filter: unknown, wrapper: Wrapper = 'request'): SQL {
  const compiled = compileFilter(db, filter, wrapper)
  const scope = eq(db.tables.requests.orgId, orgId)
  return (compiled ? and(scope, compiled) : scope) as SQL
}

/** The organisation's requests a filter selects within a time window: the condition of every traffic view. */
export function windowScope(db: Db, orgId: string, filter: unknown, window: Pick<TimeWindow, 'start' | 'end'>): SQL {
  const { createdAt } = db.tables.requests
  return and(requestScope(db, orgId, filter ?? 'all'), gte(createdAt, window.start), lte(createdAt, window.end)) as SQL
}

/** The fields a filter mentions, for feature gates (filtering by user needs the Users feature). */
export function mentionsField(filter: unknown, field: string): boolean {
  if (!isObject(filter)) return false
  if ('operator' in filter) return mentionsField(filter.left, field) || mentionsField(filter.right, field)
  return Object.values(filter).some((fields) => isObject(fields) && field in fields)
}
