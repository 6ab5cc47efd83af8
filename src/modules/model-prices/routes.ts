import { Elysia, t } from 'elysia'
import { answer } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import { DeleteBody, DeleteTarget, ImportBody, Imported, Price, PriceBody, PricesDeleted } from './model'
import type { ModelPricesService } from './service'

/** An organisation's own model prices (spec `spend_controls.write`; the list is gw's own, `org.read`). */
export const modelPriceRoutes = (authz: Authz, prices: ModelPricesService) =>
  new Elysia({ name: 'model-price-routes' })
    .use(authz)
    .get('/v1/model-prices', ({ principal }) => answer(prices.list(principal)), {
      catalogued: true,
      response: Ok(t.Array(Price)),
      detail: { summary: "The organization's model price overrides, each with whether it is in force now" },
    })
    .put('/v1/model-prices', ({ principal, body }) => answer(prices.put(principal, body)), {
      catalogued: true,
      body: PriceBody,
      response: Ok(Price),
      detail: { summary: "Set the organization's price for a model, or replace the one from the same time" },
    })
    .delete('/v1/model-prices', ({ principal, query, body }) => answer(prices.remove(principal, { ...body, ...query })), {
      catalogued: true,
      query: DeleteTarget,
      body: DeleteBody,
      response: Ok(PricesDeleted),
      detail: { summary: "Delete a model's price overrides: all of them, or the one from effectiveFrom" },
    })
    .put('/v1/model-prices/import', ({ principal, body }) => answer(prices.import(principal, body)), {
      catalogued: true,
      body: ImportBody,
      response: Ok(Imported),
      detail: { summary: 'Import model prices from JSON or CSV, merged into or replacing the current ones' },
    })
