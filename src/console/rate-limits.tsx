import type { Rule as RuleView } from '../modules/rate-limits/model'
import { api } from './api'
import { ErrorNote, useList } from './ui'

type Rule = typeof RuleView.static

/** The organisation's rate-limit rules; set by those who hold spend_controls.write, on the Growth tier or above. */
export function RateLimits({ canWrite }: { canWrite: boolean }) {
  const { items: rules, error, change } = useList<Rule>('/v1/rate-limits')

  const add = async (event: Event) => {
    event.preventDefault()
    const form = event.currentTarget as HTMLFormElement
    const data = new FormData(form)
    const property = String(data.get('property') ?? '').trim()
    const added = await change(() =>
      api('POST', '/v1/rate-limits', {
        quota: Number(data.get('quota')),
        windowSeconds: Number(data.get('windowSeconds')),
        unit: data.get('unit'),
        segment: data.get('segment'),
        ...(property ? { property } : {}),
      }),
    )
    if (added) form.reset()
  }
  const remove = (rule: Rule) => change(() => api('DELETE', `/v1/rate-limits/${encodeURIComponent(rule.id)}`))

  return (
    <section aria-labelledby="rate-limits">
      <h1 id="rate-limits">Rate limits</h1>
      <p class="muted">Every call of the organisation is held to these, with the gateway's own global limit.</p>
      <ErrorNote error={error} />
      {canWrite && (
        <form class="inline" onSubmit={add} aria-label="New rate-limit rule">
          <label>
            Quota
            <input name="quota" type="number" min={1} step="any" required />
          </label>
          <label>
            Unit
            <select name="unit">
              <option value="request">requests</option>
              <option value="cents">cents</option>
            </select>
          </label>
          <label>
            Window (seconds)
            <input name="windowSeconds" type="number" min={1} defaultValue="3600" required />
          </label>
          <label>
            Per
            <select name="segment">
              <option value="global">organization</option>
              <option value="user">user (Gw-User-Id)</option>
              <option value="model">model</option>
              <option value="prop">property</option>
            </select>
          </label>
          <label>
            Property (for "property")
            <input name="property" maxLength={64} />
          </label>
          <button type="submit">Add rule</button>
        </form>
      )}
      {!rules && !error && <p class="muted">Loading…</p>}
      {rules && rules.length === 0 && <p class="muted">No rules: only the gateway's global limit applies.</p>}
      {rules && rules.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Policy</th>
              <th scope="col">Quota</th>
              <th scope="col">Window</th>
              <th scope="col">Per</th>
              {canWrite && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {rules.map((rule) => (
              <tr key={rule.id}>
                <td>
                  <code>{rule.policy}</code>
                </td>
                <td>
                  {rule.quota} {rule.unit === 'cents' ? 'cents' : 'requests'}
                </td>
                <td>{rule.windowSeconds} s</td>
                <td>{rule.segment === 'prop' ? `property ${rule.property}` : rule.segment}</td>
                {canWrite && (
                  <td>
                    <button type="button" class="quiet" onClick={() => remove(rule)} aria-label={`Delete ${rule.policy}`}>
                      Delete
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
