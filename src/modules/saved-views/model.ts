import { t } from '../../util/typebox'

export const OrgParams = t.Object({ id: t.String() })
export const FilterParams = t.Object({ id: t.String({ minLength: 1, maxLength: 64 }) })

const Name = t.String({ minLength: 1, maxLength: 200 })
const FilterTree = t.Unknown({ description: 'a request filter (spec 2.5), or "all"' })

export const FilterBody = t.Object({ name: Name, filter: FilterTree }, { additionalProperties: false })
export type FilterInput = typeof FilterBody.static

export const FilterChangeBody = t.Object(
  { name: t.Optional(Name), filter: t.Optional(FilterTree) },
  { additionalProperties: false },
)
export type FilterChange = typeof FilterChangeBody.static

/** The organisation route names the filter in the body. */
export const OrgFilterChangeBody = t.Object(
  { filterId: t.String({ minLength: 1, maxLength: 64 }), name: t.Optional(Name), filter: t.Optional(FilterTree) },
  { additionalProperties: false },
)

export const PropertyBody = t.Object({ key: t.String({ minLength: 1, maxLength: 200 }) }, { additionalProperties: false })

/** The hidden-property listing takes no body, or an empty one. */
export const EmptyBody = t.Optional(t.Object({}, { additionalProperties: false }))

export const SavedFilter = t.Object({
  id: t.String(),
  name: t.String(),
  filter: t.Unknown({ description: 'the filter as saved: a filter object or "all"' }),
  createdAt: t.String({ format: 'date-time' }),
  updatedAt: t.String({ format: 'date-time' }),
})

export const PropertyVisibility = t.Object({
  key: t.String({ description: 'lower-cased' }),
  hidden: t.Boolean({ description: 'true after hide, false after restore' }),
})

export const HiddenProperty = t.Object({ key: t.String(), hiddenAt: t.String({ format: 'date-time' }) })
