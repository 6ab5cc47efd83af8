import type { Principal } from '../../auth/principal'
import { maskSecret, sealContexts, type Vault } from '../../auth/vault'
import type { EgressPolicy } from '../../egress/policy'
import { badRequest, conflict, egressDisabled, notFound, nothingToChange } from '../../errors'
import { PLATFORM_SERVERS, type PlatformServer, platformServer } from '../../mcp/catalogue'
import { derivedName, discover, type FetchLike, probe } from '../../mcp/client'
import { type McpServerRow, NAME_TAKEN } from '../../store/repositories/mcp-servers'
import type { Clock, Store } from '../../store/store'
import type { AuthInput, CreateServerInput, PlatformServerInput, UpdateServerInput } from './model'

/** A registration as answers show it: the token only by its hint. */
const view = (row: McpServerRow) => ({
  id: row.id,
  name: row.name,
  url: row.url,
  transport: row.transport,
  auth: { kind: row.authKind, ...(row.tokenHint !== null ? { hint: row.tokenHint } : {}) },
  toolAllow: row.toolAllow,
  toolDeny: row.toolDeny,
  enabled: row.enabled,
  platformServerId: row.platformServerId,
  createdAt: row.createdAt.toISOString(),
  updatedAt: row.updatedAt.toISOString(),
})

const nameTaken = (name: string) =>
  conflict(`the organization has an MCP server named ${JSON.stringify(name)} already: choose another name, or change that one`)

const UPDATABLE = 'name, url, transport, auth, toolAllow, toolDeny, enabled'

/**
 * The MCP servers an organisation registered (`governance.write`; the list `org.read`): where they are,
 * how gw authenticates to them, which tools are offered; a probe and a discovery through the MCP SDK;
 * and the platform catalogue's servers switched on and off. Every URL passes the egress policy when it
 * is saved, and every connection passes it again when it is made.
 */
export class McpServersService {
  private readonly fetch: FetchLike

  constructor(
    private readonly store: Store,
    private readonly vault: Vault,
    private readonly egress: EgressPolicy,
    private readonly now: Clock = Date.now,
    private readonly probeTimeoutMs?: number,
  ) {
    this.fetch = egress.guardedFetch
  }

  async list(principal: Principal) {
    return (await this.store.org(principal.orgId).mcpServers.list()).map(view)
  }

  async create(principal: Principal, input: CreateServerInput) {
    this.egress.requireSavable(input.url, 'url')
    const id = crypto.randomUUID()
    const at = new Date(this.now())
    const row: McpServerRow = {
      id,
      orgId: principal.orgId,
      name: input.name,
      url: input.url,
      transport: input.transport,
      ...(await this.sealed(principal.orgId, id, input.auth)),
      toolAllow: input.toolAllow ?? [],
      toolDeny: input.toolDeny ?? [],
      enabled: true,
      platformServerId: null,
      createdAt: at,
      updatedAt: at,
    }
    if ((await this.store.org(principal.orgId).mcpServers.create(row)) === NAME_TAKEN) throw nameTaken(input.name)
    return view(row)
  }

  /** Changes what the body names; `auth` replaces the credentials whole (a new token, or none). */
  async update(principal: Principal, id: string, input: UpdateServerInput) {
    const servers = this.store.org(principal.orgId).mcpServers
    // Another organisation's server, or none, is 404 whatever the body holds.
    if (!(await servers.get(id))) throw notFound('MCP server')
    if (Object.keys(input).length === 0) throw nothingToChange(UPDATABLE)
    if (input.url !== undefined) this.egress.requireSavable(input.url, 'url')
    const updated = await servers.update(id, {
      ...(input.name !== undefined ? { name: input.name } : {}),
      ...(input.url !== undefined ? { url: input.url } : {}),
      ...(input.transport !== undefined ? { transport: input.transport } : {}),
      ...(input.auth !== undefined ? await this.sealed(principal.orgId, id, input.auth) : {}),
      ...(input.toolAllow !== undefined ? { toolAllow: input.toolAllow } : {}),
      ...(input.toolDeny !== undefined ? { toolDeny: input.toolDeny } : {}),
      ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
      updatedAt: new Date(this.now()),
    })
    if (updated === NAME_TAKEN) throw nameTaken(input.name ?? '')
    if (!updated) throw notFound('MCP server')
    return view(updated)
  }

  async remove(principal: Principal, id: string) {
    if (!(await this.store.org(principal.orgId).mcpServers.delete(id))) throw notFound('MCP server')
    return { id, deleted: true as const }
  }

  /** Connects now, runs initialize and tools/list, and answers how it went; a server that fails is ok: false. */
  async probe(principal: Principal, id: string) {
    const server = await this.store.org(principal.orgId).mcpServers.get(id)
    if (!server) throw notFound('MCP server')
    if (!this.egress.enabled) throw egressDisabled()
    const token =
      server.sealedToken === null ? undefined : await this.vault.open(server.sealedToken, sealContexts.mcpServerToken(server))
    return probe({ url: server.url, transport: server.transport, ...(token !== undefined ? { token } : {}) }, this.fetch, {
      ...(this.probeTimeoutMs !== undefined ? { timeoutMs: this.probeTimeoutMs } : {}),
      now: this.now,
    })
  }

  /** A draft registration from what the server publishes; nothing is stored. */
  async discover(principal: Principal, url: string) {
    this.egress.requireSavable(url, 'url')
    const found = await discover(url, this.fetch, this.probeTimeoutMs !== undefined ? { timeoutMs: this.probeTimeoutMs } : {})
    const taken = await this.store.org(principal.orgId).mcpServers.names()
    return {
      name: freeName(derivedName(found.serverInfo?.name, url), taken),
      url,
      transport: found.transport,
      auth: { kind: found.needsAuth ? ('bearer' as const) : ('none' as const) },
      serverInfo: found.serverInfo,
      protocolVersion: found.protocolVersion,
      capabilities: found.capabilities,
      protectedResource: found.protectedResource,
      error: found.error,
    }
  }

  /** The platform catalogue, with the organisation's registration of each entry when it has one. */
  async platformServers(principal: Principal) {
    const rows = await this.store.org(principal.orgId).mcpServers.list()
    return PLATFORM_SERVERS.map((entry) => {
      const row = rows.find((candidate) => candidate.platformServerId === entry.id)
      return { ...entry, registration: row ? view(row) : null }
    })
  }

  /**
   * Switches a catalogue entry on (made into a registration named by its id, or the one made before,
   * enabled again) or off (its registration kept, disabled). A token given replaces the one kept.
   */
  async setPlatformServer(principal: Principal, serverId: string, input: PlatformServerInput) {
    const entry = platformServer(serverId)
    if (!entry) throw notFound('platform MCP server')
    const servers = this.store.org(principal.orgId).mcpServers
    const existing = await servers.byPlatformServer(entry.id)
    if (input.enabled) {
      this.egress.requireSavable(entry.url, 'url')
      if (entry.auth === 'bearer' && !input.auth && existing?.sealedToken == null)
        throw badRequest(`${entry.name} needs a token: send auth: {"kind": "bearer", "token": "..."} to enable it`)
    }
    if (existing) {
      const updated = await servers.update(existing.id, {
        enabled: input.enabled,
        ...(input.auth ? await this.sealed(principal.orgId, existing.id, input.auth) : {}),
        updatedAt: new Date(this.now()),
      })
      if (!updated || updated === NAME_TAKEN) throw notFound('MCP server')
      return platformView(entry, updated)
    }
    if (!input.enabled) return platformView(entry, undefined)
    const id = crypto.randomUUID()
    const at = new Date(this.now())
    const row: McpServerRow = {
      id,
      orgId: principal.orgId,
      name: entry.id,
      url: entry.url,
      transport: entry.transport,
      ...(await this.sealed(principal.orgId, id, input.auth)),
      toolAllow: [],
      toolDeny: [],
      enabled: true,
      platformServerId: entry.id,
      createdAt: at,
      updatedAt: at,
    }
    if ((await servers.create(row)) === NAME_TAKEN) throw nameTaken(entry.id)
    return platformView(entry, row)
  }

  /** The columns of a credential (none when the caller named none): the token sealed to this row, and its hint. */
  private async sealed(
    orgId: string,
    id: string,
    auth: AuthInput = { kind: 'none' },
  ): Promise<Pick<McpServerRow, 'authKind' | 'sealedToken' | 'tokenHint'>> {
    if (auth.kind === 'none') return { authKind: 'none', sealedToken: null, tokenHint: null }
    return {
      authKind: 'bearer',
      sealedToken: await this.vault.seal(auth.token, sealContexts.mcpServerToken({ orgId, id })),
      tokenHint: maskSecret(auth.token),
    }
  }
}

const platformView = (entry: PlatformServer, row: McpServerRow | undefined) => ({
  ...entry,
  registration: row ? view(row) : null,
})

/** The name, or the name with the first free `-<n>` after it: a draft that can be saved as it is. */
function freeName(name: string, taken: ReadonlySet<string>): string {
  if (!taken.has(name)) return name
  for (let n = 2; ; n++) {
    const suffix = `-${n}`
    const candidate = `${name.slice(0, 64 - suffix.length).replace(/[-_]+$/, '')}${suffix}`
    if (!taken.has(candidate)) return candidate
  }
}
