import { madeOnFirstRead } from '../util/made-on-first-read'
import type { Database } from './database'
import { a2aAgentSealsRepository, a2aAgentsRepository } from './repositories/a2a-agents'
import { accessDefaultsRepository, accessRulesRepository } from './repositories/access-rules'
import { annotationsRepository } from './repositories/annotations'
import { auditRepository } from './repositories/audit'
import { budgetActionsRepository } from './repositories/budget-actions'
import { budgetLimitsRepository, budgetNoticesRepository, downgradeMappingsRepository } from './repositories/budgets'
import { a2aCallsRepository, mcpToolCallsRepository } from './repositories/calls'
import { apiKeysRepository, credentialsRepository, sessionsRepository } from './repositories/credentials'
import { fallbackChainsRepository } from './repositories/fallback-chains'
import { feedbackRepository } from './repositories/feedback'
import { integrationSealsRepository, integrationsRepository } from './repositories/integrations'
import { invitesRepository, inviteTokensRepository } from './repositories/invites'
import { logRetentionRepository } from './repositories/log-retention'
import { mcpConnectionsRepository } from './repositories/mcp-connections'
import { mcpServerSealsRepository, mcpServersRepository } from './repositories/mcp-servers'
import { membershipsRepository, userMembershipsRepository } from './repositories/memberships'
import { modelPricesRepository } from './repositories/model-prices'
import { allSettingsRepository, organizationSettingsRepository } from './repositories/organization-settings'
import { organizationsRepository } from './repositories/organizations'
import { providerKeySealsRepository, providerKeysRepository } from './repositories/provider-keys'
import { rateLimitRulesRepository } from './repositories/rate-limit-rules'
import { requestBodiesRepository } from './repositories/request-bodies'
import { requestFlagsRepository } from './repositories/request-flags'
import { requestRejectsRepository } from './repositories/request-rejects'
import { requestsRepository } from './repositories/requests'
import { rolesRepository } from './repositories/roles'
import { savedViewsRepository } from './repositories/saved-views'
import { serverKeysRepository } from './repositories/server-keys'
import { ssoRepository, ssoSealsRepository } from './repositories/sso'
import { teamsRepository } from './repositories/teams'
import { toolRatesRepository } from './repositories/tool-rates'
import { usersRepository } from './repositories/users'
import { deliveriesRepository, webhooksRepository } from './repositories/webhooks'

/**
 * What belongs to one organisation, bound to it: every statement these repositories run is within the
 * organisation (`scope.ts`), and every row they insert is given it. A module reaches an organisation's
 * data only through `store.org(principal.orgId)`, so naming another organisation's id finds nothing
 * and changes nothing, without a filter to remember.
 */
const ORG_REPOSITORIES = {
  teams: teamsRepository,
  memberships: membershipsRepository,
  roles: rolesRepository,
  savedViews: savedViewsRepository,
  rateLimitRules: rateLimitRulesRepository,
  modelPrices: modelPricesRepository,
  toolRates: toolRatesRepository,
  providerKeys: providerKeysRepository,
  apiKeys: apiKeysRepository,
  sessions: sessionsRepository,
  sso: ssoRepository,
  settings: organizationSettingsRepository,
  annotations: annotationsRepository,
  feedback: feedbackRepository,
  mcpConnections: mcpConnectionsRepository,
  invites: invitesRepository,
  audit: auditRepository,
  webhooks: webhooksRepository,
  integrations: integrationsRepository,
  budgetLimits: budgetLimitsRepository,
  downgradeMappings: downgradeMappingsRepository,
  budgetNotices: budgetNoticesRepository,
  fallbackChains: fallbackChainsRepository,
  accessRules: accessRulesRepository,
  accessDefaults: accessDefaultsRepository,
  mcpServers: mcpServersRepository,
  a2aAgents: a2aAgentsRepository,
  logRetention: logRetentionRepository,
} satisfies Record<string, (db: Database, orgId: string, now: Clock) => object>

export type OrgRepositories = { readonly [K in keyof typeof ORG_REPOSITORIES]: ReturnType<(typeof ORG_REPOSITORIES)[K]> }

/**
 * What is not one organisation's, or is reached before the organisation is known: organisations
 * themselves, people, credentials by their id (authentication), invitation tokens, the server's keys
 * and the re-sealing of every secret (rotation), and the request log, which the writer fills for every
 * organisation and which reads through a scope that `query/` builds in one place.
 */
const SYSTEM_REPOSITORIES = {
  organizations: organizationsRepository,
  users: usersRepository,
  userMemberships: userMembershipsRepository,
  credentials: credentialsRepository,
  inviteTokens: inviteTokensRepository,
  serverKeys: serverKeysRepository,
  providerKeySeals: providerKeySealsRepository,
  ssoSeals: ssoSealsRepository,
  allSettings: allSettingsRepository,
  requests: requestsRepository,
  requestBodies: requestBodiesRepository,
  requestFlags: requestFlagsRepository,
  requestRejects: requestRejectsRepository,
  mcpToolCalls: mcpToolCallsRepository,
  a2aCalls: a2aCallsRepository,
  budgetActions: budgetActionsRepository,
  deliveries: deliveriesRepository,
  integrationSeals: integrationSealsRepository,
  mcpServerSeals: mcpServerSealsRepository,
  a2aAgentSeals: a2aAgentSealsRepository,
} satisfies Record<string, (db: Database) => object>

export type SystemRepositories = { readonly [K in keyof typeof SYSTEM_REPOSITORIES]: ReturnType<(typeof SYSTEM_REPOSITORIES)[K]> }

export interface Repositories extends SystemRepositories {
  /** One organisation's repositories, bound to it. */
  org(orgId: string): OrgRepositories
}

export interface Store extends Repositories {
  readonly dialect: Database['dialect']
  /** The dialect and tables, for code that builds conditions (the request filter compiler). */
  readonly schema: Pick<Database, 'dialect' | 'tables'>
  /** Everything `work` does through the repositories it is handed commits or rolls back together. */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>
  ping(): Promise<void>
}

/** Milliseconds since the epoch: the clock the composition root injects (Date.now by default). */
export type Clock = () => number

type AsyncMethods = Record<string, (...args: never[]) => Promise<unknown>>
type Wrap = <R extends object>(repository: R) => R

/**
 * Every method of a repository run through `outsideTransactions` (each is one statement, or runs in a
 * transaction of its own). Methods are called on their own repository, whose other methods some of
 * them use.
 */
const outsideTransactions =
  (db: Database): Wrap =>
  (repository) => {
    const methods = repository as unknown as AsyncMethods
    return Object.fromEntries(
      Object.entries(methods).map(([name, method]) => [
        name,
        (...args: never[]) => db.outsideTransactions(() => method.apply(methods, args)),
      ]),
    ) as typeof repository
  }

const asIs: Wrap = (repository) => repository

/**
 * `org(orgId)` for one database: an object whose repositories are made when first used (a call
 * touches one or two of the fifteen), on a prototype built once.
 */
function orgBinder(db: Database, wrap: Wrap, now: Clock): (orgId: string) => OrgRepositories {
  class Bound {
    readonly made: Partial<Record<string, object>> = {}
    constructor(readonly orgId: string) {}
  }
  for (const [name, make] of Object.entries(ORG_REPOSITORIES)) {
    Object.defineProperty(Bound.prototype, name, {
      get(this: Bound) {
        this.made[name] ??= wrap((make as (db: Database, orgId: string, now: Clock) => object)(db, this.orgId, now))
        return this.made[name]
      },
    })
  }
  return (orgId) => new Bound(orgId) as unknown as OrgRepositories
}

/**
 * Every repository of one database, each made when first read (util/made-on-first-read.ts): making one
 * makes the tables it uses, and a start or a gateway call uses a few of them.
 */
function repositories(db: Database, wrap: Wrap, now: Clock): Repositories {
  const makers = Object.fromEntries(
    Object.entries(SYSTEM_REPOSITORIES).map(([name, make]) => [name, () => wrap((make as (db: Database) => object)(db))]),
  ) as { [K in keyof SystemRepositories]: () => SystemRepositories[K] }
  return Object.assign(madeOnFirstRead(makers), { org: orgBinder(db, wrap, now) })
}

/** Every repository over one database; `now` stamps the rows a repository dates itself (a tag, a hidden property). */
export function createStore(db: Database, options: { now?: Clock } = {}): Store {
  const now = options.now ?? Date.now
  const own = repositories(db, outsideTransactions(db), now)
  // SQLite hands every transaction the same database: its repositories, and the statements they have
  // prepared, serve again instead of being made anew for every request-log batch.
  const inTransaction = new WeakMap<Database, Repositories>()
  const repositoriesOf = (tx: Database): Repositories => {
    let found = inTransaction.get(tx)
    if (!found) {
      found = repositories(tx, asIs, now)
      inTransaction.set(tx, found)
    }
    return found
  }
  // Added to the repositories' own object: spreading it would make every repository now.
  const rest: Omit<Store, keyof Repositories> = {
    dialect: db.dialect,
    schema: { dialect: db.dialect, tables: db.tables },
    transaction: (work) => db.transaction((tx) => work(repositoriesOf(tx))),
    ping: async () => {
      await db.query('SELECT 1')
    },
  }
  return Object.assign(own, rest)
}
