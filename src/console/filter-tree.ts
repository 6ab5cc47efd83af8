/**
 * The request filter as the console builds it, a tree of conditions under and/or groups, and its
 * translation to and from the API's filter language (leaves `{request: {field: {operator: value}}}`,
 * branches `{operator, left, right}`, or `"all"`). The field and operator lists mirror the server's
 * (src/query/filter.ts); a test holds them equal.
 */
export type FieldType = 'text' | 'number' | 'time' | 'boolean'

export const FILTER_FIELDS: Readonly<Record<string, { label: string; type: FieldType }>> = {
  model: { label: 'Model', type: 'text' },
  provider: { label: 'Provider', type: 'text' },
  status: { label: 'Status', type: 'text' },
  http_status: { label: 'HTTP status', type: 'number' },
  path: { label: 'Path', type: 'text' },
  user_id: { label: 'User', type: 'text' },
  session_id: { label: 'Session', type: 'text' },
  customer_id: { label: 'Customer', type: 'text' },
  api_key_id: { label: 'API key id', type: 'text' },
  request_id: { label: 'Request id', type: 'text' },
  gateway_mode: { label: 'Gateway mode', type: 'text' },
  error: { label: 'Error', type: 'text' },
  country: { label: 'Country', type: 'text' },
  latency_ms: { label: 'Latency (ms)', type: 'number' },
  time_to_first_token_ms: { label: 'Time to first token (ms)', type: 'number' },
  prompt_tokens: { label: 'Prompt tokens', type: 'number' },
  completion_tokens: { label: 'Completion tokens', type: 'number' },
  cache_read_tokens: { label: 'Cache read tokens', type: 'number' },
  cache_write_tokens: { label: 'Cache write tokens', type: 'number' },
  total_tokens: { label: 'Total tokens', type: 'number' },
  cost: { label: 'Cost (USD)', type: 'number' },
  estimated_cost: { label: 'Estimated cost (USD)', type: 'number' },
  ptb: { label: 'Paid by gw credits', type: 'boolean' },
  created_at: { label: 'Time', type: 'time' },
}

/** A condition on one property of the request, named by `property`. */
export const PROPERTY_FIELD = 'property'

export const OPERATORS: Readonly<Record<FieldType, readonly string[]>> = {
  text: ['equals', 'not-equals', 'contains', 'not-contains', 'like', 'ilike'],
  number: ['equals', 'not-equals', 'gt', 'gte', 'lt', 'lte'],
  time: ['equals', 'not-equals', 'gt', 'gte', 'lt', 'lte'],
  boolean: ['equals'],
}

export const OPERATOR_LABELS: Readonly<Record<string, string>> = {
  equals: 'is',
  'not-equals': 'is not',
  contains: 'contains',
  'not-contains': 'does not contain',
  like: 'matches (like)',
  ilike: 'matches, any case (ilike)',
  gt: '>',
  gte: '≥',
  lt: '<',
  lte: '≤',
}

export interface Condition {
  kind: 'condition'
  field: string
  /** The property's name when `field` is PROPERTY_FIELD. */
  property: string
  operator: string
  value: string
}

export interface Group {
  kind: 'group'
  operator: 'and' | 'or'
  children: Array<Condition | Group>
}

export const fieldType = (field: string): FieldType => FILTER_FIELDS[field]?.type ?? 'text'

export const newCondition = (): Condition => ({ kind: 'condition', field: 'model', property: '', operator: 'equals', value: '' })
export const emptyTree = (): Group => ({ kind: 'group', operator: 'and', children: [] })

/** A condition's value as the API takes it: numbers as numbers, times as ISO 8601, yes/no as booleans. */
function apiValue(condition: Condition): unknown {
  const type = condition.field === PROPERTY_FIELD ? 'text' : fieldType(condition.field)
  if (type === 'number') return Number(condition.value)
  if (type === 'boolean') return condition.value === 'true'
  if (type === 'time') return new Date(condition.value).toISOString()
  return condition.value
}

const complete = (condition: Condition) =>
  condition.value.trim() !== '' && (condition.field !== PROPERTY_FIELD || condition.property.trim() !== '')

function leaf(condition: Condition): unknown {
  const test = { [condition.operator]: apiValue(condition) }
  return condition.field === PROPERTY_FIELD
    ? { request: { properties: { [condition.property.trim()]: test } } }
    : { request: { [condition.field]: test } }
}

/** The API filter for a tree; conditions not filled in yet are left out, and an empty tree is "all". */
export function toApiFilter(tree: Group): unknown {
  const parts = tree.children
    .map((child) => (child.kind === 'group' ? toApiFilter(child) : complete(child) ? leaf(child) : 'all'))
    .filter((part) => part !== 'all')
  if (parts.length === 0) return 'all'
  return parts.reduce((left, right) => ({ left, operator: tree.operator, right }))
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value)

/** A value back into the text the builder's input shows. */
const inputValue = (field: string, value: unknown): string =>
  fieldType(field) === 'time' && typeof value === 'string' ? toLocalInput(value) : String(value)

/** An ISO time as a datetime-local input writes it, in the browser's own time zone. */
export function toLocalInput(iso: string): string {
  const at = new Date(iso)
  if (Number.isNaN(at.getTime())) return iso
  const local = new Date(at.getTime() - at.getTimezoneOffset() * 60_000)
  return local.toISOString().slice(0, 16)
}

function conditionsOfLeaf(fields: Record<string, unknown>): Condition[] {
  const conditions: Condition[] = []
  for (const [field, test] of Object.entries(fields)) {
    if (!isObject(test)) continue
    if (field === 'properties') {
      for (const [property, propertyTest] of Object.entries(test))
        for (const [operator, value] of Object.entries(isObject(propertyTest) ? propertyTest : {}))
          conditions.push({ kind: 'condition', field: PROPERTY_FIELD, property, operator, value: String(value) })
      continue
    }
    for (const [operator, value] of Object.entries(test))
      conditions.push({ kind: 'condition', field, property: '', operator, value: inputValue(field, value) })
  }
  return conditions
}

/**
 * A saved API filter back into a tree the builder edits: a chain of one operator becomes one group,
 * another operator a group inside it. Answers undefined for a filter the builder cannot show.
 */
export function fromApiFilter(filter: unknown): Group | undefined {
  if (filter === 'all' || filter === undefined) return emptyTree()
  if (!isObject(filter)) return undefined
  if ((filter.operator === 'and' || filter.operator === 'or') && 'left' in filter && 'right' in filter) {
    const group: Group = { kind: 'group', operator: filter.operator, children: [] }
    for (const side of [filter.left, filter.right]) {
      const part = fromApiFilter(side)
      if (!part) return undefined
      // The same operator continues the chain; another one is a group of its own.
      if (part.operator === group.operator || part.children.length === 1) group.children.push(...part.children)
      else group.children.push(part)
    }
    return group
  }
  const fields = filter.request ?? filter.request_response_rmt
  if (!isObject(fields)) return undefined
  return { kind: 'group', operator: 'and', children: conditionsOfLeaf(fields) }
}
