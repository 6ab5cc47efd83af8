import type { Harness, Org } from './harness'

/** The kinds of object a management route can name by id, in its path or its body. */
export type Kind =
  | 'organization'
  | 'team'
  | 'user'
  | 'role'
  | 'apiKey'
  | 'proxyKey'
  | 'providerKey'
  | 'rateLimitRule'
  | 'filter'
  | 'request'
  | 'session'
  | 'property'
  | 'mcpConnection'
  | 'mcpUpstreamConnection'
  | 'mcpServer'
  | 'a2aAgent'
  | 'webhook'
  | 'integration'
  | 'windowLimit'
  | 'velocityLimit'
  | 'downgradeMapping'
  | 'fallbackChain'
  | 'accessRule'
  | 'toolRate'

/** One organisation with real objects of every kind, made the way its people make them. */
export interface World {
  org: Org
  tag: string
  /** Real ids of each kind; the first is the one a single-valued slot names. */
  ids: Record<Kind, string[]>
  /** What only this organisation's data holds: every id above, and the tag every name of it carries. */
  markers: string[]
}

const WHEN = new Date(Date.UTC(2026, 0, 15, 12))

async function expectOk(response: Response, what: string): Promise<Record<string, unknown>> {
  const text = await response.text()
  if (response.status >= 300) throw new Error(`${what} answered ${response.status}: ${text}`)
  return (JSON.parse(text) as { data: Record<string, unknown> }).data
}

const str = (data: Record<string, unknown>, field: string): string => {
  const value = data[field]
  if (typeof value !== 'string') throw new Error(`expected a string ${field} in ${JSON.stringify(data)}`)
  return value
}

/**
 * Builds an organisation's world through the HTTP API as its Owner: teams with members, a custom role
 * held by a member, invitations, a member who joined (with a password and a session), rate-limit rules,
 * API keys, provider and proxy keys, a saved filter, a hidden property, SSO, settings, and gateway
 * traffic with its bodies, findings and every kind of annotation. Logs that only the MCP and A2A
 * gateways, the budget enforcer and the request log's writer write are seeded with raw SQL.
 * Every name carries `-of-<tag>`, so any answer that shows one is caught by a substring search.
 */
export async function buildWorld(h: Harness, org: Org, tag: string, providerBaseUrl: string): Promise<World> {
  const as = async (method: string, path: string, body?: unknown, token = org.ownerSession) =>
    expectOk(await h.request(method, path, { token, body }), `${method} ${path}`)
  const orgPath = `/v1/organization/${org.orgId}`

  const team = await as('POST', '/v1/team', { name: `team-of-${tag}` })
  const role = await as('POST', `${orgPath}/roles`, { name: `role-of-${tag}`, permissions: ['org.read', 'traffic.read'] })
  const member = await as('POST', `${orgPath}/add_member`, { email: `member-of-${tag}@example.test`, role: 'member' })
  const roled = await as('POST', `${orgPath}/add_member`, { email: `roled-of-${tag}@example.test`, role: str(role, 'id') })
  // The member who joined holds a password and a live session: what removing a member would end.
  await expectOk(
    await h.request('POST', '/v1/auth/accept-invite', {
      body: { token: str(member, 'inviteToken'), password: `password-of-${tag}-0123456789` },
    }),
    'accept-invite',
  )
  for (const userId of [org.ownerId, str(member, 'userId'), str(roled, 'userId')]) {
    await as('POST', `/v1/team/${str(team, 'id')}/member`, { userId })
  }
  const rule = await as('POST', '/v1/rate-limits', { quota: 1_000_000, windowSeconds: 60 })
  const apiKey = await as('POST', '/v1/api-keys', { name: `key-of-${tag}` })
  const providerKey = await as('POST', '/v1/api-keys/provider-key', {
    provider: 'openai',
    name: `provider-key-of-${tag}`,
    secret: `sk-of-${tag}-0123456789abcdef`,
    baseUrl: providerBaseUrl,
  })
  const proxyKey = await as('POST', '/v1/api-keys/proxy-key', {
    providerKeyId: str(providerKey, 'id'),
    name: `proxy-key-of-${tag}`,
  })
  const filter = await as('POST', '/v1/filter', { name: `filter-of-${tag}`, filter: 'all' })
  const integration = await as('POST', '/v1/integration', {
    type: 'slack',
    settings: { webhookUrl: `https://hooks.slack.com/services/of-${tag}`, channel: `of-${tag}` },
  })
  // Its events of the calls below wait in the outbox: nothing sends them in these tests.
  const webhook = await as('POST', '/v1/webhooks', {
    destination: `https://hooks-of-${tag}.example.test/events`,
    events: ['request.completed'],
  })
  const windowLimit = await as('PUT', '/v1/budget/window-limit', {
    scope: { kind: 'customer', id: `customer-of-${tag}` },
    metric: 'usd',
    limit: 1000,
    window: 'month',
  })
  const velocityLimit = await as('PUT', '/v1/budget/velocity-limit', { scope: { kind: 'org' }, maxUsd: 1000, windowSeconds: 60 })
  const mapping = await as('POST', '/v1/budget/downgrade-mappings', { fromModel: `model-of-${tag}`, toModel: 'gpt-4o-mini' })
  const chain = await as('POST', '/v1/gateway/fallback-chains', {
    name: `chain-of-${tag}`,
    match: { model: `alias-of-${tag}` },
    steps: [{ model: 'gpt-4o', providerKeyId: str(providerKey, 'id') }, { model: 'claude-haiku-4-5' }],
  })
  // Never reached in these tests: its URL only has to pass the egress policy's checks when it is saved.
  const mcpServer = await as('POST', '/v1/mcp/servers', {
    name: `server-of-${tag}`,
    url: `https://mcp-of-${tag}.example.test/mcp`,
    transport: 'streamable_http',
    auth: { kind: 'bearer', token: `mcp-token-of-${tag}-0123456789` },
    toolAllow: [`tool-of-${tag}`],
  })
  // Never called in these tests either: its URL only has to pass the egress policy's checks when it is saved.
  const a2aAgent = await as('POST', '/v1/a2a/agents', {
    name: `agent-of-${tag}`,
    url: `https://agent-of-${tag}.example.test/a2a`,
  })
  await as('PUT', `/v1/a2a/agents/${str(a2aAgent, 'id')}/keys`, { key: `agent-key-of-${tag}-0123456789` })
  const toolRate = await as('PUT', '/v1/tool-rates', {
    serverId: str(mcpServer, 'id'),
    tool: `tool-of-${tag}`,
    usdPerCall: 0.01,
  })
  // A rule and a default no call of the world meets: its traffic below is served all the same.
  const accessRule = await as('POST', '/v1/governance/access-rules', {
    subject: { kind: 'team', id: str(team, 'id') },
    resource: { kind: 'model', id: `model-of-${tag}` },
    effect: 'deny',
    reason: `reason-of-${tag}`,
  })
  await as('PUT', '/v1/governance/access-default', { agent: 'deny' })
  await as('PUT', '/v1/model-prices', {
    provider: 'openai',
    model: `model-of-${tag}`,
    inputPerMillion: 1,
    outputPerMillion: 2,
    maxOutputTokens: 1_000,
  })
  await as('POST', '/v1/property/hide', { key: `hidden-of-${tag}` })
  await as('PUT', `${orgPath}/sso`, {
    issuer: 'https://idp.example.test',
    clientId: `client-of-${tag}`,
    clientSecret: `sso-secret-of-${tag}`,
    domain: `${tag}.example.test`,
  })
  await as('POST', '/v1/organization/body-retention-config', { mode: 'days', days: 30 })
  await as('POST', '/v1/organization/onboard', { data: { answer: `onboarding-of-${tag}` } })
  await as('PUT', '/v1/team/settings/visibility', { mode: 'members' })

  // Traffic through the organisation's own provider key, by an API key and by the proxy key; the body
  // carries an email address, so the security scan records a finding too.
  const session = `session-of-${tag}`
  const property = `prop-of-${tag}`
  const requests: string[] = []
  for (const token of [str(apiKey, 'key'), str(proxyKey, 'key')]) {
    const response = await h.request('POST', '/v1/chat/completions', {
      token,
      body: { model: 'gpt-4o', messages: [{ role: 'user', content: `write to person-of-${tag}@example.test` }] },
      headers: { 'gw-session-id': session, 'gw-user-id': `user-of-${tag}`, [`gw-property-${property}`]: `value-of-${tag}` },
    })
    if (response.status !== 200) throw new Error(`the gateway call answered ${response.status}: ${await response.text()}`)
    await response.arrayBuffer()
    requests.push(response.headers.get('gw-id') as string)
  }
  await h.requestLog.flush()
  const [firstRequest] = requests
  await as('POST', `/v1/request/${firstRequest}/feedback`, { rating: true })
  await as('POST', `/v1/request/${firstRequest}/score`, { name: `score-of-${tag}`, value: 0.5 })
  await as('PUT', `/v1/request/${firstRequest}/property`, { key: `annotated-of-${tag}`, value: `value-of-${tag}` })
  await as('POST', `/v1/session/${session}/feedback`, { rating: -1 })
  await as('POST', `/v1/session/${session}/tag`, { tag: `tag-of-${tag}` })
  await as('POST', '/v1/budget/breach', { message: `breach-of-${tag}`, limitId: str(windowLimit, 'id') })

  const raw = await seedRelayedLogs(h, org.orgId, tag, firstRequest as string)

  const ids: Record<Kind, string[]> = {
    organization: [org.orgId],
    team: [str(team, 'id')],
    user: [str(member, 'userId'), str(roled, 'userId'), org.ownerId],
    role: [str(role, 'id')],
    apiKey: [str(apiKey, 'id'), str(proxyKey, 'id')],
    proxyKey: [str(proxyKey, 'id')],
    providerKey: [str(providerKey, 'id')],
    rateLimitRule: [str(rule, 'id')],
    filter: [str(filter, 'id')],
    webhook: [str(webhook, 'id')],
    integration: [str(integration, 'id')],
    windowLimit: [str(windowLimit, 'id')],
    velocityLimit: [str(velocityLimit, 'id')],
    downgradeMapping: [str(mapping, 'id')],
    fallbackChain: [str(chain, 'id')],
    accessRule: [str(accessRule, 'id')],
    toolRate: [str(toolRate, 'id')],
    request: requests,
    session: [session],
    property: [property],
    ...raw,
    // The registration first (the one a single slot names), then the id the relayed-call log names.
    mcpServer: [str(mcpServer, 'id'), ...raw.mcpServer],
    a2aAgent: [str(a2aAgent, 'id'), ...raw.a2aAgent],
  }
  return { org, tag, ids, markers: [...new Set([...Object.values(ids).flat(), `-of-${tag}`])] }
}

/** The logs no HTTP route writes, seeded as their writers write them (the set-aside request records too). */
async function seedRelayedLogs(h: Harness, orgId: string, tag: string, requestId: string) {
  // SQLite keeps milliseconds; the Postgres driver binds a raw statement's values as text.
  const at = h.db.dialect === 'sqlite' ? WHEN.getTime() : WHEN.toISOString()
  const ids = {
    mcpConnection: [`grant-of-${tag}`],
    mcpUpstreamConnection: [`upstream-of-${tag}`],
    mcpServer: [`server-of-${tag}`],
    a2aAgent: [`agent-of-${tag}`],
  }
  await h.db.execute(
    'INSERT INTO mcp_connections (id, org_id, user_id, client, scopes, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [`grant-of-${tag}`, orgId, null, `client-of-${tag}`, '["mcp"]', at],
  )
  await h.db.execute(
    'INSERT INTO mcp_upstream_connections (id, org_id, user_id, server_url, status, created_at) VALUES ($1, $2, $3, $4, $5, $6)',
    [`upstream-of-${tag}`, orgId, null, `https://mcp-of-${tag}.example.test`, 'connected', at],
  )
  await h.db.execute(
    `INSERT INTO mcp_tool_calls (id, org_id, status, latency_ms, cost_nano, created_at, server_id, server_name, tool_name)
     VALUES ($1, $2, 'success', 1, 1, $3, $4, $5, $6)`,
    [`tool-call-of-${tag}`, orgId, at, `server-of-${tag}`, `server-name-of-${tag}`, `tool-of-${tag}`],
  )
  await h.db.execute(
    `INSERT INTO a2a_calls (id, org_id, status, latency_ms, cost_nano, created_at, agent_id, agent_name)
     VALUES ($1, $2, 'success', 1, 1, $3, $4, $5)`,
    [`a2a-call-of-${tag}`, orgId, at, `agent-of-${tag}`, `agent-name-of-${tag}`],
  )
  await h.db.execute(
    `INSERT INTO budget_actions (id, org_id, scope, scope_id, action, request_id, model, amount_nano, created_at)
     VALUES ($1, $2, 'team', $3, 'alert', $4, 'gpt-4o', 1, $5)`,
    [`budget-action-of-${tag}`, orgId, `scope-of-${tag}`, requestId, at],
  )
  await h.db.execute(
    'INSERT INTO request_log_rejects (request_id, org_id, error, record, created_at) VALUES ($1, $2, $3, $4, $5)',
    [`rejected-of-${tag}`, orgId, 'value out of range', JSON.stringify({ id: `rejected-of-${tag}`, orgId }), at],
  )
  return ids
}
