import type { Principal } from '../../auth/principal'
import { badRequest, conflict, notFound, nothingToChange } from '../../errors'
import type { SavedFilter } from '../../store/repositories/saved-views'
import type { Store } from '../../store/store'
import type { FilterChange, FilterInput } from './model'

/** A saved filter is kept as sent, bounded; the filter language itself is checked where it runs (request queries). */
const MAX_FILTER_BYTES = 16 * 1024

const view = (f: SavedFilter) => ({
  id: f.id,
  name: f.name,
  filter: f.filter,
  createdAt: f.createdAt.toISOString(),
  updatedAt: f.updatedAt.toISOString(),
})

function checkedFilter(filter: unknown): unknown {
  const isTree = filter === 'all' || (typeof filter === 'object' && filter !== null && !Array.isArray(filter))
  if (!isTree) throw badRequest('filter must be "all" or a filter object (spec 2.5)')
  if (Buffer.byteLength(JSON.stringify(filter)) > MAX_FILTER_BYTES)
    throw badRequest(`filter must be at most ${MAX_FILTER_BYTES} bytes`)
  return filter
}

export class SavedViewsService {
  constructor(
    private readonly store: Store,
    private readonly now: () => number = Date.now,
  ) {}

  async listFilters(principal: Principal) {
    return (await this.store.org(principal.orgId).savedViews.listFilters()).map(view)
  }

  async createFilter(principal: Principal, input: FilterInput) {
    const filter = checkedFilter(input.filter)
    if ((await this.store.org(principal.orgId).savedViews.listFilters()).some((f) => f.name === input.name)) {
      throw conflict(`a filter named "${input.name}" exists already`)
    }
    const now = new Date(this.now())
    const saved: SavedFilter = {
      id: crypto.randomUUID(),
      orgId: principal.orgId,
      name: input.name,
      filter,
      createdBy: principal.actorId,
      createdAt: now,
      updatedAt: now,
    }
    await this.store.org(principal.orgId).savedViews.createFilter(saved)
    return view(saved)
  }

  async updateFilter(principal: Principal, id: string, input: FilterChange) {
    if (input.name === undefined && input.filter === undefined) throw nothingToChange('name, filter')
    const named = input.name === undefined ? [] : await this.store.org(principal.orgId).savedViews.listFilters()
    if (named.some((f) => f.name === input.name && f.id !== id)) throw conflict(`a filter named "${input.name}" exists already`)
    const change = {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.filter !== undefined ? { filter: checkedFilter(input.filter) } : {}),
      updatedAt: new Date(this.now()),
    }
    const updated = await this.store.org(principal.orgId).savedViews.updateFilter(id, change)
    if (!updated) throw notFound('filter')
    return view(updated)
  }

  async deleteFilter(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).savedViews.deleteFilter(id))) throw notFound('filter')
    return { id, deleted: true as const }
  }

  /** Hidden properties leave the property views: the property queries (keys, keys over time, values) skip this list's keys. */
  async hideProperty(principal: Principal, key: string) {
    await this.store.org(principal.orgId).savedViews.hideProperty(key.toLowerCase(), principal.actorId)
    return { key: key.toLowerCase(), hidden: true }
  }

  async restoreProperty(principal: Principal, key: string) {
    if (!(await this.store.org(principal.orgId).savedViews.restoreProperty(key.toLowerCase()))) throw notFound('hidden property')
    return { key: key.toLowerCase(), hidden: false }
  }

  async hiddenProperties(principal: Principal) {
    return (await this.store.org(principal.orgId).savedViews.hiddenProperties()).map((p) => ({
      key: p.key,
      hiddenAt: p.createdAt.toISOString(),
    }))
  }
}
