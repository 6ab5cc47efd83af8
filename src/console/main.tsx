import type { ComponentChildren } from 'preact'
import { render } from 'preact'
import { useEffect, useState } from 'preact/hooks'
import type { MyPermissions } from '../modules/organization/model'
import { AccessRules } from './access-rules'
import { api, type Session, session } from './api'
import { Audit } from './audit'
import { Budgets } from './budgets'
import { Integrations } from './integrations'
import { Keys } from './keys'
import { McpServers } from './mcp-servers'
import { Members } from './members'
import { Overview } from './overview'
import { Prices } from './prices'
import { Properties } from './properties'
import { ProviderKeys } from './provider-keys'
import { Providers } from './providers'
import { ProxyKeys } from './proxy-keys'
import { RateLimits } from './rate-limits'
import { RelayedCalls } from './relayed-calls'
import { Requests } from './requests'
import { Roles } from './roles'
import { Routing } from './routing'
import { Sessions } from './sessions'
import { SettingsPage } from './settings'
import { SignIn } from './sign-in'
import { SingleSignOn } from './sso'
import { Teams } from './teams'
import type { PageProps } from './ui'
import { Users } from './users'
import { Webhooks } from './webhooks'

interface PageEntry {
  hash: string
  title: string
  group: 'Traffic' | 'Access' | 'Organization'
  /** The permission without which the page is not shown at all. */
  needs?: string
  show(props: PageProps): ComponentChildren
}

/** The pages, by the hash of the address: a page can be linked to, and reloading keeps it. */
const PAGES: readonly PageEntry[] = [
  { hash: '#/overview', title: 'Overview', group: 'Traffic', needs: 'traffic.read', show: () => <Overview /> },
  { hash: '#/requests', title: 'Requests', group: 'Traffic', needs: 'traffic.read', show: (p) => <Requests {...p} /> },
  { hash: '#/sessions', title: 'Sessions', group: 'Traffic', needs: 'traffic.read', show: (p) => <Sessions {...p} /> },
  { hash: '#/users', title: 'Users', group: 'Traffic', needs: 'traffic.read', show: (p) => <Users {...p} /> },
  { hash: '#/properties', title: 'Properties', group: 'Traffic', needs: 'traffic.read', show: (p) => <Properties {...p} /> },
  { hash: '#/tool-calls', title: 'Tool calls', group: 'Traffic', needs: 'traffic.read', show: () => <RelayedCalls /> },
  { hash: '#/keys', title: 'API keys', group: 'Access', show: (p) => <Keys canWrite={p.can('keys.write')} /> },
  { hash: '#/proxy-keys', title: 'Proxy keys', group: 'Access', show: (p) => <ProxyKeys {...p} /> },
  { hash: '#/providers', title: 'Providers', group: 'Access', needs: 'org.read', show: (p) => <Providers {...p} /> },
  {
    hash: '#/provider-keys',
    title: 'Provider keys',
    group: 'Access',
    needs: 'provider_keys.write',
    show: () => <ProviderKeys />,
  },
  { hash: '#/members', title: 'Members', group: 'Access', show: (p) => <Members {...p} /> },
  { hash: '#/roles', title: 'Roles', group: 'Access', show: (p) => <Roles {...p} /> },
  { hash: '#/teams', title: 'Teams', group: 'Access', show: (p) => <Teams {...p} /> },
  {
    hash: '#/governance',
    title: 'Governance',
    group: 'Access',
    needs: 'org.read',
    // The rules, then what they name: the MCP servers and agents the organisation reaches.
    show: (p) => (
      <>
        <AccessRules {...p} />
        <McpServers {...p} />
      </>
    ),
  },
  {
    hash: '#/rate-limits',
    title: 'Rate limits',
    group: 'Organization',
    show: (p) => <RateLimits canWrite={p.can('spend_controls.write')} />,
  },
  { hash: '#/routing', title: 'Routing', group: 'Organization', needs: 'org.read', show: (p) => <Routing {...p} /> },
  { hash: '#/budgets', title: 'Budgets', group: 'Organization', needs: 'reports.read', show: (p) => <Budgets {...p} /> },
  {
    hash: '#/model-prices',
    title: 'Model prices',
    group: 'Organization',
    show: (p) => <Prices canWrite={p.can('spend_controls.write')} />,
  },
  { hash: '#/webhooks', title: 'Webhooks', group: 'Organization', needs: 'egress.write', show: (p) => <Webhooks {...p} /> },
  {
    hash: '#/integrations',
    title: 'Integrations',
    group: 'Organization',
    needs: 'egress.write',
    show: (p) => <Integrations {...p} />,
  },
  { hash: '#/audit', title: 'Audit log', group: 'Organization', needs: 'audit.read', show: (p) => <Audit orgId={p.orgId} /> },
  {
    hash: '#/settings',
    title: 'Settings',
    group: 'Organization',
    show: (p) => <SettingsPage canWrite={p.can('org.settings.write')} />,
  },
  {
    hash: '#/sso',
    title: 'Single sign-on',
    group: 'Organization',
    needs: 'org.settings.write',
    show: (p) => <SingleSignOn {...p} />,
  },
]
const GROUPS = ['Traffic', 'Access', 'Organization'] as const

function useHash(): string {
  const [hash, setHash] = useState(location.hash)
  useEffect(() => {
    const follow = () => setHash(location.hash)
    addEventListener('hashchange', follow)
    return () => removeEventListener('hashchange', follow)
  }, [])
  return hash
}

/** What the signed-in person may do: the console shows only the actions it allows (the server still decides). */
function usePermissions(current: Session | undefined) {
  const [permissions, setPermissions] = useState<ReadonlySet<string>>()
  const [reads, setReads] = useState(0)
  useEffect(() => {
    if (!current) return
    api<typeof MyPermissions.static>('GET', `/v1/organization/${encodeURIComponent(current.orgId)}/permissions/me`)
      .then((me) => setPermissions(new Set(me.permissions)))
      .catch(() => setPermissions(new Set()))
  }, [current, reads])
  return { permissions, reload: () => setReads((count) => count + 1) }
}

function Console() {
  const [current, setCurrent] = useState<Session | undefined>(session.get())
  const hash = useHash()
  const { permissions, reload: reloadPermissions } = usePermissions(current)
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
  const visible = permissions ? PAGES.filter((entry) => !entry.needs || permissions.has(entry.needs)) : []
  const page = visible.find((entry) => entry.hash === hash) ?? visible[0]
  const props: PageProps = {
    orgId: current.orgId,
    userId: current.userId,
    can: (permission) => permissions?.has(permission) ?? false,
    reloadPermissions,
  }
  return (
    <>
      <header>
        <span class="brand">gw</span>
        <span class="org">{current.orgName}</span>
        <span class="spacer" />
        <button type="button" class="quiet" onClick={signOut}>
          Sign out
        </button>
      </header>
      <div class="layout">
        <nav class="pages" aria-label="Pages">
          {GROUPS.map((group) => {
            const entries = visible.filter((entry) => entry.group === group)
            // A group none of whose pages the person may see is not shown as an empty heading.
            return entries.length === 0 ? null : (
              <div key={group} class="nav-group">
                <span class="nav-title">{group}</span>
                {entries.map((entry) => (
                  <a key={entry.hash} href={entry.hash} aria-current={entry === page ? 'page' : undefined}>
                    {entry.title}
                  </a>
                ))}
              </div>
            )
          })}
        </nav>
        <main>{permissions ? page?.show(props) : <p class="muted">Loading…</p>}</main>
      </div>
    </>
  )
}

// A page of another site could frame the console and trick a click onto a button (clickjacking); the
// policy that forbids it (frame-ancestors) only works as a header, which Bun's bundled page cannot
// carry, so a framed console refuses to show itself at all.
const root = document.getElementById('app')
if (root && window.top === window.self) render(<Console />, root)
else if (root) root.textContent = 'The gw console does not open inside a frame of another page.'
