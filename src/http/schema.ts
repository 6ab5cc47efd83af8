import { status, t } from 'elysia'

/**
 * Every management answer is `{data, error: null}` or, for a failure, `{data: null, error}` (the error
 * mapper's). The success envelope is made here and nowhere else: its schema for a route's `response`
 * (the OpenAPI document shows it, and Elysia checks every answer against it, so the document cannot
 * drift), and its value for the handler to return.
 */
type Schema = Parameters<typeof t.Object>[0][string]

const Envelope = <S extends Schema>(data: S) => t.Object({ data, error: t.Null() })

/** The `response` of a route that answers 200 with `data`. */
export const Ok = <S extends Schema>(data: S) => ({ 200: Envelope(data) })

/** The `response` of a route that creates something and answers 201 with it. */
export const Created = <S extends Schema>(data: S) => ({ 201: Envelope(data) })

/** A handler's 200 answer: the service's result in the envelope. */
export const answer = async <T>(data: T | Promise<T>) => ({ data: await data, error: null })

/** A handler's 201 answer, for a route whose `response` is `Created(...)`. */
export const answerCreated = async <T>(data: T | Promise<T>) => status(201, { data: await data, error: null })

/** The error answer `{data: null, error: {code, message}}`, for routes whose only answer is an error. */
export const ErrorEnvelope = t.Object({
  data: t.Null(),
  error: t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Record(t.String(), t.Unknown())) }),
})

/** What a route answers with nothing to say but that it did it: `{id, deleted: true}`. */
export const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) })
