import { useEffect, useState } from 'preact/hooks'
import type { PropertyKeys } from '../modules/analytics/model'
import type { HiddenProperty } from '../modules/saved-views/model'
import { api } from './api'
import { formatCount, formatUsd, formatWhen } from './format'
import { type Group, groupedBody, TRAFFIC_WINDOW } from './sessions'
import { WindowBar, type WindowId } from './time-window'
import { ErrorNote, type PageProps, useAction } from './ui'

type Hidden = typeof HiddenProperty.static

const TOP = 10

/**
 * The property names the window's calls carried (Gw-Property-* headers), each opening into its values
 * by cost and by requests; those who hold org.settings.write hide a property from these views and
 * restore it.
 */
export function Properties({ can }: PageProps) {
  const canWrite = can('org.settings.write')
  const [windowId, setWindowId] = useState(TRAFFIC_WINDOW)
  const [names, setNames] = useState<typeof PropertyKeys.static>()
  const [hidden, setHidden] = useState<Hidden[]>()
  const [selected, setSelected] = useState<string>()
  const { error, setError, run } = useAction()
  // Bumped by each change, so both lists are read again.
  const [version, setVersion] = useState(0)
  useEffect(() => {
    Promise.all([
      api<typeof PropertyKeys.static>('POST', '/v1/property/query', groupedBody(windowId)),
      api<Hidden[]>('POST', '/v1/property/hidden/query', {}),
    ])
      .then(([shown, hiddenNow]) => {
        setNames(shown)
        setHidden(hiddenNow)
      })
      .catch((failure: Error) => setError(failure.message))
  }, [version, windowId])

  const change = (path: string, key: string) =>
    run(async () => {
      await api('POST', path, { key })
      if (key === selected) setSelected(undefined)
      setVersion((v) => v + 1)
    })

  return (
    <section class="traffic" aria-labelledby="properties">
      <h1 id="properties">Properties</h1>
      <p class="muted">Names of the Gw-Property-* headers calls carried.</p>
      <WindowBar value={windowId} onChange={setWindowId} />
      <ErrorNote error={error} />
      {!names && !error && <p class="muted">Loading…</p>}
      {names && names.length === 0 && <p class="muted">No properties in this window.</p>}
      {names && names.length > 0 && (
        <table aria-label="Properties">
          <thead>
            <tr>
              <th scope="col">Property</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {names.map((name) => (
              <tr key={name}>
                <td>
                  <button
                    type="button"
                    class="link"
                    aria-label={`Show values of ${name}`}
                    aria-pressed={name === selected}
                    onClick={() => setSelected(name)}
                  >
                    {name}
                  </button>
                </td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      class="quiet"
                      aria-label={`Hide ${name}`}
                      onClick={() => change('/v1/property/hide', name)}
                    >
                      Hide
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {selected && <PropertyValues key={selected} name={selected} windowId={windowId} />}
      <h2>Hidden properties</h2>
      <p class="muted">Left out of the property views and the overview; their values stay in the request log.</p>
      {hidden && hidden.length === 0 && <p class="muted">No hidden properties.</p>}
      {hidden && hidden.length > 0 && (
        <table aria-label="Hidden properties">
          <thead>
            <tr>
              <th scope="col">Property</th>
              <th scope="col">Hidden since</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {hidden.map((property) => (
              <tr key={property.key}>
                <td>{property.key}</td>
                <td>{formatWhen(property.hiddenAt)}</td>
                {canWrite && (
                  <td>
                    <button
                      type="button"
                      class="quiet"
                      aria-label={`Restore ${property.key}`}
                      onClick={() => change('/v1/property/restore', property.key)}
                    >
                      Restore
                    </button>
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  )
}

/** One property's values: the costliest and the busiest, or those that contain a searched text. */
function PropertyValues({ name, windowId }: { name: string; windowId: WindowId }) {
  const [search, setSearch] = useState('')
  const base = `/v1/property/${encodeURIComponent(name)}`
  const find = (event: Event) => {
    event.preventDefault()
    setSearch(String(new FormData(event.currentTarget as HTMLFormElement).get('search') ?? '').trim())
  }
  return (
    <div class="property-values">
      <h2>
        Values of <code>{name}</code>
      </h2>
      <form class="inline" onSubmit={find} aria-label={`Search the values of ${name}`}>
        <label>
          Search values
          <input name="search" type="search" maxLength={200} />
        </label>
        <button type="submit">Search</button>
        {search && (
          <button type="button" class="quiet" onClick={() => setSearch('')}>
            Clear search
          </button>
        )}
      </form>
      <div class="tops">
        {search ? (
          <Values title={`Values containing “${search}”`} path={`${base}/search`} windowId={windowId} search={search} />
        ) : (
          <>
            <Values title="By cost" path={`${base}/top-costs/query`} windowId={windowId} />
            <Values title="By requests" path={`${base}/top-requests/query`} windowId={windowId} />
          </>
        )}
      </div>
    </div>
  )
}

function Values({ title, path, windowId, search }: { title: string; path: string; windowId: WindowId; search?: string }) {
  const [values, setValues] = useState<Group[]>()
  const [error, setError] = useState<string>()
  useEffect(() => {
    setValues(undefined)
    setError(undefined)
    api<Group[]>('POST', path, { ...groupedBody(windowId), limit: TOP, ...(search ? { search } : {}) })
      .then(setValues)
      .catch((failure: Error) => setError(failure.message))
  }, [path, search, windowId])
  return (
    <figure class="top" aria-label={title}>
      <figcaption>{title}</figcaption>
      <ErrorNote error={error} />
      {!values && !error && <p class="muted">Loading…</p>}
      {values && values.length === 0 && <p class="muted">No values in this window.</p>}
      {values && values.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Value</th>
              <th scope="col">Requests</th>
              <th scope="col">Cost</th>
            </tr>
          </thead>
          <tbody>
            {values.map((value) => (
              <tr key={value.key ?? ''}>
                <td>{value.key ?? <span class="muted">(none)</span>}</td>
                <td>{formatCount(value.requests)}</td>
                <td>{formatUsd(value.cost)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </figure>
  )
}
