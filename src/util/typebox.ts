import { type SchemaOptions, type TLiteral, type TUnion, Type } from '@sinclair/typebox'

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
