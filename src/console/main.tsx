import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import { api, type Session, session } from './api'
import { Audit } from './audit'
import { Keys } from './keys'
import { Overview } from './overview'
import { ProviderKeys } from './provider-keys'
import { RateLimits } from './rate-limits'
import { Requests } from './requests'
import { SettingsPage } from './settings'
import { SignIn } from './sign-in'

/** The pages, by the hash of the address: a page can be linked to, and reloading keeps it. */
const PAGES = [
  { hash: '#/overview', title: 'Overview' },
  { hash: '#/requests', title: 'Requests' },
  { hash: '#/keys', title: 'API keys' },
  { hash: '#/provider-keys', title: 'Provider keys', needs: 'provider_keys.write' },
  { hash: '#/rate-limits', title: 'Rate limits' },
  { hash: '#/audit', title: 'Audit log', needs: 'audit.read' },
  { hash: '#/settings', title: 'Settings' },
] as const
type PageHash = (typeof PAGES)[number]['hash']

const currentPage = (): PageHash => PAGES.find((page) => page.hash === location.hash)?.hash ?? '#/overview'

function usePage(): PageHash {
  const [page, setPage] = useState(currentPage())
  useEffect(() => {
    const follow = () => setPage(currentPage())
    addEventListener('hashchange', follow)
    return () => removeEventListener('hashchange', follow)
  }, [])
  return page
}

/** What the signed-in person may do: the console shows only the actions it allows (the server still decides). */
function usePermissions(current: Session | undefined): ReadonlySet<string> | undefined {
  const [permissions, setPermissions] = useState<ReadonlySet<string>>()
  useEffect(() => {
    if (!current) return
    api<{ permissions: string[] }>('GET', `/v1/organization/${encodeURIComponent(current.orgId)}/permissions/me`)
      .then((me) => setPermissions(new Set(me.permissions)))
      .catch(() => setPermissions(new Set()))
  }, [current])
  return permissions
}

function Console() {
  const [current, setCurrent] = useState<Session | undefined>(session.get())
  const page = usePage()
  const permissions = usePermissions(current)
  if (!current) {
    return (
      <SignIn
        onSignedIn={(signedIn) => {
          session.set(signedIn)
          setCurrent(signedIn)
        }}
      />
    )
  }
  // Sign out ends the session on the server, then forgets the token here whatever the answer.
  const signOut = async () => {
    await api('POST', '/v1/auth/logout').catch(() => undefined)
    session.clear()
    setCurrent(undefined)
  }
  return (
    <>
      <header>
        <span class="brand">gw</span>
        <span class="org">{current.orgName}</span>
        <nav aria-label="Pages">
          {PAGES.filter((entry) => !('needs' in entry) || permissions?.has(entry.needs)).map((entry) => (
            <a key={entry.hash} href={entry.hash} aria-current={entry.hash === page ? 'page' : undefined}>
              {entry.title}
            </a>
          ))}
        </nav>
        <span class="spacer" />
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <main>
        {page === '#/overview' && <Overview />}
        {page === '#/requests' && permissions && <Requests canAnnotate={permissions.has('traffic.annotate')} />}
        {page === '#/keys' && permissions && <Keys canWrite={permissions.has('keys.write')} />}
        {page === '#/provider-keys' && permissions?.has('provider_keys.write') && <ProviderKeys />}
        {page === '#/rate-limits' && permissions && <RateLimits canWrite={permissions.has('spend_controls.write')} />}
        {page === '#/audit' && permissions?.has('audit.read') && <Audit orgId={current.orgId} />}
        {page === '#/settings' && permissions && <SettingsPage canWrite={permissions.has('org.settings.write')} />}
      </main>
    </>
  )
}

const root = document.getElementById('app')
if (root) render(<Console />, root)
