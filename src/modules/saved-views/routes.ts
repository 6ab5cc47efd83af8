import { Elysia, t } from 'elysia'
import type { Authz } from '../../http/authz'
import { Ok } from '../../http/schema'
import type { SavedViewsService } from './service'

const OrgParams = t.Object({ id: t.String() })
const FilterParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })
const Name = t.String({ minLength: 1, maxLength: 200 })
const CreateBody = t.Object({ name: Name, filter: t.Unknown() }, { additionalProperties: false })
const UpdateBody = t.Object({ name: t.Optional(Name), filter: t.Optional(t.Unknown()) }, { additionalProperties: false })
const PropertyBody = t.Object({ key: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

/**
 * Saved filters and hidden properties (spec 4.6 `org.settings.write`; the hidden list is read under
 * `traffic.read`). `/v1/filter` and `/v1/organization/{id}/create_filter|update_filter` are one store.
 */
export const savedViewRoutes = (authz: Authz, views: SavedViewsService) =>
  new Elysia({ name: 'saved-view-routes' })
    .use(authz)
    .get('/v1/filter', async ({ principal }) => ({ data: await views.listFilters(principal), error: null }), {
      authenticated: true,
      detail: { summary: 'Saved filters' },
    })
    .post(
      '/v1/filter',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await views.createFilter(principal, body), error: null }
      },
      { catalogued: true, body: CreateBody, detail: { summary: 'Save a filter' } },
    )
    .post(
      '/v1/organization/:id/create_filter',
      async ({ principal, body, set }) => {
        set.status = 201
        return { data: await views.createFilter(principal, body), error: null }
      },
      { catalogued: true, params: OrgParams, body: CreateBody, detail: { summary: 'Save a filter' } },
    )
    .patch(
      '/v1/filter/:id',
      async ({ principal, params, body }) => ({ data: await views.updateFilter(principal, params.id, body), error: null }),
      {
        catalogued: true,
        params: FilterParams,
        body: UpdateBody,
        detail: { summary: 'Change a saved filter' },
      },
    )
    .post(
      '/v1/organization/:id/update_filter',
      async ({ principal, body }) => ({ data: await views.updateFilter(principal, body.filterId, body), error: null }),
      {
        catalogued: true,
        params: OrgParams,
        body: t.Object(
          { filterId: t.String({ minLength: 1, maxLength: 64 }), name: t.Optional(Name), filter: t.Optional(t.Unknown()) },
          { additionalProperties: false },
        ),
        detail: { summary: 'Change a saved filter' },
      },
    )
    .delete(
      '/v1/filter/:id',
      async ({ principal, params }) => ({ data: await views.deleteFilter(principal, params.id), error: null }),
      {
        catalogued: true,
        params: FilterParams,
        detail: { summary: 'Delete a saved filter' },
      },
    )
    .post(
      '/v1/property/hide',
      async ({ principal, body }) => ({ data: await views.hideProperty(principal, body.key), error: null }),
      {
        catalogued: true,
        body: PropertyBody,
        detail: { summary: 'Hide a request property from the property views' },
      },
    )
    .post(
      '/v1/property/restore',
      async ({ principal, body }) => ({ data: await views.restoreProperty(principal, body.key), error: null }),
      {
        catalogued: true,
        body: PropertyBody,
        detail: { summary: 'Show a hidden property again' },
      },
    )
    .post(
      '/v1/property/hidden/query',
      async ({ principal }) => ({ data: await views.hiddenProperties(principal), error: null }),
      {
        catalogued: true,
        body: t.Optional(t.Object({}, { additionalProperties: false })),
        response: Ok(t.Array(t.Object({ key: t.String(), hiddenAt: t.String({ format: 'date-time' }) }))),
        detail: { summary: 'The hidden properties' },
      },
    )
