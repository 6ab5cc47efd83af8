import { DOMAIN_MAX_LENGTH, DOMAIN_PATTERN, DOMAIN_RULE, EMAIL_MAX_LENGTH, EMAIL_PATTERN, EMAIL_RULE } from '../util/email'
import { t } from '../util/typebox'

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

/** The error answer `{data: null, error: {code, message}}`, for routes whose only answer is an error. */
export const ErrorEnvelope = t.Object({
  data: t.Null(),
  error: t.Object({ code: t.String(), message: t.String(), details: t.Optional(t.Record(t.String(), t.Unknown())) }),
})

/** What a route answers with nothing to say but that it did it: `{id, deleted: true}`. */
export const Deleted = t.Object({ id: t.String(), deleted: t.Literal(true) })

/** A list route's page sizes: the most one page may hold, and what it holds when the caller names no limit. */
export interface PageSize {
  readonly maxLimit: number
  readonly defaultLimit: number
}

/** The furthest an offset page may start: further on, a narrower filter (or a cursor) finds the rows sooner. */
const MAX_OFFSET = 1_000_000

/**
 * The paging fields of every list route, the same in a query string and in a body: whole numbers with
 * bounds, and the opaque cursor of keyset paging. A route spreads the ones it pages by (`{ limit, cursor }`
 * or `{ limit, offset }`). Elysia reads a query string's text into the number, and a value that is not a
 * whole number in range (`1.5`, `-1`, `1e308`, `abc`) is refused with a 400 that names the field and its
 * range: it would otherwise reach SQL as `LIMIT 2.5`, which the database refuses with our 500.
 */
export const Paging = ({ maxLimit, defaultLimit }: PageSize) => ({
  limit: t.Optional(
    t.Integer({
      minimum: 1,
      maximum: maxLimit,
      description: `how many on a page, 1 to ${maxLimit}; ${defaultLimit} by default`,
      error: `limit must be a whole number from 1 to ${maxLimit}`,
    }),
  ),
  offset: t.Optional(
    t.Integer({
      minimum: 0,
      maximum: MAX_OFFSET,
      description: 'how many to skip before the page; 0 by default',
      error: `offset must be a whole number from 0 to ${MAX_OFFSET}`,
    }),
  ),
  cursor: t.Optional(
    t.String({
      maxLength: 200,
      description: "the previous page's nextCursor; none (or empty) for the first page",
      error: 'cursor must be the nextCursor of a previous page',
    }),
  ),
})

/** The answer's pointer to the next page of keyset paging. */
export const NextCursor = t.Nullable(t.String({ description: 'the next page: pass it as cursor; null on the last page' }))

/** The answer's account of an offset page: where it starts and the most it could hold. */
export const OffsetPage = { offset: t.Integer(), limit: t.Integer() }

/** An email address, by the one rule of src/util/email.ts: every body that takes one uses this. */
export const EmailAddress = t.String({
  maxLength: EMAIL_MAX_LENGTH,
  pattern: EMAIL_PATTERN,
  description: EMAIL_RULE,
  error: `email must be ${EMAIL_RULE}`,
})

/** A domain name as the part of an email address after the `@` is one, with at least two labels. */
export const DomainName = t.String({
  maxLength: DOMAIN_MAX_LENGTH,
  pattern: DOMAIN_PATTERN,
  description: DOMAIN_RULE,
  error: `domain must be ${DOMAIN_RULE}`,
})
