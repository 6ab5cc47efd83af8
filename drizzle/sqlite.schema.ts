/**
 * The SQLite schema's tables by name, for drizzle-kit, which finds a schema's tables among the names its
 * module exports. gw's schema makes each table when it is first used (src/util/made-on-first-read.ts), so
 * this module, which only drizzle-kit and the tests load, makes them all. test/schema-parity.test.ts
 * fails when a table is missing here.
 */
import { tables } from '../src/store/schema.sqlite'

export const {
  organizations,
  users,
  roles,
  memberships,
  sessions,
  providerKeys,
  apiKeys,
  teams,
  teamMembers,
  auditLog,
  requests,
  requestFeedback,
  requestBodies,
  requestLogRejects,
  rateLimitRules,
  mcpConnections,
  mcpUpstreamConnections,
  serverKeys,
  invites,
  organizationSettings,
  savedFilters,
  hiddenProperties,
  ssoConfigs,
  requestScores,
  sessionFeedback,
  sessionTags,
  requestFlags,
  mcpToolCalls,
  a2aCalls,
  budgetActions,
  webhooks,
  outbox,
  integrations,
  budgetLimits,
  downgradeMappings,
  budgetNotices,
  modelPrices,
  toolRates,
  fallbackChains,
  accessRules,
  accessDefaults,
  mcpServers,
  a2aAgents,
} = tables
