import { Elysia, t } from 'elysia'
import { answer, answerCreated } from '../../http/answer'
import type { Authz } from '../../http/authz'
import { Created, Deleted, Ok } from '../../http/schema'
import {
  EmptyBody,
  FilterBody,
  FilterChangeBody,
  FilterParams,
  HiddenProperty,
  OrgFilterChangeBody,
  OrgParams,
  PropertyBody,
  PropertyVisibility,
  SavedFilter,
} from './model'
import type { SavedViewsService } from './service'

/**
 * Saved filters and hidden properties (spec 4.6 `org.settings.write`; the hidden list is read under
 * `traffic.read`). `/v1/filter` and `/v1/organization/{id}/create_filter|update_filter` are one store.
 */
export const savedViewRoutes = (authz: Authz, views: SavedViewsService) =>
  new Elysia({ name: 'saved-view-routes' })
    .use(authz)
    .get('/v1/filter', ({ principal }) => answer(views.listFilters(principal)), {
      authenticated: true,
      response: Ok(t.Array(SavedFilter)),
      detail: { summary: 'Saved filters' },
    })
    .post('/v1/filter', ({ principal, body }) => answerCreated(views.createFilter(principal, body)), {
      catalogued: true,
      body: FilterBody,
      response: Created(SavedFilter),
      detail: { summary: 'Save a filter' },
    })
    .post('/v1/organization/:id/create_filter', ({ principal, body }) => answerCreated(views.createFilter(principal, body)), {
      catalogued: true,
      params: OrgParams,
      body: FilterBody,
      response: Created(SavedFilter),
      detail: { summary: 'Save a filter' },
    })
    .patch('/v1/filter/:id', ({ principal, params, body }) => answer(views.updateFilter(principal, params.id, body)), {
      catalogued: true,
      params: FilterParams,
      body: FilterChangeBody,
      response: Ok(SavedFilter),
      detail: { summary: 'Change a saved filter' },
    })
    .post(
      '/v1/organization/:id/update_filter',
      ({ principal, body }) => answer(views.updateFilter(principal, body.filterId, body)),
      {
        catalogued: true,
        params: OrgParams,
        body: OrgFilterChangeBody,
        response: Ok(SavedFilter),
        detail: { summary: 'Change a saved filter' },
      },
    )
    .delete('/v1/filter/:id', ({ principal, params }) => answer(views.deleteFilter(principal, params.id)), {
      catalogued: true,
      params: FilterParams,
      response: Ok(Deleted),
      detail: { summary: 'Delete a saved filter' },
    })
    .post('/v1/property/hide', ({ principal, body }) => answer(views.hideProperty(principal, body.key)), {
      catalogued: true,
      body: PropertyBody,
      response: Ok(PropertyVisibility),
      detail: { summary: 'Hide a request property from the property views' },
    })
    .post('/v1/property/restore', ({ principal, body }) => answer(views.restoreProperty(principal, body.key)), {
      catalogued: true,
      body: PropertyBody,
      response: Ok(PropertyVisibility),
      detail: { summary: 'Show a hidden property again' },
    })
    .post('/v1/property/hidden/query', ({ principal }) => answer(views.hiddenProperties(principal)), {
      catalogued: true,
      body: EmptyBody,
      response: Ok(t.Array(HiddenProperty)),
      detail: { summary: 'The hidden properties' },
    })
