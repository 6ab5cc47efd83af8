import fc from 'fast-check'
import { PERMISSIONS } from '../../src/auth/permissions'
import { FIELDS, OPERATORS } from '../../src/query/filter'
import { EMAIL_PATTERN } from '../../src/util/email'

/**
 * Hostile values for the property-based hostile-input suite: strings, numbers, JSON values and whole
 * bodies that have broken servers before. Large and deep values travel as short markers (`«gw:name»`)
 * and are expanded only when a request is sent, so that fast-check's report of a counterexample stays
 * readable instead of printing a megabyte.
 */

/**
 * How deep the nested values of the per-route runs go: deep enough to pass any sane depth limit. Ten
 * thousand levels are tried once per route in a test of their own: where validation is slow they cost
 * seconds each, which would drown the rest of the run.
 */
const DEPTH = 1_000
const DEEPEST = 10_000

/** Markers that stand for a long string; they may sit inside a larger string. */
const LONG_STRINGS: Record<string, string> = {
  long: 'x'.repeat(10_000),
  cjk: '模'.repeat(5_000),
  emoji: '😀'.repeat(3_000),
  huge: 'a'.repeat(1 << 20),
}

/** Markers that stand for a whole JSON value that JSON.stringify cannot produce (too deep, or not finite). */
const RAW_JSON: Record<string, string> = {
  deepArray: `${'['.repeat(DEPTH)}${']'.repeat(DEPTH)}`,
  deepObject: `${'{"a":'.repeat(DEPTH)}1${'}'.repeat(DEPTH)}`,
  deepestArray: `${'['.repeat(DEEPEST)}${']'.repeat(DEEPEST)}`,
  deepestObject: `${'{"a":'.repeat(DEEPEST)}1${'}'.repeat(DEEPEST)}`,
  deepFilter: `${'{"operator":"and","left":'.repeat(DEPTH)}"all"${',"right":"all"}'.repeat(DEPTH)}`,
  infinity: '1e999',
  negativeZero: '-0',
}

const marker = (name: string): string => `«gw:${name}»`
const MARKER = /«gw:(\w+)»/g

/**
 * Cursors as a caller can forge them: base64url of what a cursor of ours holds, with a time no date
 * holds, an id with a NUL (which Postgres text cannot hold), or the shape of another route's cursor.
 */
const FORGED_CURSORS: readonly string[] = [
  '[99999999999999999999,"x"]',
  '[8640000000000001,"x","desc"]',
  '[1,"a\\u0000b","desc"]',
  '[-1,"x"]',
  '[1.5,"x","asc"]',
  '[1,{"id":1}]',
  '99999999999999999999|x',
  '1:a\u0000b',
].map((text) => Buffer.from(text).toString('base64url'))
const QUOTED_RAW_MARKER = /"«gw:(deepArray|deepObject|deepestArray|deepestObject|deepFilter|infinity|negativeZero)»"/g

/** A string as sent: every long-string marker replaced by its string. */
export const expandText = (text: string): string => text.replace(MARKER, (whole, name: string) => LONG_STRINGS[name] ?? whole)

/** A raw body as sent: markers become their JSON text or their string. */
export const expandRaw = (text: string): string =>
  text.replace(MARKER, (whole, name: string) => RAW_JSON[name] ?? LONG_STRINGS[name] ?? whole)

/** A JSON value as sent: a raw marker standing alone as a value becomes that raw JSON; long strings are expanded. */
export const toJsonText = (value: unknown): string =>
  expandText((JSON.stringify(value) ?? 'null').replace(QUOTED_RAW_MARKER, (_, name: string) => RAW_JSON[name] as string))

/** Characters that break things one at a time: NUL, controls, lone surrogates, bidi overrides, quotes. */
const NASTY_CHARACTERS = [
  '\u0000',
  '\u0001',
  '\u001f',
  '\u007f',
  '\ud800',
  '\udfff',
  '😀',
  '模',
  '\u202e',
  '\ufeff',
  '%',
  '\\',
  '"',
  "'",
  '\n',
  '\r',
] as const

/**
 * Strings that have broken servers, simplest first: fast-check shrinks a failing choice towards the
 * front of the list, so a report names the plainest string that still fails.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  'x',
  '',
  ' ',
  '\u0000',
  'a\u0000b',
  '%00',
  '..',
  '../../../etc/passwd',
  '模型',
  'openai/模型',
  'gpt-4o-😀',
  '😀',
  '👩‍👩‍👧‍👦',
  'e\u0301',
  '\u202eevil',
  '\ufeff',
  '\ud800',
  '\udfff\ud800',
  '\r\n',
  '\t',
  '\u0007\u0008\u001b[2J',
  '\u007f',
  '\u0085\u2028\u2029',
  "'; DROP TABLE requests; --",
  '" OR ""="',
  '%s%n%x',
  // Template syntax of several engines, meant literally.
  // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder is the hostile part
  '${7*7}{{7*7}}',
  '<script>alert(1)</script>',
  'null',
  'undefined',
  'NaN',
  '-0',
  '1e308',
  '__proto__',
  'constructor',
  'Ｆｕｌｌｗｉｄｔｈ',
  'ß\u0130\u0131',
  'x'.repeat(300),
  marker('long'),
  marker('cjk'),
  marker('emoji'),
]

/** A hostile string short enough for a URL or a header: no megabyte. */
export const hostileShortText: fc.Arbitrary<string> = fc.oneof(
  { weight: 8, arbitrary: fc.constantFrom(...HOSTILE_STRINGS) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 30 }) },
  { weight: 1, arbitrary: fc.string({ unit: 'binary-ascii', maxLength: 30 }) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.string({ maxLength: 8 }), fc.constantFrom(...NASTY_CHARACTERS), fc.string({ maxLength: 8 }))
      .map(([a, b, c]) => `${a}${b}${c}`),
  },
)

/** A hostile string for a body field: also, now and then, a megabyte. */
export const hostileText: fc.Arbitrary<string> = fc.oneof(
  { weight: 40, arbitrary: hostileShortText },
  { weight: 1, arbitrary: fc.constant(marker('huge')) },
)

export const hostileNumber: fc.Arbitrary<unknown> = fc.constantFrom(
  0,
  -1,
  1.5,
  1e308,
  -1e308,
  Number.MAX_SAFE_INTEGER + 2,
  2 ** 63,
  Number.MIN_VALUE,
  marker('infinity'),
  marker('negativeZero'),
)

/** A value of the wrong type for whatever field it lands in. */
export const wrongType: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: fc.constantFrom<unknown>(null, true, false, 0, [], {}, [null], { '': null }, 'x') },
  { weight: 2, arbitrary: hostileNumber },
  { weight: 1, arbitrary: fc.constantFrom(marker('deepArray'), marker('deepObject'), marker('huge')) },
  { weight: 2, arbitrary: hostileShortText },
)

export const hostileKey: fc.Arbitrary<string> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      '',
      '__proto__',
      'constructor',
      'prototype',
      'toString',
      '\u0000',
      '😀',
      '模型',
      'a.b',
      '$where',
      'x'.repeat(1_000),
    ),
  },
  { weight: 1, arbitrary: fc.string({ unit: 'binary', maxLength: 10 }) },
)

/** Any JSON value made of hostile parts, a few levels deep. */
export const hostileJson: fc.Arbitrary<unknown> = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    hostileShortText,
    hostileNumber,
    fc.boolean(),
    fc.constant(null),
    fc.constantFrom(marker('deepArray'), marker('deepObject')),
    fc.array(tie('value'), { maxLength: 3 }),
    fc.dictionary(hostileKey, tie('value'), { maxKeys: 3 }),
  ),
})).value

/** A raw request body: empty, not JSON, JSON of the wrong shape or with a NUL, a byte-order mark, a prototype key. */
export const RAW_BODIES: readonly string[] = [
  '{}',
  '',
  'null',
  '[]',
  '"x"',
  '0',
  '-0',
  '1e308',
  '1e999',
  'true',
  'not json',
  '{"a":',
  '{"a":1,}',
  "{'a':1}",
  '\u0000',
  '{"a":"\u0000"}',
  '{"a":"\\u0000"}',
  '\ufeff{}',
  '[{}]',
  '[[]]',
  '{"__proto__":{"polluted":true}}',
  '{"constructor":{"prototype":{"polluted":true}}}',
]

/**
 * Bodies that must be refused quickly: deep, or a megabyte. They take a test of their own, sent once
 * to every route: they cost tens of milliseconds each even where they are handled well.
 */
export const HEAVY_BODIES: readonly string[] = [
  '['.repeat(DEEPEST),
  marker('deepArray'),
  marker('deepObject'),
  `{"x":"${marker('huge')}"}`,
  marker('deepestArray'),
  marker('deepestObject'),
  `{"x":${marker('deepestArray')}}`,
  `"${marker('huge')}"`,
  `[${'1,'.repeat(100_000)}1]`,
]

export const CONTENT_TYPES: readonly string[] = [
  'text/plain',
  'application/x-www-form-urlencoded',
  'multipart/form-data',
  'application/json; charset=utf-16',
  'application/xml',
  'application/octet-stream',
]

/** A request body: none, a text sent as it is, or a value sent as JSON (markers expanded either way). */
export type Body = { kind: 'none' } | { kind: 'raw'; text: string } | { kind: 'json'; value: unknown }

export const bodyText = (body: Body): string | undefined =>
  body.kind === 'none' ? undefined : body.kind === 'raw' ? expandRaw(body.text) : toJsonText(body.value)

export const contentType: fc.Arbitrary<string | undefined> = fc.oneof(
  { weight: 12, arbitrary: fc.constant('application/json') },
  { weight: 2, arbitrary: fc.constantFrom(...CONTENT_TYPES) },
  { weight: 1, arbitrary: fc.constant(undefined) },
)

// ---------------------------------------------------------------------------------------------------
// Request filters (spec 2.5): well-formed trees with hostile leaves reach the SQL compiler and the
// database; malformed and too-deep ones must be refused by it.

const ALL_OPERATORS = [...new Set(Object.values(OPERATORS).flat())]

const filterValue: fc.Arbitrary<unknown> = fc.oneof(
  hostileText,
  hostileNumber,
  fc.boolean(),
  fc.constantFrom('2026-01-01T00:00:00Z', '0000-00-00', '+275760-09-13T00:00:00.001Z'),
  wrongType,
)

const filterLeaf: fc.Arbitrary<unknown> = fc
  .tuple(
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom('request', 'request_response_rmt') }, { weight: 1, arbitrary: hostileKey }),
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...Object.keys(FIELDS)) }, { weight: 1, arbitrary: hostileKey }),
    fc.oneof({ weight: 5, arbitrary: fc.constantFrom(...ALL_OPERATORS) }, { weight: 1, arbitrary: hostileKey }),
    filterValue,
  )
  .map(([wrapper, field, operator, value]) => ({ [wrapper]: { [field]: { [operator]: value } } }))

const propertyLeaf: fc.Arbitrary<unknown> = fc
  .tuple(fc.oneof(fc.constantFrom('seed', 'env'), hostileShortText), fc.constantFrom(...OPERATORS.text), filterValue)
  .map(([name, operator, value]) => ({ request: { properties: { [name]: { [operator]: value } } } }))

const filterTree: fc.Arbitrary<unknown> = fc.letrec<{ node: unknown }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant('all'),
    filterLeaf,
    propertyLeaf,
    fc.record({
      operator: fc.oneof({ weight: 5, arbitrary: fc.constantFrom('and', 'or') }, { weight: 1, arbitrary: hostileShortText }),
      left: tie('node'),
      right: tie('node'),
    }),
  ),
})).node

/** A chain of `and` branches `levels` deep: just past the compiler's depth limit, or far past it. */
const branchChain = (levels: number): unknown => {
  let node: unknown = 'all'
  for (let i = 0; i < levels; i++) node = { operator: 'and', left: node, right: 'all' }
  return node
}

export const hostileFilter: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 8, arbitrary: filterTree },
  { weight: 1, arbitrary: fc.constant(branchChain(17)) },
  { weight: 1, arbitrary: fc.constant(marker('deepFilter')) },
  { weight: 1, arbitrary: hostileJson },
)

// ---------------------------------------------------------------------------------------------------
// Bodies guided by a route's own schema: mostly valid, so that they pass validation and bring their
// hostile strings to the handlers and the store (that is how a NUL reaches Postgres).

/** The parts of JSON Schema that the routes' TypeBox schemas use. */
export interface Schema {
  type?: string | string[]
  properties?: Record<string, Schema>
  required?: string[]
  items?: Schema
  anyOf?: Schema[]
  oneOf?: Schema[]
  allOf?: Schema[]
  const?: unknown
  enum?: unknown[]
  minimum?: number
  maximum?: number
  exclusiveMinimum?: number
  exclusiveMaximum?: number
  minLength?: number
  maxLength?: number
  minItems?: number
  maxItems?: number
  format?: string
  pattern?: string
}

export const isSchema = (value: unknown): value is Schema => typeof value === 'object' && value !== null && !Array.isArray(value)

/** What the generators know of the world: ids of objects that exist, by the name of the field or parameter. */
export interface IdSource {
  idsFor(name: string): readonly string[]
}

const MAX_DEPTH = 4

const isEmail = (schema: Schema) => schema.format === 'email' || schema.pattern === EMAIL_PATTERN

const isIdName = (name: string) => name === 'id' || /Ids?$/.test(name)

/** Plausible values for fields whose name says what they hold. */
function hinted(name: string, ids: IdSource): fc.Arbitrary<unknown> | undefined {
  if (isIdName(name)) {
    const known = ids.idsFor(name)
    return known.length > 0 ? fc.oneof(fc.constantFrom(...known), fc.uuid()) : fc.uuid()
  }
  switch (name) {
    case 'permissions':
      return fc.subarray([...PERMISSIONS])
    case 'scopes':
      return fc.subarray(['gateway', 'traffic.read', 'traffic.annotate', 'provider:openai', 'model:gpt-4o', 'model:gpt-*'])
    case 'role':
      return fc.constantFrom('member', 'admin', ...ids.idsFor('roleId'))
    case 'model':
      return fc.constantFrom('gpt-4o', 'claude-sonnet-4-5', 'openai/llama3.1:8b')
    case 'segment':
      return fc.constantFrom('global', 'user', 'prop', 'model')
    case 'unit':
      return fc.constantFrom('request', 'cents')
    case 'property':
      return fc.constantFrom('seed', 'env')
    case 'filter':
      return hostileFilter
    case 'cursor':
      return fc.oneof(fc.constantFrom(...FORGED_CURSORS), hostileShortText)
    default:
      return undefined
  }
}

function plausibleString(schema: Schema, name: string): fc.Arbitrary<string> {
  if (isEmail(schema)) return fc.constantFrom('fuzz@example.test', 'Fuzz+tag@example.test', 'o.brien!x@localhost')
  // Far in the future: some fields (key expiry) refuse a past date, and the suite must get past them.
  if (schema.format === 'date-time') return fc.constantFrom('2099-01-01T00:00:00Z', '2098-06-30T12:34:56.789+02:00')
  if (schema.format === 'integer') return fc.integer({ min: -5, max: 100_000 }).map(String)
  if (schema.format === 'uri' || /url$/i.test(name)) return fc.constantFrom('https://example.test/v1', 'http://127.0.0.1:9/v1')
  if (schema.pattern !== undefined) {
    try {
      return fc.stringMatching(new RegExp(schema.pattern)).filter((s) => s.length <= (schema.maxLength ?? 64))
    } catch {
      // a pattern this engine cannot read: plain strings below
    }
  }
  const min = Math.max(schema.minLength ?? 0, 1)
  return fc.string({ minLength: min, maxLength: Math.max(min, Math.min(schema.maxLength ?? 20, 20)) })
}

function plausibleNumber(schema: Schema, integer: boolean): fc.Arbitrary<number> {
  const low = schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : -10)
  const high = Math.max(
    low,
    schema.maximum ?? (schema.exclusiveMaximum !== undefined ? schema.exclusiveMaximum - 1 : low + 100_000),
  )
  return integer
    ? fc.integer({ min: Math.ceil(low), max: Math.floor(high) })
    : fc.double({ min: low, max: high, noNaN: true, noDefaultInfinity: true })
}

/** A value that fits the schema, except that some of its leaves are hostile. */
function plausible(schema: Schema, name: string, ids: IdSource, depth: number): fc.Arbitrary<unknown> {
  if ('const' in schema) return fc.constant(schema.const)
  if (schema.enum && schema.enum.length > 0) return fc.constantFrom(...schema.enum)
  const branches = schema.anyOf ?? schema.oneOf
  if (branches && branches.length > 0) return fc.oneof(...branches.map((b) => plausible(b, name, ids, depth)))
  if (schema.allOf?.[0]) return plausible(schema.allOf[0], name, ids, depth)
  const hint = hinted(name, ids)
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string':
      // One string in five is hostile: most bodies then carry one hostile field among valid ones.
      return fc.oneof({ weight: 4, arbitrary: hint ?? plausibleString(schema, name) }, { weight: 1, arbitrary: hostileText })
    case 'integer':
    case 'number':
      return fc.oneof(
        { weight: 4, arbitrary: plausibleNumber(schema, type === 'integer') },
        { weight: 1, arbitrary: hostileNumber },
      )
    case 'boolean':
      return fc.boolean()
    case 'null':
      return fc.constant(null)
    case 'array':
      if (hint) return hint
      if (depth >= MAX_DEPTH || !schema.items) return fc.constant([])
      return fc.array(fuzzValue(schema.items, name, ids, depth + 1), {
        minLength: Math.min(schema.minItems ?? 0, 3),
        maxLength: 3,
      })
    case 'object':
      return depth >= MAX_DEPTH ? fc.constant({}) : fuzzObject(schema, ids, depth)
    default:
      // t.Unknown and friends: anything at all.
      return hint ?? hostileJson
  }
}

/** A value for a field: usually one that fits its schema (with hostile leaves), sometimes of the wrong type. */
export function fuzzValue(schema: Schema, name: string, ids: IdSource, depth = 0): fc.Arbitrary<unknown> {
  return fc.oneof({ weight: 10, arbitrary: plausible(schema, name, ids, depth) }, { weight: 1, arbitrary: wrongType })
}

/** A value one time in eight, else nothing: for the odd extra field, so that most bodies still pass validation. */
export const sometimes = <T>(arbitrary: fc.Arbitrary<T>): fc.Arbitrary<T | null> =>
  fc.oneof({ weight: 7, arbitrary: fc.constant(null) }, { weight: 1, arbitrary })

function fuzzObject(schema: Schema, ids: IdSource, depth: number): fc.Arbitrary<Record<string, unknown>> {
  const fields: Record<string, fc.Arbitrary<unknown>> = {}
  for (const [key, field] of Object.entries(schema.properties ?? {})) fields[key] = fuzzValue(field, key, ids, depth + 1)
  const required = (schema.required ?? []).filter((key) => key in fields)
  const record = fc.record(fields, { requiredKeys: required }) as fc.Arbitrary<Record<string, unknown>>
  // Now and then a field the schema does not know, with a hostile name.
  return fc.tuple(record, sometimes(fc.tuple(hostileKey, hostileJson))).map(([value, extra]) => {
    if (!extra) return value
    const out: Record<string, unknown> = { ...value }
    // defineProperty: `__proto__` as an own key, as JSON.parse makes it, not the prototype setter.
    Object.defineProperty(out, extra[0], { value: extra[1], enumerable: true, configurable: true, writable: true })
    return out
  })
}

/** Where a filled body puts its hostile string: in every string field, or only in the free-text ones. */
export type FillMode = 'everywhere' | 'free-text'

/** Valid values for fields whose name says what they hold, for bodies that must get past the handlers' own checks. */
function knownValue(schema: Schema, name: string, ids: IdSource): unknown {
  if (isIdName(name)) return ids.idsFor(name)[0]
  const known: Record<string, unknown> = {
    permissions: ['org.read'],
    scopes: [],
    role: 'member',
    model: 'gpt-4o',
    segment: 'global',
    unit: 'request',
    property: 'seed',
  }
  if (name in known) return known[name]
  if (isEmail(schema)) return 'fuzz@example.test'
  if (schema.format === 'uri' || /url$/i.test(name)) return 'https://example.test/v1'
  if (schema.pattern !== undefined) {
    try {
      return fc.sample(fc.stringMatching(new RegExp(schema.pattern)), { seed: 1, numRuns: 1 })[0]
    } catch {
      return undefined
    }
  }
  return undefined
}

/**
 * A value that fits the schema, with `fill` in its strings: in every one (NUL in an id must be
 * refused as cleanly as in a name), or only in the free-text ones, with real ids and valid values
 * elsewhere, so that the hostile string gets past the handler's own checks to the store. Each route
 * is tried with both on every run.
 */
export function filledValue(schema: Schema, fill: unknown, ids: IdSource, mode: FillMode, name = '', depth = 0): unknown {
  if ('const' in schema) return schema.const
  if (schema.enum && schema.enum.length > 0) return schema.enum[0]
  const branches = schema.anyOf ?? schema.oneOf
  if (branches && branches.length > 0) {
    const preferred = branches.find((b) => b.type !== 'null') ?? branches[0]
    return preferred ? filledValue(preferred, fill, ids, mode, name, depth) : fill
  }
  if (schema.allOf?.[0]) return filledValue(schema.allOf[0], fill, ids, mode, name, depth)
  if (mode === 'free-text') {
    const known = knownValue(schema, name, ids)
    if (known !== undefined) return known
  }
  const type = Array.isArray(schema.type) ? schema.type[0] : schema.type
  switch (type) {
    case 'string':
      if (schema.format === 'date-time') return '2099-01-01T00:00:00Z'
      if (schema.format === 'integer') return '60'
      return fill
    case 'integer':
    case 'number':
      return Math.max(schema.minimum ?? 1, schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 1)
    case 'boolean':
      return true
    case 'null':
      return null
    case 'array':
      return schema.items && depth < MAX_DEPTH ? [filledValue(schema.items, fill, ids, mode, name, depth + 1)] : []
    case 'object': {
      if (depth >= MAX_DEPTH) return {}
      const out: Record<string, unknown> = {}
      for (const [key, field] of Object.entries(schema.properties ?? {}))
        out[key] = filledValue(field, fill, ids, mode, key, depth + 1)
      return out
    }
    default:
      if (name === 'filter') return { request: { model: { equals: fill } } }
      return fill
  }
}

// ---------------------------------------------------------------------------------------------------
// Path parameters, query strings and headers.

/** Percent-encodings that a decoder must refuse without falling over, and path segments a router must not trip on. */
export const RAW_PATH_SEGMENTS: readonly string[] = [
  '%E0%A4%A',
  '%',
  '%%',
  '%zz',
  '%00',
  'a%00b',
  '%C0%AF',
  '%C0%80',
  '%ED%A0%80',
  '%FF%FE',
  '%2F',
  'a%2Fb',
  '%5C',
  '%u0000',
  '%20',
  '+',
  ';',
  '*',
  '..%2F',
  '.%00',
]

/** A path parameter as it appears in the URL: encoded, or raw when `raw` is set. */
export interface PathParam {
  text: string
  raw: boolean
}

export const encodedParam = (text: string): PathParam => ({ text, raw: false })

/**
 * `.` and `..` (encoded or not) are dot segments: the URL parser resolves them before any router sees
 * the path, so a client cannot send one as a parameter; such a call would reach another route.
 */
const isDotSegment = (text: string) => /^(\.|%2e){1,2}$/i.test(text)

/** The URL form of a parameter. A lone surrogate cannot be percent-encoded; a client sends U+FFFD for it. */
export const paramInUrl = (param: PathParam): string =>
  param.raw ? param.text : encodeURIComponent(expandText(param.text).toWellFormed())

/** A path parameter: a real id of its kind, a real id of another kind, a UUID, or something hostile. */
export function pathParam(own: readonly string[], others: readonly string[]): fc.Arbitrary<PathParam> {
  return fc.oneof(
    ...(own.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...own).map(encodedParam) }] : []),
    ...(others.length > 0 ? [{ weight: 1, arbitrary: fc.constantFrom(...others).map(encodedParam) }] : []),
    { weight: 2, arbitrary: fc.uuid().map(encodedParam) },
    { weight: 4, arbitrary: hostileShortText.filter((text) => !isDotSegment(text)).map(encodedParam) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_PATH_SEGMENTS).map((text) => ({ text, raw: true })) },
  )
}

/**
 * The values every query parameter of every route gets on every run, as they appear in the URL: numbers
 * that are not whole, not positive, too large for any column or not numbers at all (a paging limit of
 * 1.5 once reached SQL as `LIMIT 2.5`), and text that breaks parsers, URL decoding and Postgres.
 */
export const QUERY_VALUES: readonly string[] = [
  '1.5',
  '0.5',
  '-1',
  '-0',
  '0',
  '1e308',
  '-1e308',
  '99999999999999999999',
  '1e-7',
  '0x10',
  'abc',
  'NaN',
  'Infinity',
  '',
  '%20',
  'true',
  '[]',
  '{}',
  'a%00b',
  '%00',
  '%E0%A4%A',
  '%ED%A0%80',
  encodeURIComponent('模型😀'),
  marker('long'),
  ...FORGED_CURSORS,
]

/** One `name=value` pair: a name the route reads or a hostile one, a value encoded or raw. */
function queryPair(names: readonly string[]): fc.Arbitrary<string> {
  const name = fc.oneof(...(names.length > 0 ? [{ weight: 4, arbitrary: fc.constantFrom(...names) }] : []), {
    weight: 1,
    arbitrary: hostileKey.map((k) => encodeURIComponent(k.toWellFormed())),
  })
  const value = fc.oneof(
    { weight: 3, arbitrary: hostileShortText.map((v) => encodeURIComponent(expandText(v).toWellFormed())) },
    { weight: 2, arbitrary: fc.constantFrom(...QUERY_VALUES) },
    { weight: 1, arbitrary: fc.constantFrom(...RAW_PATH_SEGMENTS) },
  )
  return fc.tuple(name, value).map(([n, v]) => `${n}=${v}`)
}

/** A query string, `?` included, or nothing. */
export function queryString(names: readonly string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant('') },
    { weight: 4, arbitrary: fc.array(queryPair(names), { minLength: 1, maxLength: 4 }).map((pairs) => `?${pairs.join('&')}`) },
    { weight: 1, arbitrary: fc.constantFrom('?', '?%', '?&&&', '?=', '?a=%E0%A4%A', `?${'a=b&'.repeat(2_000)}`) },
  )
}

/**
 * A header value a client can send: the Fetch API refuses NUL, CR and LF and anything above U+00FF,
 * so non-ASCII text arrives as its UTF-8 bytes read one byte a character, as it does from a real client.
 */
export const headerBytes = (text: string): string =>
  Buffer.from(expandText(text).toWellFormed(), 'utf8')
    .toString('latin1')
    .replace(/[\0\r\n]/g, '')

export const headerValue: fc.Arbitrary<string> = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('x', 'a b', '\u0001\u001f\u007f', 'é', 'ÿ'.repeat(10), 'x'.repeat(8_000)) },
  { weight: 4, arbitrary: hostileShortText.map(headerBytes) },
)

/** Characters allowed in a header name (an HTTP token). */
const TOKEN_CHARACTERS = "!#$%&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".split('')

export const headerNameSuffix: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom('env', 'x'.repeat(200), "!#$%&'*+-.^_`|~"),
  fc.string({ unit: fc.constantFrom(...TOKEN_CHARACTERS), minLength: 1, maxLength: 20 }),
)

/**
 * A request body for a route: none, a raw text, any hostile JSON, or, where the route has a schema,
 * a value guided by it (mostly valid, with hostile leaves or a field of the wrong type).
 */
export function hostileBody(schema: Schema | undefined, ids: IdSource): fc.Arbitrary<Body> {
  return fc.oneof(
    { weight: 1, arbitrary: fc.constant<Body>({ kind: 'none' }) },
    { weight: 2, arbitrary: fc.constantFrom(...RAW_BODIES).map((text): Body => ({ kind: 'raw', text })) },
    { weight: 2, arbitrary: hostileJson.map((value): Body => ({ kind: 'json', value })) },
    // The top level follows the schema; wrong types there are the raw bodies' and hostileJson's job.
    ...(schema ? [{ weight: 8, arbitrary: plausible(schema, '', ids, 0).map((value): Body => ({ kind: 'json', value })) }] : []),
  )
}

/**
 * What every route gets in every free text field of an otherwise valid body, on every run: strings the
 * store cannot hold or that are huge, and an object that cannot be turned into text (its `toString` is
 * no function), which a validator describing the wrong type once tripped over (a 500 on every route).
 */
export const FILLS: readonly unknown[] = ['a\u0000b', '模型😀', '\ud800', '\u0001\u001b\u007f', marker('long'), { toString: 'x' }]

/** The path parameters every route gets on every run. */
export const PARAM_EXAMPLES: readonly PathParam[] = [
  encodedParam('a\u0000b'),
  encodedParam('模型😀'),
  encodedParam('../x'),
  encodedParam(marker('long')),
  { text: '%E0%A4%A', raw: true },
  { text: '%00', raw: true },
  { text: '%ED%A0%80', raw: true },
]
