import { useEffect, useState } from 'preact/hooks'
import type { DomainVerification, Entitlement as EntitlementView, SsoSettings, SsoTestReport } from '../modules/sso/model'
import { ApiFailure, api } from './api'
import { ErrorNote, type PageProps, useAction } from './ui'

type Entitlement = typeof EntitlementView.static
type SsoConfig = typeof SsoSettings.static
type Verification = typeof DomainVerification.static
type TestReport = typeof SsoTestReport.static

/** What the issuer's document said of a field: any JSON value, shown as written. */
const shown = (value: unknown) =>
  value === null || value === undefined ? 'absent' : typeof value === 'string' ? value : JSON.stringify(value)

function TestResult({ report }: { report: TestReport }) {
  return (
    <div class="card sso-result" role="status">
      <p>
        <strong>{report.ok ? 'The issuer answers as expected.' : 'The issuer does not answer as expected.'}</strong>
      </p>
      <dl class="facts">
        <div>
          <dt>Discovery document</dt>
          <dd>
            <code>{report.url}</code>
          </dd>
        </div>
        {'error' in report ? (
          <div>
            <dt>Failure</dt>
            <dd>{report.error}</dd>
          </div>
        ) : (
          <>
            <div>
              <dt>Issuer it names</dt>
              <dd>
                {shown(report.issuer)} ({report.issuerMatches ? 'matches' : 'does not match'})
              </dd>
            </div>
            <div>
              <dt>Authorization endpoint</dt>
              <dd>{shown(report.authorizationEndpoint)}</dd>
            </div>
            <div>
              <dt>Token endpoint</dt>
              <dd>{shown(report.tokenEndpoint)}</dd>
            </div>
            <div>
              <dt>JWKS</dt>
              <dd>{shown(report.jwksUri)}</dd>
            </div>
          </>
        )}
      </dl>
    </div>
  )
}

function DomainCheck({ verification }: { verification: Verification }) {
  if (verification.verified)
    return (
      <p role="status">
        <strong>{verification.domain}</strong> is verified.
      </p>
    )
  return (
    <div class="card sso-result" role="status">
      <p>
        Not verified yet. Publish this TXT record in the DNS of <strong>{verification.domain}</strong>, then check again:
      </p>
      <dl class="facts">
        <div>
          <dt>Name</dt>
          <dd>
            <code>{verification.record}</code>
          </dd>
        </div>
        <div>
          <dt>Value</dt>
          <dd>
            <code>{verification.value}</code>
          </dd>
        </div>
      </dl>
    </div>
  )
}

/**
 * Single sign-on (OIDC), on the Enterprise tier: the issuer and client, the email domain proven by a
 * DNS record, and, for the Owner alone, enforcement. The client secret goes in and is never shown back.
 * The checks of the issuer and of the domain run on the server: the console itself fetches only gw.
 */
export function SingleSignOn({ orgId, can }: PageProps) {
  const base = `/v1/organization/${encodeURIComponent(orgId)}/sso`
  const [entitlement, setEntitlement] = useState<Entitlement>()
  // undefined: not read yet; null: the organisation has no configuration.
  const [config, setConfig] = useState<SsoConfig | null>()
  const { error, setError, run: runAction } = useAction()
  const [saved, setSaved] = useState<string>()
  const [report, setReport] = useState<TestReport>()
  const [verification, setVerification] = useState<Verification>()

  const load = () =>
    api<SsoConfig>('GET', base)
      .then(setConfig)
      .catch((failure: Error) => {
        if (failure instanceof ApiFailure && failure.status === 404) setConfig(null)
        else setError(failure.message)
      })
  useEffect(() => {
    api<Entitlement>('GET', `${base}/entitlement`)
      .then((answer) => {
        setEntitlement(answer)
        if (answer.sso) load()
      })
      .catch((failure: Error) => setError(failure.message))
  }, [base])

  /** Runs one call; its refusal is shown with the API's message, and what it leaves is re-read. */
  const run = async (action: () => Promise<void>): Promise<boolean> => {
    setSaved(undefined)
    const done = await runAction(action)
    await load()
    return done
  }

  const save = async (event: Event) => {
    event.preventDefault()
    const data = new FormData(event.currentTarget as HTMLFormElement)
    const text = (name: string) => String(data.get(name) ?? '').trim()
    const ok = await run(async () => {
      await api('PUT', base, {
        issuer: text('issuer'),
        clientId: text('clientId'),
        ...(text('clientSecret') ? { clientSecret: text('clientSecret') } : {}),
        ...(text('domain') ? { domain: text('domain') } : {}),
      })
      setReport(undefined)
      setVerification(undefined)
    })
    if (ok) setSaved('Single sign-on saved')
  }
  const remove = () =>
    run(async () => {
      await api('DELETE', base)
      setReport(undefined)
      setVerification(undefined)
    })
  const test = () => run(async () => setReport(await api<TestReport>('POST', `${base}/test`)))
  const verify = () => run(async () => setVerification(await api<Verification>('POST', `${base}/verify-domain`)))
  // The switch follows the click at once; the reload after the call puts it back if the API refused.
  const enforce = (current: SsoConfig, enforced: boolean) => {
    setConfig({ ...current, enforced })
    return run(async () => {
      await api('PUT', `${base}/enforce`, { enforced })
      setSaved(enforced ? 'Single sign-on is now required' : 'Password sign-in is allowed again')
    })
  }

  const heading = <h1 id="sso">Single sign-on</h1>
  if (!entitlement || (entitlement.sso && config === undefined))
    return (
      <section class="access" aria-labelledby="sso">
        {heading}
        <ErrorNote error={error} />
        {!error && <p class="muted">Loading…</p>}
      </section>
    )
  if (!entitlement.sso)
    return (
      <section class="access" aria-labelledby="sso">
        {heading}
        <p>
          Single sign-on needs the {entitlement.requiredTier} tier; this organization is on {entitlement.tier}.
        </p>
      </section>
    )

  return (
    <section class="access" aria-labelledby="sso">
      {heading}
      <p class="muted">Members sign in through your OpenID Connect provider; gw checks the issuer and your email domain.</p>
      <ErrorNote error={error} />
      {saved && <p role="status">{saved}</p>}
      {config ? (
        <dl class="facts card" aria-label="Saved configuration">
          <div>
            <dt>Issuer</dt>
            <dd>{config.issuer}</dd>
          </div>
          <div>
            <dt>Client ID</dt>
            <dd>{config.clientId}</dd>
          </div>
          <div>
            <dt>Client secret</dt>
            <dd>saved</dd>
          </div>
          <div>
            <dt>Email domain</dt>
            <dd>{config.domain ? `${config.domain} (${config.domainVerified ? 'verified' : 'not verified'})` : 'none'}</dd>
          </div>
          <div>
            <dt>Required for sign-in</dt>
            <dd>{config.enforced ? 'yes: password sign-in is refused' : 'no'}</dd>
          </div>
          <div>
            <dt>Updated</dt>
            <dd>{new Date(config.updatedAt).toLocaleString()}</dd>
          </div>
        </dl>
      ) : (
        <p class="muted">Not configured: members sign in with their passwords.</p>
      )}
      {/* Keyed by the saved state: a save or a removal starts the form afresh from what the API holds, secret field empty. */}
      <form key={config?.updatedAt ?? 'none'} class="setting sso-form" onSubmit={save} aria-label="Single sign-on configuration">
        <fieldset>
          <legend>{config ? 'Change the configuration' : 'Configure single sign-on'}</legend>
          <label>
            Issuer URL
            <input name="issuer" type="url" required maxLength={2000} defaultValue={config?.issuer} />
          </label>
          <label>
            Client ID
            <input name="clientId" required maxLength={500} defaultValue={config?.clientId} />
          </label>
          <label>
            {config ? 'Client secret (empty: keep the saved one)' : 'Client secret'}
            <input name="clientSecret" type="password" autocomplete="off" required={!config} maxLength={4096} />
          </label>
          <label>
            Email domain (optional)
            <input name="domain" maxLength={253} defaultValue={config?.domain ?? ''} placeholder="example.com" />
          </label>
          <div class="actions">
            <button type="submit">Save</button>
          </div>
        </fieldset>
      </form>
      {config && (
        <>
          <h2>Checks</h2>
          <div class="actions">
            <button type="button" class="quiet" onClick={test}>
              Test the issuer
            </button>
            {config.domain && (
              <button type="button" class="quiet" onClick={verify}>
                {verification ? 'Check the domain again' : 'Verify the domain'}
              </button>
            )}
          </div>
          {report && <TestResult report={report} />}
          {verification && <DomainCheck verification={verification} />}
          {can('ownership') && (
            <>
              <h2>Enforcement</h2>
              <label class="check">
                <input
                  type="checkbox"
                  checked={config.enforced}
                  onChange={(event) => enforce(config, (event.currentTarget as HTMLInputElement).checked)}
                />{' '}
                Require single sign-on: password sign-in is refused to every member, you included
              </label>
            </>
          )}
          <h2>Remove</h2>
          <div class="actions">
            <button type="button" class="danger" onClick={remove}>
              Remove single sign-on
            </button>
          </div>
        </>
      )}
    </section>
  )
}
