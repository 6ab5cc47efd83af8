import { useEffect, useState } from 'preact/hooks'
import type { RequestsById, RequestView as RequestViewSchema } from '../modules/traffic/model'
import { api } from './api'
import { formatCount, formatMs, formatUsd } from './format'
import { ErrorNote, type PageProps, useAction } from './ui'

/** One request of the log, as the query routes answer it. */
export type RequestView = typeof RequestViewSchema.static

type Flag = NonNullable<RequestView['annotations']>['flags'][number]
const FLAG_KINDS: Record<Flag['kind'], string> = { pii: 'Personal data', injection: 'Prompt injection' }

const ratingText = (rating: number | null) =>
  rating === null ? 'Not rated' : rating === 1 ? 'Rated good' : rating === 0 ? 'Rated bad' : `Rated ${rating}`

/** A JSON body laid out to be read; anything else (a cut body, a stream's frames) as it was stored. */
function readable(body: string): string {
  try {
    return JSON.stringify(JSON.parse(body), null, 2)
  } catch {
    return body
  }
}

const formData = (event: Event) => {
  event.preventDefault()
  const form = event.currentTarget as HTMLFormElement
  return { form, data: new FormData(form) }
}

/** One request: its metadata, cost and tokens, what was said about it since, and its bodies when kept. */
export function RequestDetail({
  request,
  can,
  back,
  onBack,
}: {
  request: RequestView
  can: PageProps['can']
  /** Where the back button leads, as its label says. */
  back: string
  onBack(): void
}) {
  const [found, setFound] = useState<RequestView>()
  const { error, setError, run } = useAction()
  const canAnnotate = can('traffic.annotate')
  const path = `/v1/request/${encodeURIComponent(request.id)}`
  const reload = () =>
    api<typeof RequestsById.static>('POST', '/v1/request/query-ids', {
      requestIds: [request.id],
      includeBodies: true,
      includeAnnotations: true,
    })
      .then((answer) => setFound(answer.requests[0]))
      .catch((failure: Error) => setError(failure.message))
  useEffect(() => {
    reload()
  }, [request.id])

  /** An annotation, then the request read again so the page shows what the server holds. */
  const annotate = (action: () => Promise<unknown>, form?: HTMLFormElement) =>
    run(async () => {
      await action()
      form?.reset()
      await reload()
    })
  const shown = found ?? request
  const annotations = found?.annotations
  const facts: Array<[string, string]> = [
    ['Request id', shown.id],
    ['Time', new Date(shown.createdAt).toLocaleString()],
    ['Provider', shown.provider],
    ['Model', shown.model],
    ['Path', shown.path],
    ['Mode', shown.gatewayMode ?? '-'],
    ['Status', `${shown.status} (${shown.httpStatus})`],
    ['Latency', formatMs(shown.latencyMs)],
    ['Time to first token', formatMs(shown.timeToFirstTokenMs)],
    [
      'Tokens',
      `${shown.tokens.prompt === null ? '-' : formatCount(shown.tokens.prompt)} in, ${
        shown.tokens.completion === null ? '-' : formatCount(shown.tokens.completion)
      } out`,
    ],
    ['Cost', shown.cost === null ? `- (${shown.costNote ?? 'unknown'})` : formatUsd(shown.cost)],
    ['User', shown.userId ?? '-'],
    ['Session', shown.sessionId ?? '-'],
    ['API key', shown.apiKeyId ?? '-'],
  ]
  if (shown.translationWarning) facts.push(['Translation', shown.translationWarning])
  if (shown.error) facts.push(['Error', shown.error])
  const properties = Object.entries(shown.properties)
  return (
    <section aria-labelledby="request">
      <button type="button" class="quiet" onClick={onBack}>
        ← {back}
      </button>
      <h1 id="request">Request</h1>
      <ErrorNote error={error} />
      <dl class="facts">
        {facts.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>

      <h2>Security flags</h2>
      {!annotations && <p class="muted">Loading…</p>}
      {annotations && annotations.flags.length === 0 && (
        <p class="muted">The scan found no personal data and no injection attempt.</p>
      )}
      {annotations && annotations.flags.length > 0 && (
        <ul class="flags">
          {annotations.flags.map((flag) => (
            <li key={`${flag.kind}:${flag.category}`} data-flag={flag.kind}>
              <strong>{FLAG_KINDS[flag.kind]}</strong>: {flag.category} × {formatCount(flag.occurrences)}
            </li>
          ))}
        </ul>
      )}

      <h2>Feedback and scores</h2>
      {annotations && <p data-rating>{ratingText(annotations.rating)}</p>}
      {canAnnotate && (
        <div class="actions">
          <button type="button" class="quiet" onClick={() => annotate(() => api('POST', `${path}/feedback`, { rating: true }))}>
            Good answer
          </button>
          <button type="button" class="quiet" onClick={() => annotate(() => api('POST', `${path}/feedback`, { rating: false }))}>
            Bad answer
          </button>
        </div>
      )}
      {annotations && annotations.scores.length > 0 && (
        <table>
          <thead>
            <tr>
              <th scope="col">Score</th>
              <th scope="col">Value</th>
            </tr>
          </thead>
          <tbody>
            {annotations.scores.map((score) => (
              <tr key={score.name}>
                <td>{score.name}</td>
                <td>{score.value}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {canAnnotate && (
        <form
          class="inline"
          aria-label="Add a score"
          onSubmit={(event) => {
            const { form, data } = formData(event)
            annotate(
              () => api('POST', `${path}/score`, { name: String(data.get('name')), value: Number(data.get('value')) }),
              form,
            )
          }}
        >
          <label>
            Score name
            <input name="name" required maxLength={64} />
          </label>
          <label>
            Score value
            <input name="value" type="number" step="any" required />
          </label>
          <button type="submit">Add score</button>
        </form>
      )}

      <h2>Properties</h2>
      {properties.length === 0 ? (
        <p class="muted">No properties.</p>
      ) : (
        <dl class="facts">
          {properties.map(([key, value]) => (
            <div key={key}>
              <dt>{key}</dt>
              <dd data-property={key}>{value}</dd>
            </div>
          ))}
        </dl>
      )}
      {canAnnotate && (
        <form
          class="inline"
          aria-label="Set a property"
          onSubmit={(event) => {
            const { form, data } = formData(event)
            annotate(
              () => api('PUT', `${path}/property`, { key: String(data.get('key')), value: String(data.get('value')) }),
              form,
            )
          }}
        >
          <label>
            Property
            <input name="key" required maxLength={64} />
          </label>
          <label>
            Value
            <input name="value" maxLength={1000} />
          </label>
          <button type="submit">Set property</button>
        </form>
      )}

      <h2>Bodies</h2>
      {!found && !error && <p class="muted">Loading…</p>}
      {found?.body && (
        <div class="bodies">
          <figure>
            <figcaption>Request body</figcaption>
            <pre>{readable(found.body.request)}</pre>
          </figure>
          <figure>
            <figcaption>Response body</figcaption>
            <pre>{found.body.response === null ? '(none)' : readable(found.body.response)}</pre>
          </figure>
          {found.body.truncated && <p class="muted">Cut at 64 KiB.</p>}
        </div>
      )}
      {found && !found.body && <p class="muted">Not stored (the organization's body retention), or not yet written.</p>}
    </section>
  )
}
