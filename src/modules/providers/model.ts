import { PROVIDER_KINDS, PROVIDER_NAMES } from '../../directory/providers'
import { Maybe } from '../../query/model'
import { oneOf, t } from '../../util/typebox'

const UsdPerMillion = (what: string) =>
  Maybe(t.Number({ minimum: 0, description: `USD per million ${what} tokens; null when the price table has no price for it` }))

/**
 * A model a provider serves by its bare name, as the model catalogue and the price table know it, or as
 * the organisation priced it, at the price the organisation's calls are billed at.
 */
export const ProviderModel = t.Object(
  {
    id: t.String(),
    maxOutputTokens: t.Integer({ minimum: 0, description: 'the most it writes in one answer; 0 for models that write none' }),
    inputUsdPerMillion: UsdPerMillion('input'),
    outputUsdPerMillion: UsdPerMillion('output'),
    priceSource: Maybe(
      t.String({
        description:
          "where the price comes from: `builtin` (gw's price table) or `override:<id>` (the organisation's own price, which its calls are billed at); null when no price is known",
      }),
    ),
  },
  { additionalProperties: false },
)

/**
 * A provider as an organisation sees it: whether the operator configured it (never how: its key and
 * its address are the operator's), how many keys of its own the organisation has for it, and its models.
 */
export const GatewayProvider = t.Object(
  {
    name: oneOf(PROVIDER_NAMES, { description: "what calls name it by: `<name>/<model>`, a provider key's provider" }),
    label: t.String(),
    kind: oneOf(PROVIDER_KINDS, { description: 'how it is called: its wire protocol, and how it is reached and authenticated' }),
    operator: t.Object(
      {
        configured: t.Boolean({
          description:
            "the operator's own connection can be called: calls without a key of the organisation's run on it, billed to credits",
        }),
      },
      { additionalProperties: false },
    ),
    keys: t.Integer({ minimum: 0, description: "how many provider keys of the organisation's own it has" }),
    models: t.Array(ProviderModel),
  },
  { additionalProperties: false },
)

export type ProviderModelView = typeof ProviderModel.static
