import { type SchemaOptions, type TLiteral, type TUnion, Type } from '@sinclair/typebox'
import { t } from 'elysia'

/**
 * A management route's successful answer, `{data, error: null}`, as its `response` schema: the
 * OpenAPI document shows it, and Elysia checks every answer against it, so the document cannot drift.
 */
export const ok = <S extends Parameters<typeof t.Object>[0][string]>(data: S) => ({
  200: t.Object({ data, error: t.Null() }),
})

/** The error answer `{data: null, error: {code, message}}`, for routes whose only answer is an error. */
export const ErrorEnvelope = t.Object({
  data: t.Null(),
  error: t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Record(t.String(), t.Unknown())) }),
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
