import type { BlockList } from 'node:net'
import { badRequest, egressDisabled } from '../errors'

/**
 * Where gw may send what it sends out to addresses its users name (webhooks, integrations, MCP servers,
 * A2A agents, an organisation's own provider base URL): `https://` destinations on public
 * addresses, unless the operator allows more. The check is made twice: on the URL when a destination
 * is saved, and on the addresses its name resolves to at the moment of each connection, which then goes
 * to the address that was checked. A name that resolved to a public address when it was saved and to
 * 127.0.0.1 later (DNS rebinding) is refused at connection time.
 */

/**
 * `node:net` and `node:dns/promises`, evaluated on first use: they cost every start about 2 and 1 ms,
 * and only checking an address (an outgoing call to a destination a user named, an operator's allow
 * list) or resolving a name needs them.
 */
let netModule: typeof import('node:net') | undefined
const net = () => (netModule ??= process.getBuiltinModule('node:net'))
let dnsModule: typeof import('node:dns/promises') | undefined
const dns = () => (dnsModule ??= process.getBuiltinModule('node:dns/promises'))
const isIP = (input: string): number => net().isIP(input)

let internal: BlockList | undefined
/** Addresses no outgoing call reaches unless allowed: this machine, private networks, link-local, and the like. */
function internalNetworks(): BlockList {
  if (internal) return internal
  internal = new (net().BlockList)()
  for (const [network, prefix] of [
    ['0.0.0.0', 8],
    ['10.0.0.0', 8],
    ['100.64.0.0', 10],
    ['127.0.0.0', 8],
    ['169.254.0.0', 16],
    ['172.16.0.0', 12],
    ['192.0.0.0', 24],
    ['192.168.0.0', 16],
    ['198.18.0.0', 15],
    ['224.0.0.0', 4],
    ['240.0.0.0', 4],
  ] as const)
    internal.addSubnet(network, prefix, 'ipv4')
  for (const [network, prefix] of [
    // The unspecified and loopback addresses, and the deprecated IPv4-compatible form (`::127.0.0.1`).
    ['::', 96],
    ['fc00::', 7],
    ['fe80::', 10],
    ['ff00::', 8],
    ['64:ff9b::', 96],
  ] as const)
    internal.addSubnet(network, prefix, 'ipv6')
  return internal
}

const family = (address: string): 'ipv4' | 'ipv6' => (isIP(address) === 6 ? 'ipv6' : 'ipv4')

/** The operator's exceptions (GW_EGRESS_ALLOW_HOSTS): host names, addresses and CIDR ranges. */
export interface AllowList {
  hosts: ReadonlySet<string>
  /** Absent when there is no list (the policy's default): no address is allowed beyond the public ones. */
  networks?: BlockList
}

/** Parses `GW_EGRESS_ALLOW_HOSTS`: comma-separated host names, IP addresses or CIDRs; answers undefined for a bad entry. */
export function parseAllowList(text: string): AllowList | undefined {
  const hosts = new Set<string>()
  const networks = new (net().BlockList)()
  for (const entry of text
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter(Boolean)) {
    const [address, bits] = entry.split('/')
    if (bits !== undefined) {
      const version = isIP(address ?? '')
      const prefix = Number(bits)
      if (!address || version === 0 || !/^[0-9]{1,3}$/.test(bits) || prefix > (version === 4 ? 32 : 128)) return undefined
      networks.addSubnet(address, prefix, family(address))
    } else if (isIP(entry)) networks.addAddress(entry, family(entry))
    else if (/^[a-z0-9.-]{1,253}$/.test(entry)) hosts.add(entry)
    else return undefined
  }
  return { hosts, networks }
}

export class EgressRefused extends Error {}

/** Where a connection goes: the address that was checked, and the name the server knows itself by. */
export interface PinnedDestination {
  /** The URL with its host replaced by the checked address. */
  url: string
  /** The original host (and port), for the Host header. */
  host: string
  /** The name TLS verifies the certificate against. */
  serverName: string
}

export interface EgressOptions {
  enabled: boolean
  allow?: AllowList
  /** Name resolution; tests give their own. */
  resolve?: (host: string) => Promise<string[]>
  now?: () => number
}

const RESOLVE_TIMEOUT_MS = 5_000

const systemResolve = async (host: string): Promise<string[]> =>
  (await dns().lookup(host, { all: true, verbatim: true })).map((answer) => answer.address)

/** A URL's host without the brackets of an IPv6 literal, nor the trailing dot of a fully qualified name. */
const bareHost = (url: URL) =>
  url.hostname
    .replace(/^\[|\]$/g, '')
    .replace(/\.$/, '')
    .toLowerCase()

/** Names that are this machine by definition (RFC 6761), refused before any lookup. */
const isLocalhostName = (host: string) => host === 'localhost' || host.endsWith('.localhost')

/**
 * How long a name's checked addresses are reused. Connections still go to an address that was
 * checked, so reuse cannot let a rebound name through; it spares a lookup per call to a provider
 * base URL, which the system resolver does not cache.
 */
const RESOLVED_TTL_MS = 30_000
const RESOLVED_ENTRIES = 1_000

export class EgressPolicy {
  readonly enabled: boolean
  private readonly allow: AllowList
  private readonly resolve: (host: string) => Promise<string[]>
  private readonly now: () => number
  private readonly resolved = new Map<string, { addresses: string[]; until: number }>()

  constructor(options: EgressOptions) {
    this.enabled = options.enabled
    this.allow = options.allow ?? { hosts: new Set() }
    this.resolve = options.resolve ?? systemResolve
    this.now = options.now ?? Date.now
  }

  /** Why a destination cannot be saved, or undefined when it can: the checks that need no network. */
  refusal(destination: string): string | undefined {
    let url: URL
    try {
      url = new URL(destination)
    } catch {
      return 'destination must be an absolute URL'
    }
    if (url.username || url.password) return 'destination must not carry a user name or password'
    const host = bareHost(url)
    const allowed = this.allowedHost(host)
    if (url.protocol !== 'https:' && !(url.protocol === 'http:' && allowed))
      return 'destination must be https:// (http:// only for hosts the operator allows in GW_EGRESS_ALLOW_HOSTS)'
    if (isIP(host) && !this.addressAllowed(host, allowed))
      return `destination ${host} is a private, loopback or link-local address, which the operator has not allowed (GW_EGRESS_ALLOW_HOSTS)`
    if (isLocalhostName(host) && !allowed)
      return `destination ${host} is this machine, which the operator has not allowed (GW_EGRESS_ALLOW_HOSTS)`
    return undefined
  }

  /**
   * The check an address passes before it is saved, as the caller's error: 409 when outgoing calls are
   * off, 400 naming the field and the rule it breaks.
   */
  requireSavable(destination: string, field: string): void {
    if (!this.enabled) throw egressDisabled()
    const refusal = this.refusal(destination)
    if (refusal) throw badRequest(refusal.replace(/^destination/, field))
  }

  /**
   * Resolves the destination's host now and checks every address it answers: throws EgressRefused when
   * one is internal and not allowed. The connection is made to the first checked address.
   */
  async pin(destination: string): Promise<PinnedDestination> {
    if (!this.enabled)
      throw new EgressRefused('outgoing calls to addresses users configure are switched off in this deployment (GW_EGRESS=off)')
    const refusal = this.refusal(destination)
    if (refusal) throw new EgressRefused(refusal)
    const url = new URL(destination)
    const host = bareHost(url)
    const allowed = this.allowedHost(host)
    const addresses = isIP(host) ? [host] : await this.addressesOf(host)
    if (addresses.length === 0) throw new EgressRefused(`${host} does not resolve`)
    const internal = addresses.find((address) => !this.addressAllowed(address, allowed))
    if (internal)
      throw new EgressRefused(
        `${host} resolves to ${internal}, a private, loopback or link-local address, which the operator has not allowed (GW_EGRESS_ALLOW_HOSTS)`,
      )
    const address = addresses[0] as string
    const pinned = new URL(url)
    pinned.hostname = isIP(address) === 6 ? `[${address}]` : address
    return { url: pinned.toString(), host: url.host, serverName: host }
  }

  /**
   * A request to a destination a person named: pinned to the address checked now, the Host header and
   * TLS name kept, no redirect followed (it could lead past the check), and bounded in time.
   */
  async fetch(
    destination: string,
    init: { method?: string; headers?: Record<string, string>; body?: string; timeoutMs: number },
  ) {
    const pinned = await this.pin(destination)
    return fetch(pinned.url, {
      method: init.method,
      headers: { ...init.headers, host: pinned.host },
      body: init.body,
      redirect: 'manual',
      signal: AbortSignal.timeout(init.timeoutMs),
      tls: { serverName: pinned.serverName },
    })
  }

  /**
   * `fetch`'s own signature with the same checks as `fetch` above, for a client library that makes its
   * requests itself (the MCP SDK's transports): each request is checked and pinned when it is made, and
   * a redirect is handed back to the library (not followed here), whose next request is checked again.
   * The caller's signal bounds it.
   */
  readonly guardedFetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const destination = input instanceof Request ? input.url : input.toString()
    const pinned = await this.pin(destination)
    const headers = new Headers(input instanceof Request ? input.headers : undefined)
    for (const [name, value] of new Headers(init?.headers)) headers.set(name, value)
    headers.set('host', pinned.host)
    return fetch(pinned.url, {
      ...init,
      headers,
      redirect: 'manual',
      tls: { serverName: pinned.serverName },
    })
  }

  /** The host's addresses, looked up at most every RESOLVED_TTL_MS. */
  private async addressesOf(host: string): Promise<string[]> {
    const known = this.resolved.get(host)
    if (known && known.until > this.now()) return known.addresses
    const addresses = await this.resolveWithin(host)
    if (this.resolved.size >= RESOLVED_ENTRIES) this.resolved.clear()
    this.resolved.set(host, { addresses, until: this.now() + RESOLVED_TTL_MS })
    return addresses
  }

  /** A resolver that does not answer is a destination that cannot be reached, not a wait without end. */
  private async resolveWithin(host: string): Promise<string[]> {
    let timer: ReturnType<typeof setTimeout> | undefined
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new EgressRefused(`${host} did not resolve within ${RESOLVE_TIMEOUT_MS} ms`)),
        RESOLVE_TIMEOUT_MS,
      )
    })
    try {
      return await Promise.race([this.resolve(host), timeout])
    } catch (error) {
      if (error instanceof EgressRefused) throw error
      throw new EgressRefused(`${host} does not resolve: ${(error as Error).message}`)
    } finally {
      clearTimeout(timer)
    }
  }

  private allowedHost(host: string): boolean {
    return this.allow.hosts.has(host) || (isIP(host) !== 0 && this.allow.networks?.check(host, family(host)) === true)
  }

  private addressAllowed(address: string, hostAllowed: boolean): boolean {
    return (
      hostAllowed ||
      this.allow.networks?.check(address, family(address)) === true ||
      !internalNetworks().check(address, family(address))
    )
  }
}
