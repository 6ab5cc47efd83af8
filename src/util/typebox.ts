import {
  FormatRegistry,
  type IntegerOptions,
  type SchemaOptions,
  type TLiteral,
  type TNull,
  type TSchema,
  type TUnion,
  Type,
} from '@sinclair/typebox'
import { Value } from '@sinclair/typebox/value'
import { ApiError } from '../errors'

// As Elysia registers it (the same test), for the text form of `t.Integer` wherever it is checked.
if (!FormatRegistry.Has('integer')) FormatRegistry.Set('integer', (value) => !!value && Number.isInteger(+value))

/**
 * A whole number, given as a number or as its text (a query string has nothing else), as Elysia's
 * `t.Integer` reads it: the text becomes the number, and a number outside the bounds is refused as the
 * caller's mistake, with the schema's own `error` when it has one.
 */
function Integer(options?: IntegerOptions) {
  const bounds = Type.Integer(options)
  return Type.Transform(Type.Union([Type.String({ format: 'integer', default: 0 }), Type.Integer(options)], options))
    .Decode((value) => {
      const number = +value
      if (!Value.Check(bounds, number)) {
        const own = typeof options?.error === 'string' ? options.error : 'expected a whole number within its bounds'
        throw new ApiError('validation_failed', `invalid property: ${own}`)
      }
      return number
    })
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
