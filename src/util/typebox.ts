import {
  type IntegerOptions,
  Kind,
  type SchemaOptions,
  type TLiteral,
  type TNull,
  type TSchema,
  type TString,
  type TUnion,
  Type,
  TypeRegistry,
} from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'

/**
 * A whole number's decimal text within the schema's bounds (`minimum`, `maximum` and the rest, as on
 * an integer): what a query string gives for a number. A kind of its own, so the bounds are checked
 * where every other constraint is, while the value is validated; the OpenAPI document shows it as a
 * string of format `integer`.
 */
const INTEGER_TEXT = 'IntegerText'
if (!TypeRegistry.Has(INTEGER_TEXT))
  TypeRegistry.Set<IntegerOptions>(INTEGER_TEXT, (schema, value) => {
    if (typeof value !== 'string' || !/^\s*[-+]?\d+\s*$/.test(value)) return false
    const { [Kind]: _, type: __, format: ___, default: ____, ...bounds } = schema as IntegerOptions & Record<PropertyKey, unknown>
    return Value.Check(Type.Integer(bounds), +value)
  })

/**
 * A whole number, given as a number or as its text (a query string has nothing else), as Elysia's
 * `t.Integer` reads it: the text becomes the number. Its bounds hold for both forms while the request
 * is validated, so a number out of range is a 400 with the schema's own `error`, and reading the text
 * cannot fail afterwards. (Elysia's own throws from its decoding when the bounds fail, which a minified
 * build does not recognise as a validation error: `limit=-1` reached the handler.)
 */
function Integer(options: IntegerOptions = {}) {
  const { error: _, description: __, default: ___, ...bounds } = options
  const text = { ...bounds, [Kind]: INTEGER_TEXT, type: 'string', format: 'integer' } as unknown as TString
  return Type.Transform(Type.Union([text, Type.Integer(options)], options))
    .Decode((value) => +value)
    .Encode((value) => value)
}

/**
 * The schema builder of gw's models: TypeBox's, with `Integer` and `Nullable` as Elysia's `t` has them
 * (the OpenAPI document reads `nullable`). Models take it from here, not from Elysia, so what the services import
 * for their types and values does not load the web framework: `gw serve` starts without it and loads it
 * with the management API, on the first request that needs it.
 */
export const t = Object.assign({}, Type, {
  Integer,
  Nullable: <T extends TSchema>(schema: T, options?: SchemaOptions): TUnion<[T, TNull]> =>
    Type.Union([schema, Type.Null()], { ...options, nullable: true }),
})

type Literals<T extends readonly string[]> = { -readonly [K in keyof T]: TLiteral<T[K]> }

/**
 * One of a fixed list of strings. Elysia's `t.UnionEnum` gives its schema a default (the first value),
 * which fills an absent optional field with it; a union of literals leaves the field absent.
 */
export const oneOf = <const T extends readonly [string, ...string[]]>(values: T, options?: SchemaOptions): TUnion<Literals<T>> =>
  // The cast restores the tuple type that `map` widens to an array.
  Type.Union(
    values.map((v) => Type.Literal(v)),
    options,
  ) as unknown as TUnion<Literals<T>>
