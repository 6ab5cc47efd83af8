import type { Database } from './database'
import { annotationsRepository } from './repositories/annotations'
import { auditRepository } from './repositories/audit'
import { budgetActionsRepository } from './repositories/budget-actions'
import { a2aCallsRepository, mcpToolCallsRepository } from './repositories/calls'
import { apiKeysRepository, sessionsRepository } from './repositories/credentials'
import { feedbackRepository } from './repositories/feedback'
import { invitesRepository } from './repositories/invites'
import { mcpConnectionsRepository } from './repositories/mcp-connections'
import { membershipsRepository } from './repositories/memberships'
import { organizationSettingsRepository } from './repositories/organization-settings'
import { organizationsRepository } from './repositories/organizations'
import { providerKeysRepository } from './repositories/provider-keys'
import { rateLimitRulesRepository } from './repositories/rate-limit-rules'
import { requestBodiesRepository } from './repositories/request-bodies'
import { requestFlagsRepository } from './repositories/request-flags'
import { requestsRepository } from './repositories/requests'
import { rolesRepository } from './repositories/roles'
import { savedViewsRepository } from './repositories/saved-views'
import { serverKeysRepository } from './repositories/server-keys'
import { ssoRepository } from './repositories/sso'
import { teamsRepository } from './repositories/teams'
import { usersRepository } from './repositories/users'

const repositories = (db: Database) => ({
  organizations: organizationsRepository(db),
  users: usersRepository(db),
  memberships: membershipsRepository(db),
  roles: rolesRepository(db),
  sessions: sessionsRepository(db),
  apiKeys: apiKeysRepository(db),
  audit: auditRepository(db),
  requests: requestsRepository(db),
  requestBodies: requestBodiesRepository(db),
  requestFlags: requestFlagsRepository(db),
  feedback: feedbackRepository(db),
  rateLimitRules: rateLimitRulesRepository(db),
  providerKeys: providerKeysRepository(db),
  mcpConnections: mcpConnectionsRepository(db),
  serverKeys: serverKeysRepository(db),
  invites: invitesRepository(db),
  teams: teamsRepository(db),
  settings: organizationSettingsRepository(db),
  savedViews: savedViewsRepository(db),
  sso: ssoRepository(db),
  annotations: annotationsRepository(db),
  mcpToolCalls: mcpToolCallsRepository(db),
  a2aCalls: a2aCallsRepository(db),
  budgetActions: budgetActionsRepository(db),
})

export type Repositories = ReturnType<typeof repositories>

export interface Store extends Repositories {
  readonly dialect: Database['dialect']
  /** The dialect and tables, for code that builds conditions (the request filter compiler). */
  readonly schema: Pick<Database, 'dialect' | 'tables'>
  /** Everything `work` does through the store it is handed commits or rolls back together. */
  transaction<T>(work: (tx: Repositories) => Promise<T>): Promise<T>
  ping(): Promise<void>
}

type AsyncMethods = Record<string, (...args: never[]) => Promise<unknown>>

/**
 * Every repository method run through `whenUnlocked`: each is one statement, or runs in a transaction.
 * Methods are called on their own repository, whose other methods some of them use.
 */
function waitingForLocks<R extends Record<string, AsyncMethods>>(
  repos: R,
  whenUnlocked: NonNullable<Database['whenUnlocked']>,
): R {
  const wrap = (methods: AsyncMethods): AsyncMethods =>
    Object.fromEntries(
      Object.entries(methods).map(([name, method]) => [
        name,
        (...args: never[]) => whenUnlocked(() => method.apply(methods, args)),
      ]),
    )
  return Object.fromEntries(Object.entries(repos).map(([name, methods]) => [name, wrap(methods)])) as R
}

/** Every repository over one database. */
export function createStore(db: Database): Store {
  const own = db.whenUnlocked ? waitingForLocks(repositories(db), db.whenUnlocked) : repositories(db)
  return {
    ...own,
    dialect: db.dialect,
    schema: { dialect: db.dialect, tables: db.tables },
    // SQLite's transaction runs on the database itself: its repositories, and the statements they have
    // prepared, serve again instead of being made anew for every request-log batch.
    transaction: (work) => db.transaction((tx) => work(tx === db ? own : repositories(tx))),
    ping: async () => {
      await db.query('SELECT 1')
    },
  }
}
