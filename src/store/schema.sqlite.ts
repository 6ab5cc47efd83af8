import { isNotNull } from 'drizzle-orm'
import { type AnySQLiteColumn, index, integer, primaryKey, real, sqliteTable, text, uniqueIndex } from 'drizzle-orm/sqlite-core'
import { PROVIDER_NAMES } from '../directory/providers'
import { madeOnFirstRead } from '../util/made-on-first-read'
import type { AgentCardDocument, CallAttempt, ChainRetry, ChainStep, ChainTriggers, ConnectionSettings } from './json-columns'

// Kept table for table, column for column, with schema.pg.ts: the repositories are written once
// against these shapes and the contract tests run them on both dialects. The two files differ only in
// their imports and the column types just below; from `id` on they are the same text, so a change is
// made to both alike. schema-parity.ts fails the type check when the tables' columns part ways.

// The column types, named alike in both schema files; each maps to its dialect's type here.
/** What a foreign key names: typed here, so that tables can name each other before either is made. */
type ReferencedColumn = AnySQLiteColumn
const table = sqliteTable
/** A 64-bit integer read as a JS number (exact up to 2^53): nano-USD amounts and other large counts. */
const int64 = <N extends string>(name: N) => integer(name)
const double = <N extends string>(name: N) => real(name)
const bool = <N extends string>(name: N) => integer(name, { mode: 'boolean' })
/** Its shape is given with `.$type<T>()`, a type from json-columns.ts, so that both schemas name the same one. */
const json = <N extends string>(name: N) => text(name, { mode: 'json' })
const timestamp = <N extends string>(name: N) => integer(name, { mode: 'timestamp_ms' })

// The columns most tables share.
const id = () => text('id').primaryKey()
/** The organisation that owns the row: deleting the organisation deletes the row (cascade). */
const orgId = () =>
  text('org_id')
    .notNull()
    .references((): ReferencedColumn => tables.organizations.id, { onDelete: 'cascade' })
/**
 * The organisation of a log row (the request log and what hangs off it, relayed calls, the audit log,
 * the outbox): named by id, with no foreign key, so nothing cascades; what must go with a deleted
 * organisation is deleted table by table in `organizationsRepository.deleteWithData`.
 */
const logOrgId = () => text('org_id').notNull()
/** The person the row belongs to: deleting the person deletes the row (cascade). */
const userId = () =>
  text('user_id')
    .notNull()
    .references((): ReferencedColumn => tables.users.id, { onDelete: 'cascade' })
const createdAt = () => timestamp('created_at').notNull()
const updatedAt = () => timestamp('updated_at').notNull()
/** `createdAt` and `updatedAt`, for the rows that are changed after they are made. */
const timestamps = () => ({ createdAt: createdAt(), updatedAt: updatedAt() })

/** What every relayed call records, whatever it called: who, how it went, how long, what it cost. */
const relayedCall = () => ({
  id: id(),
  orgId: logOrgId(),
  userId: text('user_id'),
  apiKeyId: text('api_key_id'),
  status: text('status', { enum: ['success', 'error'] }).notNull(),
  latencyMs: integer('latency_ms'),
  costNano: int64('cost_nano'),
  error: text('error'),
  createdAt: createdAt(),
})

// Each table is made when it is first read (util/made-on-first-read.ts): a start makes the few it uses.
export const tables = madeOnFirstRead({
  organizations: () =>
    table('organizations', {
      id: id(),
      name: text('name').notNull(),
      tier: text('tier', { enum: ['free', 'pro', 'growth', 'enterprise'] }).notNull(),
      /** Who sees which teams: `all` (every member sees every team) or `members` (only one's own teams). */
      teamVisibility: text('team_visibility', { enum: ['all', 'members'] })
        .notNull()
        .default('all'),
      creditBalanceNano: int64('credit_balance_nano').notNull().default(0),
      createdAt: createdAt(),
    }),

  users: () =>
    table('users', {
      id: id(),
      email: text('email').notNull().unique(),
      passwordHash: text('password_hash'),
      createdAt: createdAt(),
    }),

  roles: () =>
    table(
      'roles',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        permissions: json('permissions').$type<string[]>().notNull(),
        archivedAt: timestamp('archived_at'),
        createdAt: createdAt(),
      },
      (t) => [index('roles_org_idx').on(t.orgId)],
    ),

  memberships: () =>
    table(
      'memberships',
      {
        orgId: orgId(),
        userId: userId(),
        /** `owner`, `admin`, `member`, or the id of a custom role of the same organisation. */
        role: text('role').notNull(),
        createdAt: createdAt(),
      },
      (t) => [primaryKey({ columns: [t.orgId, t.userId] }), index('memberships_user_idx').on(t.userId)],
    ),

  sessions: () =>
    table(
      'sessions',
      {
        id: id(),
        userId: userId(),
        orgId: orgId(),
        secretHash: text('secret_hash').notNull(),
        createdAt: createdAt(),
        expiresAt: timestamp('expires_at').notNull(),
        revokedAt: timestamp('revoked_at'),
      },
      (t) => [index('sessions_user_idx').on(t.userId)],
    ),

  /** An organisation's own provider credentials (BYOK); the secret is sealed by the vault, never stored in clear. */
  providerKeys: () =>
    table(
      'provider_keys',
      {
        id: id(),
        orgId: orgId(),
        provider: text('provider', { enum: PROVIDER_NAMES }).notNull(),
        name: text('name').notNull(),
        baseUrl: text('base_url'),
        sealedSecret: text('sealed_secret').notNull(),
        /** `maskSecret` of the secret, kept so that reads never need to decrypt. */
        hint: text('hint').notNull(),
        /** Its share of the provider's calls among the organisation's keys; 0: used only when the others are cooling down. */
        weight: integer('weight').notNull().default(1),
        /** Where and as whom the provider is called, beyond the secret and the address (region, deployment aliases, ...). */
        settings: json('settings').$type<ConnectionSettings>(),
        ...timestamps(),
      },
      (t) => [index('provider_keys_org_provider_idx').on(t.orgId, t.provider)],
    ),

  apiKeys: () =>
    table(
      'api_keys',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        /** The public part of the key (`gw-sk-<id>`), safe to show in lists and logs. */
        prefix: text('prefix').notNull(),
        secretHash: text('secret_hash').notNull(),
        scopes: json('scopes').$type<string[]>().notNull(),
        /** Set for a proxy key: the one provider key this gw key may use; the proxy key goes with it. */
        providerKeyId: text('provider_key_id').references((): ReferencedColumn => tables.providerKeys.id, {
          onDelete: 'cascade',
        }),
        createdByUserId: text('created_by_user_id').references((): ReferencedColumn => tables.users.id, { onDelete: 'set null' }),
        createdAt: createdAt(),
        expiresAt: timestamp('expires_at'),
        revokedAt: timestamp('revoked_at'),
        lastUsedAt: timestamp('last_used_at'),
      },
      (t) => [index('api_keys_org_idx').on(t.orgId)],
    ),

  teams: () =>
    table(
      'teams',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        createdAt: createdAt(),
      },
      (t) => [uniqueIndex('teams_org_name_idx').on(t.orgId, t.name)],
    ),

  teamMembers: () =>
    table(
      'team_members',
      {
        teamId: text('team_id')
          .notNull()
          .references((): ReferencedColumn => tables.teams.id, { onDelete: 'cascade' }),
        userId: userId(),
        createdAt: createdAt(),
      },
      (t) => [primaryKey({ columns: [t.teamId, t.userId] })],
    ),

  auditLog: () =>
    table(
      'audit_log',
      {
        id: id(),
        orgId: logOrgId(),
        actorId: text('actor_id'),
        principalKind: text('principal_kind', { enum: ['session', 'api_key', 'cli', 'system'] }).notNull(),
        action: text('action').notNull(),
        target: text('target'),
        sourceIp: text('source_ip'),
        outcome: text('outcome', { enum: ['success', 'failure'] }).notNull(),
        detail: json('detail').$type<Record<string, unknown>>(),
        createdAt: createdAt(),
      },
      (t) => [index('audit_org_time_idx').on(t.orgId, t.createdAt)],
    ),

  requests: () =>
    table(
      'requests',
      {
        id: id(),
        orgId: logOrgId(),
        apiKeyId: text('api_key_id'),
        userId: text('user_id'),
        sessionId: text('session_id'),
        /** The caller's own customer the call was made for (`Gw-Customer-Id`): a scope for reports and budgets. */
        customerId: text('customer_id'),
        /** The Stripe customer a call's usage is metered to (`Gw-Stripe-Customer-Id`). */
        stripeCustomerId: text('stripe_customer_id'),
        /** The member the call is attributed to: the key's creator, or the person whose session made it. */
        memberId: text('member_id'),
        properties: json('properties').$type<Record<string, string>>(),
        provider: text('provider').notNull(),
        model: text('model').notNull(),
        path: text('path').notNull(),
        gatewayMode: text('gateway_mode', { enum: ['passthrough', 'translated'] }),
        translationWarning: text('translation_warning'),
        status: text('status', { enum: ['success', 'error'] }).notNull(),
        httpStatus: integer('http_status').notNull(),
        latencyMs: integer('latency_ms'),
        timeToFirstTokenMs: integer('time_to_first_token_ms'),
        promptTokens: integer('prompt_tokens'),
        completionTokens: integer('completion_tokens'),
        cacheReadTokens: integer('cache_read_tokens'),
        cacheWriteTokens: integer('cache_write_tokens'),
        totalTokens: integer('total_tokens'),
        costNano: int64('cost_nano'),
        /** Why `cost_nano` is empty when it is: no price known, no usage reported, not dispatched. */
        costNote: text('cost_note'),
        /** Which price the cost was computed with: `builtin` or `override:<id>`. */
        priceSource: text('price_source'),
        estimatedCostNano: int64('estimated_cost_nano'),
        ptb: bool('ptb').notNull().default(false),
        error: text('error'),
        /** ISO 3166-1 alpha-2, from the header a trusted proxy sets (GW_COUNTRY_HEADER); null when unknown. */
        country: text('country'),
        /** Every provider call the request took (retries, other keys, fallback steps); null when it called none. */
        attempts: json('attempts').$type<CallAttempt[]>(),
        /** Answered from gw's response cache: no provider was called, nothing was charged. */
        cached: bool('cached').notNull().default(false),
        /** The fallback chain that served the call, when its model was a chain's alias. */
        fallbackChainId: text('fallback_chain_id'),
        /** What a cached answer would have cost had the provider been called again. */
        cacheSavedNano: int64('cache_saved_nano'),
        /** The model the caller asked for, when a budget's downgrade had another serve the call. */
        downgradedFrom: text('downgraded_from'),
        /** The organisation's credits left after a call billed to them (PTB), as its metadata says. */
        creditsRemainingNano: int64('credits_remaining_nano'),
        createdAt: createdAt(),
      },
      (t) => [
        index('requests_org_time_idx').on(t.orgId, t.createdAt),
        index('requests_org_model_time_idx').on(t.orgId, t.model, t.createdAt),
        // Most calls name no user or customer: holding only the calls that do leaves two of the log's
        // indexes untouched by most inserts (the writer's cost a record and a commit's pages), and every
        // query by user or customer names one, which implies the condition.
        index('requests_org_user_time_idx').on(t.orgId, t.userId, t.createdAt).where(isNotNull(t.userId)),
        index('requests_org_customer_time_idx').on(t.orgId, t.customerId, t.createdAt).where(isNotNull(t.customerId)),
      ],
    ),

  /** A rating of one request (`POST /v1/feedback`): the latest one counts. */
  requestFeedback: () =>
    table('request_feedback', {
      requestId: text('request_id').primaryKey(),
      orgId: logOrgId(),
      rating: double('rating').notNull(),
      actorId: text('actor_id'),
      createdAt: createdAt(),
    }),

  /**
   * What was sent and answered, apart from the request log so that queries over the log never read
   * bodies. Each side is kept up to a bound (see gateway/request-log/body-capture.ts); `truncated` says it was cut.
   */
  requestBodies: () =>
    table(
      'request_bodies',
      {
        requestId: text('request_id').primaryKey(),
        orgId: logOrgId(),
        requestBody: text('request_body').notNull(),
        responseBody: text('response_body'),
        truncated: bool('truncated').notNull().default(false),
        createdAt: createdAt(),
      },
      // The retention job finds an organisation's oldest bodies by it, a batch at a time.
      (t) => [index('request_bodies_org_time_idx').on(t.orgId, t.createdAt)],
    ),

  /**
   * Request records the database refused (a value it cannot hold): set aside here once, never retried,
   * so that one bad record cannot hold up the records behind it. `record` is the record as JSON text
   * (JSON escapes every character a text column cannot hold); an operator can read it and replay it.
   */
  requestLogRejects: () =>
    table(
      'request_log_rejects',
      {
        requestId: text('request_id').primaryKey(),
        orgId: logOrgId(),
        error: text('error').notNull(),
        record: text('record').notNull(),
        createdAt: createdAt(),
      },
      (t) => [index('request_log_rejects_org_time_idx').on(t.orgId, t.createdAt)],
    ),

  /** An organisation's token-bucket rules (spec 8.1 layer 2); a `Gw-RateLimit-Policy` header overrides them for one request. */
  rateLimitRules: () =>
    table(
      'rate_limit_rules',
      {
        id: id(),
        orgId: orgId(),
        quota: double('quota').notNull(),
        windowSeconds: integer('window_seconds').notNull(),
        unit: text('unit', { enum: ['request', 'cents'] }).notNull(),
        segment: text('segment', { enum: ['global', 'user', 'prop', 'model'] }).notNull(),
        property: text('property'),
        ...timestamps(),
      },
      (t) => [index('rate_limit_rules_org_idx').on(t.orgId)],
    ),

  /** Grants people gave MCP clients to act through gw (the MCP work fills it; the org-wide listing reads it now). */
  mcpConnections: () =>
    table(
      'mcp_connections',
      {
        id: id(),
        orgId: orgId(),
        userId: text('user_id'),
        client: text('client').notNull(),
        scopes: json('scopes').$type<string[]>().notNull(),
        createdAt: createdAt(),
        revokedAt: timestamp('revoked_at'),
      },
      (t) => [index('mcp_connections_org_idx').on(t.orgId)],
    ),

  /** Connections gw holds to upstream MCP servers on someone's behalf. */
  mcpUpstreamConnections: () =>
    table(
      'mcp_upstream_connections',
      {
        id: id(),
        orgId: orgId(),
        userId: text('user_id'),
        serverUrl: text('server_url').notNull(),
        status: text('status').notNull(),
        createdAt: createdAt(),
      },
      (t) => [index('mcp_upstream_connections_org_idx').on(t.orgId)],
    ),

  /**
   * Keys gw makes for itself, sealed by the vault under the server secret: rotating that secret re-seals
   * these rows instead of invalidating every credential hash made with them.
   */
  serverKeys: () =>
    table('server_keys', {
      name: text('name').primaryKey(),
      sealed: text('sealed').notNull(),
      createdAt: createdAt(),
    }),

  /** One-time invitations to set a password and join an organisation (`add_member` for a new person). */
  invites: () =>
    table('invites', {
      id: id(),
      orgId: orgId(),
      userId: userId(),
      secretHash: text('secret_hash').notNull(),
      createdAt: createdAt(),
      expiresAt: timestamp('expires_at').notNull(),
      usedAt: timestamp('used_at'),
    }),

  /** An organisation's settings: onboarding, terms, and what becomes of stored bodies. One row per organisation. */
  organizationSettings: () =>
    table('organization_settings', {
      orgId: orgId().primaryKey(),
      onboarding: json('onboarding').$type<Record<string, unknown>>(),
      termsAcceptedAt: timestamp('terms_accepted_at'),
      termsAcceptedBy: text('terms_accepted_by'),
      termsVersion: text('terms_version'),
      /** `null`: bodies are not stored at all; otherwise they are deleted after this many days. */
      bodyRetentionDays: integer('body_retention_days'),
      /**
       * How many days the organisation keeps its request records (and what hangs off them), within the
       * operator's GW_REQUEST_RETENTION_DAYS; `null`: the operator's default.
       */
      requestRetentionDays: integer('request_retention_days'),
      piiRedaction: bool('pii_redaction').notNull().default(false),
      /** Streams end with the `gw` metadata frame for every call of the organisation, asked for or not. */
      streamMetaFrame: bool('stream_meta_frame').notNull().default(false),
      /** The IANA time zone calendar budget windows (day, week, month) follow. */
      budgetTimezone: text('budget_timezone').notNull().default('UTC'),
      /** The first day of a budget week, ISO numbered: 1 is Monday, 7 is Sunday. */
      budgetWeekStart: integer('budget_week_start').notNull().default(1),
      /** The day of the month (1 to 28) a budget month starts on. */
      budgetMonthStartDay: integer('budget_month_start_day').notNull().default(1),
      /** Percentages of a limit at which alerts go out; null: no alerts. */
      alertThresholds: json('alert_thresholds').$type<number[]>(),
      /** Where alerts go: `webhook` (the budget events), `slack` (the Slack integration). */
      alertChannels: json('alert_channels').$type<string[]>(),
      updatedAt: updatedAt(),
    }),

  /** Saved views: a named request filter (spec 2.5) an organisation keeps to reuse. */
  savedFilters: () =>
    table(
      'saved_filters',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        filter: json('filter').$type<unknown>().notNull(),
        createdBy: text('created_by'),
        ...timestamps(),
      },
      (t) => [index('saved_filters_org_idx').on(t.orgId)],
    ),

  /** Request properties an organisation has hidden from its property views. */
  hiddenProperties: () =>
    table(
      'hidden_properties',
      {
        orgId: orgId(),
        key: text('key').notNull(),
        hiddenBy: text('hidden_by'),
        createdAt: createdAt(),
      },
      (t) => [primaryKey({ columns: [t.orgId, t.key] })],
    ),

  /** An organisation's single sign-on (OIDC) settings; the client secret is sealed by the vault. */
  ssoConfigs: () =>
    table('sso_configs', {
      orgId: orgId().primaryKey(),
      issuer: text('issuer').notNull(),
      clientId: text('client_id').notNull(),
      sealedClientSecret: text('sealed_client_secret').notNull(),
      clientSecretHint: text('client_secret_hint').notNull(),
      domain: text('domain'),
      domainChallenge: text('domain_challenge'),
      domainVerifiedAt: timestamp('domain_verified_at'),
      enforced: bool('enforced').notNull().default(false),
      updatedAt: updatedAt(),
    }),

  /** Named scores on a request (evaluations, graders); one value per name, the latest counts. */
  requestScores: () =>
    table(
      'request_scores',
      {
        requestId: text('request_id').notNull(),
        orgId: logOrgId(),
        name: text('name').notNull(),
        value: double('value').notNull(),
        actorId: text('actor_id'),
        createdAt: createdAt(),
      },
      (t) => [primaryKey({ columns: [t.requestId, t.name] }), index('request_scores_org_idx').on(t.orgId, t.name)],
    ),

  /** Feedback on a whole session (the `Gw-Session-Id` of its requests); the latest counts. */
  sessionFeedback: () =>
    table(
      'session_feedback',
      {
        orgId: logOrgId(),
        sessionId: text('session_id').notNull(),
        rating: double('rating').notNull(),
        actorId: text('actor_id'),
        createdAt: createdAt(),
      },
      (t) => [primaryKey({ columns: [t.orgId, t.sessionId] })],
    ),

  sessionTags: () =>
    table(
      'session_tags',
      {
        orgId: logOrgId(),
        sessionId: text('session_id').notNull(),
        tag: text('tag').notNull(),
        createdAt: createdAt(),
      },
      (t) => [primaryKey({ columns: [t.orgId, t.sessionId, t.tag] })],
    ),

  /**
   * What the security scan found in a request's body when it was logged: personal data by kind and
   * prompt-injection attempts by rule, as counts. The matched text is never stored.
   */
  requestFlags: () =>
    table(
      'request_flags',
      {
        requestId: text('request_id').notNull(),
        orgId: logOrgId(),
        kind: text('kind', { enum: ['pii', 'injection'] }).notNull(),
        /** A PII kind (email, phone, card, secret) or an injection rule's id. */
        category: text('category').notNull(),
        occurrences: integer('occurrences').notNull(),
        /** The request's own time, so the views need not read the request log to place a flag in time. */
        createdAt: createdAt(),
      },
      (t) => [
        primaryKey({ columns: [t.requestId, t.kind, t.category] }),
        index('request_flags_org_time_idx').on(t.orgId, t.createdAt),
      ],
    ),

  /** One call of an MCP tool made through gw; written by the MCP gateway, read by the MCP views. */
  mcpToolCalls: () =>
    table(
      'mcp_tool_calls',
      {
        ...relayedCall(),
        serverId: text('server_id').notNull(),
        serverName: text('server_name').notNull(),
        toolName: text('tool_name').notNull(),
      },
      (t) => [index('mcp_tool_calls_org_time_idx').on(t.orgId, t.createdAt)],
    ),

  /** One call to a registered A2A agent made through gw; written by the A2A gateway, read by the A2A views. */
  a2aCalls: () =>
    table(
      'a2a_calls',
      {
        ...relayedCall(),
        agentId: text('agent_id').notNull(),
        agentName: text('agent_name').notNull(),
        skill: text('skill'),
      },
      (t) => [index('a2a_calls_org_time_idx').on(t.orgId, t.createdAt)],
    ),

  /** What a budget did when it was reached (alert, block, downgrade, throttle); written by the budget enforcer. */
  budgetActions: () =>
    table(
      'budget_actions',
      {
        id: id(),
        orgId: logOrgId(),
        /** What the budget covers: the organisation, a team, a member, a key, a customer. */
        scope: text('scope').notNull(),
        scopeId: text('scope_id'),
        action: text('action', { enum: ['alert', 'block', 'downgrade', 'throttle'] }).notNull(),
        requestId: text('request_id'),
        model: text('model'),
        /** The spend that triggered it. */
        amountNano: int64('amount_nano'),
        createdAt: createdAt(),
      },
      (t) => [index('budget_actions_org_time_idx').on(t.orgId, t.createdAt)],
    ),

  /**
   * Where an organisation's events go. The signing secret is sealed like a provider key and shown in
   * full only in the answer that creates it; reads show its prefix.
   */
  webhooks: () =>
    table(
      'webhooks',
      {
        id: id(),
        orgId: orgId(),
        destination: text('destination').notNull(),
        events: json('events').$type<string[]>().notNull(),
        /** The percentage (0 to 100) of events sent, decided per event. */
        sampleRate: integer('sample_rate').notNull(),
        /** Properties a request must carry, every one, for its events to be sent. */
        propertyFilters: json('property_filters').$type<Record<string, string>>().notNull(),
        includeData: bool('include_data').notNull(),
        sealedSecret: text('sealed_secret').notNull(),
        secretPrefix: text('secret_prefix').notNull(),
        /** Set when the destination answered 410 Gone: nothing more is sent to it. */
        disabledAt: timestamp('disabled_at'),
        /** request.completed events dropped, oldest first, while the destination was down too long. */
        droppedEvents: integer('dropped_events').notNull().default(0),
        createdAt: createdAt(),
      },
      (t) => [index('webhooks_org_idx').on(t.orgId)],
    ),

  /**
   * The outbox: one row per event and destination (a webhook, or an integration such as Stripe's
   * metering), written in the transaction that makes the event true, and sent by the deliverer until it
   * is delivered or dead. Its id is the `webhook-id` of every attempt of a webhook's event.
   */
  outbox: () =>
    table(
      'outbox',
      {
        id: id(),
        /** Where it goes: a webhook, or an integration (exactly one of the two). */
        webhookId: text('webhook_id').references((): ReferencedColumn => tables.webhooks.id, { onDelete: 'cascade' }),
        integrationId: text('integration_id').references((): ReferencedColumn => tables.integrations.id, { onDelete: 'cascade' }),
        orgId: logOrgId(),
        event: text('event').notNull(),
        /** The JSON body, exactly as signed and sent. */
        payload: text('payload').notNull(),
        status: text('status', { enum: ['pending', 'delivered', 'dead'] }).notNull(),
        attempts: integer('attempts').notNull().default(0),
        nextAttemptAt: timestamp('next_attempt_at').notNull(),
        /** An instance sending this attempt holds it until then; another takes it only once that has passed. */
        leaseUntil: timestamp('lease_until'),
        lastHttpStatus: integer('last_http_status'),
        lastError: text('last_error'),
        lastAttemptAt: timestamp('last_attempt_at'),
        createdAt: createdAt(),
      },
      (t) => [index('outbox_due_idx').on(t.status, t.nextAttemptAt), index('outbox_webhook_idx').on(t.webhookId, t.createdAt)],
    ),

  /**
   * An organisation's link to another service, one per type: its settings, and its secrets (tokens,
   * keys) sealed together and shown afterwards only masked.
   */
  integrations: () =>
    table(
      'integrations',
      {
        id: id(),
        orgId: orgId(),
        type: text('type', { enum: ['slack', 'stripe'] }).notNull(),
        active: bool('active').notNull(),
        /** The settings that are not secret. */
        settings: json('settings').$type<Record<string, string>>().notNull(),
        /** The secret settings, as one sealed JSON object. */
        sealedSecrets: text('sealed_secrets').notNull(),
        /** `maskSecret` of each secret setting, so that reads never decrypt. */
        secretHints: json('secret_hints').$type<Record<string, string>>().notNull(),
        ...timestamps(),
      },
      (t) => [uniqueIndex('integrations_org_type_idx').on(t.orgId, t.type)],
    ),

  /**
   * A spend limit: over a calendar or fixed window (`window`), or over a sliding window of seconds
   * (`velocity`), on one scope of a call. `scope_id` is '' for the organisation itself.
   */
  budgetLimits: () =>
    table(
      'budget_limits',
      {
        id: id(),
        orgId: orgId(),
        kind: text('kind', { enum: ['window', 'velocity'] }).notNull(),
        scopeKind: text('scope_kind', { enum: ['org', 'team', 'member', 'key', 'customer', 'model', 'provider'] }).notNull(),
        scopeId: text('scope_id').notNull(),
        metric: text('metric', { enum: ['usd', 'tokens', 'requests'] }).notNull(),
        /** In the metric's unit: nano-USD, tokens or requests. */
        amount: int64('amount').notNull(),
        period: text('period', { enum: ['day', 'week', 'month', 'seconds'] }).notNull(),
        /** The window's length for `seconds`; 0 for calendar windows. */
        periodSeconds: integer('period_seconds').notNull(),
        action: text('action', { enum: ['block', 'downgrade', 'alert'] }).notNull(),
        ...timestamps(),
      },
      (t) => [
        uniqueIndex('budget_limits_identity_idx').on(
          t.orgId,
          t.kind,
          t.scopeKind,
          t.scopeId,
          t.metric,
          t.period,
          t.periodSeconds,
        ),
      ],
    ),

  /** A model served instead of another when a downgrade limit is reached. */
  downgradeMappings: () =>
    table(
      'downgrade_mappings',
      {
        id: id(),
        orgId: orgId(),
        /** A glob: `*` stands for any run of characters. */
        fromModel: text('from_model').notNull(),
        toModel: text('to_model').notNull(),
        /** The limit's percentage at which calls are downgraded; null: only when the call would be refused. */
        atPercent: integer('at_percent'),
        createdAt: createdAt(),
      },
      (t) => [uniqueIndex('downgrade_mappings_org_from_idx').on(t.orgId, t.fromModel)],
    ),

  /**
   * Alerts sent and breaches: one automatic row per limit, window and threshold (the unique index is
   * what makes an alert go out once across instances), and the rows people add by hand.
   */
  budgetNotices: () =>
    table(
      'budget_notices',
      {
        id: id(),
        orgId: orgId(),
        kind: text('kind', { enum: ['threshold', 'breach', 'manual', 'notify'] }).notNull(),
        limitId: text('limit_id'),
        scopeKind: text('scope_kind'),
        scopeId: text('scope_id'),
        metric: text('metric'),
        windowStart: timestamp('window_start'),
        threshold: integer('threshold'),
        spent: int64('spent'),
        amount: int64('amount'),
        message: text('message'),
        createdBy: text('created_by'),
        createdAt: createdAt(),
      },
      (t) => [
        uniqueIndex('budget_notices_once_idx').on(t.limitId, t.scopeId, t.windowStart, t.threshold),
        index('budget_notices_org_time_idx').on(t.orgId, t.createdAt),
      ],
    ),

  /**
   * An organisation's price for a model, over the built-in table, from a time on. Rates are nano-USD
   * per million tokens, so any price to a billionth of a dollar per million is held exactly.
   */
  modelPrices: () =>
    table(
      'model_prices',
      {
        id: id(),
        orgId: orgId(),
        provider: text('provider').notNull(),
        model: text('model').notNull(),
        inputNanoPerMtok: int64('input_nano_per_mtok').notNull(),
        outputNanoPerMtok: int64('output_nano_per_mtok').notNull(),
        cacheReadNanoPerMtok: int64('cache_read_nano_per_mtok'),
        cacheWriteNanoPerMtok: int64('cache_write_nano_per_mtok'),
        /** The most the model writes in one answer: what bounds a call's cost before it is made. */
        maxOutputTokens: integer('max_output_tokens'),
        perRequestNano: int64('per_request_nano'),
        effectiveFrom: timestamp('effective_from').notNull(),
        createdAt: createdAt(),
      },
      (t) => [uniqueIndex('model_prices_identity_idx').on(t.orgId, t.provider, t.model, t.effectiveFrom)],
    ),

  /**
   * What a call of an MCP tool through gw costs, per organisation: for one server's tool, every tool of
   * a server, a tool name on any server, or every tool (`*`). The most specific rate applies.
   */
  toolRates: () =>
    table(
      'tool_rates',
      {
        id: id(),
        orgId: orgId(),
        /** An MCP server's id, or `*`: no foreign key, so a wildcard needs no server. */
        serverId: text('server_id').notNull(),
        tool: text('tool').notNull(),
        usdNanoPerCall: int64('usd_nano_per_call').notNull(),
        ...timestamps(),
      },
      (t) => [uniqueIndex('tool_rates_identity_idx').on(t.orgId, t.serverId, t.tool)],
    ),

  /**
   * A fallback chain: calls naming `match_model` (an alias) are served by the first of its steps that
   * answers. One chain per alias in an organisation.
   */
  fallbackChains: () =>
    table(
      'fallback_chains',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        matchModel: text('match_model').notNull(),
        steps: json('steps').$type<ChainStep[]>().notNull(),
        triggers: json('triggers').$type<ChainTriggers>(),
        retry: json('retry').$type<ChainRetry>(),
        ...timestamps(),
      },
      (t) => [uniqueIndex('fallback_chains_org_model_idx').on(t.orgId, t.matchModel)],
    ),

  /**
   * Who may use which provider, model, MCP server or tool, and agent: a rule matches a subject (the
   * organisation, a team, a member, a role, a key; `subject_id` '' for the organisation) and a resource
   * (its kind and a glob of its id). A matching deny wins over a matching allow, which wins over the default.
   */
  accessRules: () =>
    table(
      'access_rules',
      {
        id: id(),
        orgId: orgId(),
        subjectKind: text('subject_kind', { enum: ['org', 'team', 'member', 'role', 'key'] }).notNull(),
        subjectId: text('subject_id').notNull(),
        resourceKind: text('resource_kind', { enum: ['provider', 'model', 'mcp_server', 'mcp_tool', 'agent'] }).notNull(),
        /** A glob: `*` stands for any run of characters. */
        resourceId: text('resource_id').notNull(),
        effect: text('effect', { enum: ['allow', 'deny'] }).notNull(),
        reason: text('reason'),
        ...timestamps(),
      },
      (t) => [index('access_rules_org_idx').on(t.orgId)],
    ),

  /** What a resource kind allows when no rule matches; absent: allow. */
  accessDefaults: () =>
    table(
      'access_defaults',
      {
        orgId: orgId(),
        resourceKind: text('resource_kind', { enum: ['provider', 'model', 'mcp_server', 'mcp_tool', 'agent'] }).notNull(),
        effect: text('effect', { enum: ['allow', 'deny'] }).notNull(),
        updatedAt: updatedAt(),
      },
      (t) => [primaryKey({ columns: [t.orgId, t.resourceKind] })],
    ),

  /**
   * The MCP servers an organisation registered: where gw reaches them and which of their tools it offers.
   * A bearer token is kept sealed (the vault, bound to the row), with a hint to tell tokens apart; the name
   * is the tool prefix (`<name>__<tool>`), unique in the organisation.
   */
  mcpServers: () =>
    table(
      'mcp_servers',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        url: text('url').notNull(),
        transport: text('transport', { enum: ['streamable_http', 'sse'] }).notNull(),
        authKind: text('auth_kind', { enum: ['none', 'bearer'] }).notNull(),
        sealedToken: text('sealed_token'),
        tokenHint: text('token_hint'),
        toolAllow: json('tool_allow').$type<string[]>().notNull(),
        toolDeny: json('tool_deny').$type<string[]>().notNull(),
        enabled: bool('enabled').notNull(),
        /** The built-in catalogue's entry it was made from; null for a server registered by hand. */
        platformServerId: text('platform_server_id'),
        ...timestamps(),
      },
      (t) => [uniqueIndex('mcp_servers_org_name_idx').on(t.orgId, t.name)],
    ),

  /**
   * The A2A agents an organisation registered: gw relays calls to them at `/a2a/<id>`. The outbound key
   * is sealed by the vault; the card is the one the last probe fetched and validated.
   */
  a2aAgents: () =>
    table(
      'a2a_agents',
      {
        id: id(),
        orgId: orgId(),
        name: text('name').notNull(),
        url: text('url').notNull(),
        sealedKey: text('sealed_key'),
        keyHint: text('key_hint'),
        card: json('card').$type<AgentCardDocument>(),
        ...timestamps(),
      },
      (t) => [uniqueIndex('a2a_agents_org_name_idx').on(t.orgId, t.name)],
    ),
})
