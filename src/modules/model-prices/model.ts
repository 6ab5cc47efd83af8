import { PROVIDER_NAMES } from '../../directory/providers'
import { oneOf, t } from '../../util/typebox'

/** The most a rate or fee may be, in USD: far above any real price, and its nano-USD stay exact integers. */
export const MAX_USD = 1_000_000
/** Far above what any model writes in one answer; it only has to bound an estimate. */
export const MAX_OUTPUT_TOKENS = 10_000_000
export const MAX_IMPORT_ROWS = 10_000
/** About 2 MiB of CSV text: 10,000 rows of a couple of hundred characters. */
export const MAX_IMPORT_CSV_CHARS = 2 * 1024 * 1024

const usd = (what: string) =>
  t.Number({
    minimum: 0,
    maximum: MAX_USD,
    description: `${what}, in USD, at most 9 decimal places`,
    error: `must be a number of USD from 0 to ${MAX_USD}`,
  })

const provider = oneOf(PROVIDER_NAMES, { error: `must be one of ${PROVIDER_NAMES.join(', ')}` })
const model = t.String({ minLength: 1, maxLength: 200, error: 'must be a model id of 1 to 200 characters' })
const effectiveFrom = (description: string) =>
  t.String({
    maxLength: 64,
    description: `${description}: an ISO 8601 date-time with a time zone, or a date (midnight UTC)`,
    error: 'must be an ISO 8601 date-time',
  })

/** One price: the body of `PUT /v1/model-prices`, and each row of an import. */
export const PriceBody = t.Object(
  {
    provider,
    model,
    inputPerMillion: usd('per million input tokens'),
    outputPerMillion: usd('per million output tokens'),
    cacheReadPerMillion: t.Optional(usd('per million tokens read from the cache; absent: billed as input')),
    cacheWritePerMillion: t.Optional(usd('per million tokens written to the cache; absent: billed as input')),
    perRequest: t.Optional(usd('a fee per call on top of the tokens')),
    maxOutputTokens: t.Optional(
      t.Integer({
        minimum: 0,
        maximum: MAX_OUTPUT_TOKENS,
        description:
          "the most the model writes in one answer; absent: the built-in row's, and required for a model gw has no built-in price for",
        error: `must be a whole number from 0 to ${MAX_OUTPUT_TOKENS}`,
      }),
    ),
    effectiveFrom: t.Optional(effectiveFrom('from when the price applies; now by default')),
  },
  { additionalProperties: false },
)
export type PriceInput = typeof PriceBody.static
export type PriceField = keyof PriceInput

export const ImportBody = t.Object(
  {
    format: oneOf(['json', 'csv'], { error: 'must be json or csv' }),
    mode: oneOf(['merge', 'replace'], {
      error: 'must be merge or replace',
      description: "merge: add and replace rows; replace: the organisation's overrides become exactly these",
    }),
    // Each row is checked by the service against PriceBody, so every bad row is named, not the first.
    rows: t.Optional(
      t.Array(t.Unknown(), {
        maxItems: MAX_IMPORT_ROWS,
        description: 'for format json: the prices, each as the body of PUT /v1/model-prices',
        error: `must be an array of at most ${MAX_IMPORT_ROWS} prices`,
      }),
    ),
    csv: t.Optional(
      t.String({
        maxLength: MAX_IMPORT_CSV_CHARS,
        description: "for format csv: a header line naming PUT /v1/model-prices's fields, then a line per price",
        error: `must be CSV text of at most ${MAX_IMPORT_CSV_CHARS} characters`,
      }),
    ),
  },
  { additionalProperties: false },
)
export type ImportInput = typeof ImportBody.static

export const DeleteQuery = t.Object(
  {
    provider,
    model,
    effectiveFrom: t.Optional(effectiveFrom('only the override from this time; absent: all of them')),
  },
  { additionalProperties: false },
)
export type DeleteInput = typeof DeleteQuery.static
/** What to delete may come as query parameters or as a JSON body: clients differ in what DELETE can carry. */
export const DeleteTarget = t.Partial(DeleteQuery)
export const DeleteBody = t.Optional(DeleteTarget)

export const Price = t.Object({
  id: t.String(),
  provider: t.String(),
  model: t.String(),
  inputPerMillion: t.Number(),
  outputPerMillion: t.Number(),
  cacheReadPerMillion: t.Nullable(t.Number()),
  cacheWritePerMillion: t.Nullable(t.Number()),
  perRequest: t.Nullable(t.Number()),
  maxOutputTokens: t.Nullable(t.Integer({ description: "null: the built-in row's applies" })),
  effectiveFrom: t.String({ format: 'date-time' }),
  inForce: t.Boolean({ description: "whether this is the model id's price now: the latest that has taken effect" }),
  createdAt: t.String({ format: 'date-time' }),
})

export const Imported = t.Object({
  imported: t.Integer(),
  replaced: t.Integer({ description: 'overrides removed by a replace; 0 for a merge' }),
})

export const PricesDeleted = t.Object({ provider: t.String(), model: t.String(), deleted: t.Integer() })
