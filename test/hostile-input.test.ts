/**
 * Hostile input, property-based, over every route of the OpenAPI document (the management routes, the
 * dispatch paths, the gateway's other routes and the provider APIs), on every dialect: empty and
 * malformed bodies, wrong types, huge and deep values, NUL and other control characters, emoji and CJK
 * in every string and path parameter, numbers that are not whole, negative, huge or not numbers at all
 * in every query parameter, bad percent-encodings, forged cursors, hostile gateway headers.
 *
 * What must hold whatever the input: no 5xx (bar the 501 stub of a route that has no handler yet, known
 * by its own body), an error body in the route's family, and afterwards the server still serves and a
 * normal call is still written to the request log.
 *
 * Each route gets a fixed corpus on every run (all its failures are listed) and then random calls
 * (the first failure is shrunk by fast-check) from every seed in support/fuzz-seeds.ts: the seeds that
 * once found a defect, and this run's own, GW_FUZZ_SEED or, when it is unset, a fresh one. A failure
 * names the seed and the command that replays it; a seed that found a defect joins the kept ones, and
 * the defect's input the fixed corpus. GW_FUZZ_SCALE=<n> multiplies the random calls.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import fc from 'fast-check'
import { GW_ROUTES, ROUTE_CATALOGUE, toRouterPath } from '../src/auth/catalogue'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { DISPATCH_PATHS, type DispatchPath, errorFamily, PROVIDER_APIS } from '../src/gateway/dispatch-routes'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { FUZZ_SEEDS, RUN_SEED, replayCommand } from './support/fuzz-seeds'
import {
  createHarness,
  DIALECTS,
  type DialectName,
  type Harness,
  type Org,
  openTestDatabase,
  type TestDatabase,
} from './support/harness'
import {
  type Answer,
  type Caller,
  type Expectation,
  type HostileCall,
  hostileCall,
  problemWith,
  report,
  send,
} from './support/hostile-calls'
import { dispatchCall, dispatchExamples, dispatchExpectation, dispatchRoute, validDispatchBody } from './support/hostile-gateway'
import {
  type Body,
  CONTENT_TYPES,
  contentType,
  encodedParam,
  FILLS,
  filledValue,
  HEAVY_BODIES,
  hostileBody,
  hostileShortText,
  type IdSource,
  isSchema,
  PARAM_EXAMPLES,
  type PathParam,
  pathParam,
  QUERY_VALUES,
  queryString,
  RAW_BODIES,
  type Schema,
  wrongType,
} from './support/hostile-values'

const SUITE = 'test/hostile-input.test.ts'
// A fresh seed is named up front too: a run that passes is worth repeating only with another one.
if (!process.env.GW_FUZZ_SEED) console.log(`hostile input: this run's seed is ${RUN_SEED} (${replayCommand(RUN_SEED, SUITE)})`)
const SCALE = Number(process.env.GW_FUZZ_SCALE ?? 1)
/** Random calls per management route, per dispatch path, and per other gateway route, per seed, on top of the fixed corpus. */
const RUNS = { route: Math.ceil(10 * SCALE), dispatch: Math.ceil(120 * SCALE), gateway: Math.ceil(40 * SCALE) }

interface OpenApiOperation {
  parameters?: Array<{ name?: string; in?: string }>
  requestBody?: { content?: Record<string, { schema?: unknown }> }
}
type OpenApiDocument = { paths?: Record<string, Record<string, OpenApiOperation | undefined> | undefined> }

/** The organisation the management routes are fuzzed in, and the ids of objects it holds, by parameter name. */
interface Target {
  org: Org
  ids: Map<string, string[]>
  /** Seeds that could not be created: the fuzzing then misses the code paths behind real ids. */
  seedProblems: string[]
}

/** The name the seeded provider key reaches the fake provider by: the only outgoing address the fuzzed routes may reach. */
const FAKE_HOST = 'fake-provider.test'

const paramNames = (route: string): string[] => [...route.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string)
/** `:name` -> `{name}`, the document's parameter syntax. */
const openApiPath = (routerPath: string): string => routerPath.replace(/:(\w+)/g, '{$1}')
const isOrgRoute = (route: string) => route.startsWith('/v1/organization/{id}')

/** The first string `id` in an answer's data: the id of what a create call made. */
function createdId(json: unknown): string | undefined {
  const queue: unknown[] = [typeof json === 'object' && json !== null ? (json as { data?: unknown }).data : undefined]
  while (queue.length > 0) {
    const next = queue.shift()
    if (typeof next !== 'object' || next === null) continue
    const record = next as Record<string, unknown>
    if (typeof record.id === 'string') return record.id
    queue.push(...Object.values(record))
  }
  return undefined
}

/**
 * One dialect's world: a database, the fake provider, the app over them, the organisation the routes
 * are fuzzed in (re-made when a fuzzed call took its owner's standing away), one whose keys make the
 * dispatch calls, and a canary organisation that only ever makes normal calls.
 */
class World implements IdSource {
  database!: TestDatabase
  fake!: FakeProvider
  h!: Harness
  target!: Target
  traffic!: Org
  canary!: Org
  foreign!: Org
  private doc: OpenApiDocument = {}

  constructor(readonly dialect: DialectName) {}

  async start(): Promise<void> {
    this.database = await openTestDatabase(this.dialect)
    this.fake = await startFakeProvider()
    this.h = await this.harness()
    this.doc = (await (await this.h.request('GET', '/openapi/json')).json()) as OpenApiDocument
    this.traffic = await this.h.org('enterprise')
    this.canary = await this.h.org('enterprise')
    this.foreign = await this.h.org('enterprise')
    for (const org of [this.traffic, this.canary]) await this.h.services.organizations.addCredits(org.orgId, 10_000)
    this.target = await this.seedTarget()
  }

  async stop(): Promise<void> {
    await this.h?.close()
    await this.fake?.close()
    await this.database?.close()
  }

  private harness(): Promise<Harness> {
    // No name resolves: an outgoing call a fuzzed route makes (an MCP probe) ends at once, reaching nothing.
    // The one exception is the seeded provider key's host, the fake provider on loopback.
    const egress = new EgressPolicy({
      enabled: true,
      resolve: async (host) => (host === FAKE_HOST ? ['127.0.0.1'] : []),
      allow: parseAllowList(FAKE_HOST),
    })
    return createHarness({ database: this.database, providers: providersAt(this.fake), egress })
  }

  /** Ids for a field or parameter by its name; `requestIds` takes what `requestId` does. */
  idsFor(name: string): readonly string[] {
    return this.target.ids.get(name) ?? this.target.ids.get(name.replace(/s$/, '')) ?? []
  }

  private allIds(): string[] {
    return [...new Set([...this.target.ids.values()].flat())]
  }

  /** The route's body schema: from the OpenAPI document, or, where the document shows none, from the route itself. */
  bodySchema(method: string, route: string): Schema | undefined {
    const documented = this.doc.paths?.[route]?.[method.toLowerCase()]?.requestBody?.content?.['application/json']?.schema
    if (isSchema(documented) && Object.keys(documented).length > 0) return documented
    const own = this.h.app.routes.find((r) => r.method === method && r.path === toRouterPath(route))?.hooks as
      | { body?: unknown }
      | undefined
    return isSchema(own?.body) ? own.body : undefined
  }

  /** Every operation of the OpenAPI document, as `METHOD /path`. */
  operations(): string[] {
    return Object.entries(this.doc.paths ?? {}).flatMap(([path, operations]) =>
      Object.keys(operations ?? {}).map((method) => `${method.toUpperCase()} ${path}`),
    )
  }

  queryNames(method: string, route: string): string[] {
    const documented = (this.doc.paths?.[route]?.[method.toLowerCase()]?.parameters ?? [])
      .filter((p) => p.in === 'query' && typeof p.name === 'string')
      .map((p) => p.name as string)
    const own = this.h.app.routes.find((r) => r.method === method && r.path === toRouterPath(route))?.hooks as
      | { query?: unknown }
      | undefined
    const declared = isSchema(own?.query) ? Object.keys(own.query.properties ?? {}) : []
    return [...new Set([...documented, ...declared])]
  }

  /** `{id}` of an organisation route is mostly the caller's own organisation: another is a 404 before any validation. */
  paramArbitrary(route: string, name: string): fc.Arbitrary<PathParam> {
    if (!(isOrgRoute(route) && name === 'id')) return pathParam(this.idsFor(name), this.allIds())
    return fc.oneof(
      { weight: 8, arbitrary: fc.constant(encodedParam(this.target.org.orgId)) },
      { weight: 1, arbitrary: fc.constant(encodedParam(this.foreign.orgId)) },
      { weight: 2, arbitrary: pathParam([], []) },
    )
  }

  /** The plainest value of a parameter: the caller's organisation, a real id, or a word. */
  plainParam(route: string, name: string): PathParam {
    if (isOrgRoute(route) && name === 'id') return encodedParam(this.target.org.orgId)
    return encodedParam(this.idsFor(name)[0] ?? 'x')
  }

  token(caller: Caller, org: Org): string {
    return caller === 'owner' ? org.ownerSession : org.apiKey
  }

  /** Sends a call as `org` and answers the report of what went wrong, or nothing. */
  async check(call: HostileCall, org: Org): Promise<string | undefined> {
    let answer: Answer
    try {
      answer = await send(this.h.app, call, this.token(call.caller, org))
    } catch (error) {
      return report(call, undefined, `the app did not answer: ${error instanceof Error ? error.message : String(error)}`)
    }
    const problem = problemWith(call, answer)
    return problem === undefined ? undefined : report(call, answer, problem)
  }

  /** A fresh organisation to fuzz, holding one of each object whose id a route takes. */
  private async seedTarget(): Promise<Target> {
    const org = await this.h.org('enterprise')
    await this.h.services.organizations.addCredits(org.orgId, 10_000)
    const ids = new Map<string, string[]>()
    const seedProblems: string[] = []
    const add = (names: readonly string[], id: string | undefined) => {
      if (id === undefined) return
      for (const name of names) ids.set(name, [...(ids.get(name) ?? []), id])
    }
    const create = async (method: string, path: string, body: unknown, names: readonly string[]) => {
      const response = await this.h.request(method, path, { token: org.ownerSession, body })
      const json: unknown = await response.json().catch(() => undefined)
      const id = createdId(json)
      if (response.status >= 300 || id === undefined)
        seedProblems.push(`${method} ${path}: ${response.status} ${JSON.stringify(json)}`)
      add(names, id)
      return id
    }
    const member = await this.h.member(org.orgId, 'member')
    const admin = await this.h.member(org.orgId, 'admin')
    add(['userId', 'memberUserId'], member.userId)
    add(['userId', 'memberUserId'], admin.userId)
    await create('POST', '/v1/api-keys', { name: 'seed key' }, ['apiKeyId'])
    await create('POST', `/v1/organization/${org.orgId}/roles`, { name: 'seed role', permissions: ['org.read'] }, ['roleId'])
    const teamId = await create('POST', '/v1/team', { name: 'seed team' }, ['teamId'])
    if (teamId)
      await this.h.request('POST', `/v1/team/${teamId}/member`, { token: org.ownerSession, body: { userId: member.userId } })
    await create('POST', '/v1/rate-limits', { quota: 1_000_000, windowSeconds: 60 }, ['ruleId'])
    const providerKeyId = await create(
      'POST',
      '/v1/api-keys/provider-key',
      {
        provider: 'openai',
        name: 'seed provider key',
        secret: 'sk-seed',
        baseUrl: this.fake.openaiBaseUrl.replace('127.0.0.1', FAKE_HOST),
      },
      ['providerKeyId', 'id'],
    )
    if (providerKeyId)
      await create('POST', '/v1/api-keys/proxy-key', { providerKeyId, name: 'seed proxy key' }, ['proxyKeyId', 'apiKeyId'])
    await create('POST', '/v1/filter', { name: 'seed view', filter: 'all' }, ['id', 'filterId'])
    await create(
      'POST',
      '/v1/gateway/fallback-chains',
      { name: 'seed chain', match: { model: 'seed-alias' }, steps: [{ model: 'gpt-4o' }] },
      ['chainId'],
    )
    // A rule no normal call meets: the fuzzed organisation's calls are still served.
    await create(
      'POST',
      '/v1/governance/access-rules',
      { subject: { kind: 'org' }, resource: { kind: 'agent', id: 'seed-agent-*' }, effect: 'deny', reason: 'seed' },
      ['id'],
    )
    await create(
      'POST',
      '/v1/mcp/servers',
      { name: 'seed-tools', url: 'https://mcp.example.test/mcp', transport: 'streamable_http', auth: { kind: 'none' } },
      ['id'],
    )
    const chat = await this.h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: validDispatchBody('/v1/chat/completions'),
      headers: { 'gw-session-id': 'seed-session', 'gw-property-seed': 'x' },
    })
    await chat.text()
    add(['requestId'], chat.headers.get('gw-id') ?? undefined)
    add(['sessionId'], 'seed-session')
    add(['propertyKey'], 'seed')
    return { org, ids, seedProblems }
  }

  /**
   * Re-makes the fuzzed organisation when a fuzzed call (an ownership transfer, a deletion) took the
   * owner's standing, or when a DELETE route may have removed the objects the next routes aim at.
   */
  async ensureTarget(previousMethod?: string): Promise<void> {
    if (previousMethod === 'DELETE') {
      this.target = await this.seedTarget()
      return
    }
    const response = await this.h.request('GET', `/v1/organization/${this.target.org.orgId}/permissions/me`, {
      token: this.target.org.ownerSession,
    })
    const json = (await response.json().catch(() => undefined)) as { data?: { permissions?: string[] } } | undefined
    if (response.status === 200 && json?.data?.permissions?.includes('ownership')) return
    this.target = await this.seedTarget()
  }

  /** A plain chat call as `org`: its status, and its Gw-Id when the gateway gave it one. */
  private async normalCall(org: Org): Promise<{ status: number; text: string; id: string | null }> {
    const response = await this.h.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: validDispatchBody('/v1/chat/completions', { messages: [{ role: 'user', content: 'a normal call' }] }),
    })
    return { status: response.status, text: await response.text(), id: response.headers.get('gw-id') }
  }

  /**
   * The server is still up, and normal calls made now are written to the request log, which has no
   * batch that keeps failing: the canary organisation's call, which must succeed, and the fuzzed
   * organisation's, which may be refused (its limits were fuzzed too) but must be recorded all the same
   * (its settings were fuzzed too). When that is not so, the test fails and the next one gets a new app
   * over the same database, so one stalled log is reported once, where it happened.
   */
  async expectStillServing(after: string): Promise<void> {
    const problems: string[] = []
    const health = await this.h.request('GET', '/healthcheck')
    if (health.status !== 200) problems.push(`GET /healthcheck answered ${health.status}: ${await health.text()}`)
    const calls = [
      { who: 'the canary organisation', org: this.canary, ...(await this.normalCall(this.canary)) },
      { who: 'the fuzzed organisation', org: this.target.org, ...(await this.normalCall(this.target.org)) },
    ]
    const [canary] = calls
    if (canary && canary.status !== 200) problems.push(`a normal chat call answered ${canary.status}: ${canary.text}`)
    const before = this.h.requestLog.snapshot()
    await this.h.requestLog.flush()
    const now = this.h.requestLog.snapshot()
    for (const call of calls)
      if (call.id !== null && !(await this.h.store.requests.get(call.org.orgId, call.id)))
        problems.push(
          `a normal chat call of ${call.who} (Gw-Id ${call.id}, answered ${call.status}) was not written to the request log`,
        )
    if (now.failedFlushes > before.failedFlushes || now.queued > 0)
      problems.push(`the request log keeps failing: ${JSON.stringify(now)} (before the last flush: ${JSON.stringify(before)})`)
    if (problems.length === 0) return
    const stalled = this.h
    this.h = await this.harness()
    // One last attempt stops the stalled log's retry timer; closing would retry it for seconds first.
    await stalled.requestLog.drain(1)
    throw new Error(`after ${after}:\n  ${problems.join('\n  ')}`)
  }
}

/**
 * Runs a test's calls, then checks that the gateway still serves, and fails with both findings: a
 * failure of the calls must not hide a stalled request log, nor the other way round.
 */
async function thenStillServing(world: World, after: string, calls: () => Promise<void>): Promise<void> {
  const errors: string[] = []
  for (const step of [calls, () => world.expectStillServing(after)]) {
    try {
      await step()
    } catch (error) {
      errors.push(error instanceof Error ? error.message : String(error))
    }
  }
  if (errors.length > 0) throw new Error(errors.join('\n\n'))
}

/**
 * Lists every failure of the fixed corpus, then lets fast-check look for more with each seed, and
 * shrink the first it finds: the report names the seed and the command that replays it.
 */
async function holds(
  world: World,
  corpus: readonly HostileCall[],
  random: fc.Arbitrary<HostileCall>,
  runs: number,
  caller: () => Org,
): Promise<void> {
  const failures: string[] = []
  for (const call of corpus) {
    const problem = await world.check(call, caller())
    if (problem) failures.push(`${problem}\n  (the fixed corpus: every run sends it)`)
  }
  for (const seed of FUZZ_SEEDS) {
    try {
      await fc.assert(
        fc.asyncProperty(random, async (call) => {
          const problem = await world.check(call, caller())
          if (problem) throw new Error(problem)
        }),
        // A failure found late is still shrunk, but not for longer than the test can wait; the last simplest one is reported.
        { seed, numRuns: runs, includeErrorInReport: true, plugins: [fc.interruptAfterTimeLimit(20_000)] },
      )
    } catch (error) {
      failures.push(
        `a random call of seed ${seed} failed; fast-check's simplest failing call:\n${error instanceof Error ? error.message : String(error)}\n` +
          `  replay it with ${replayCommand(seed, SUITE)}` +
          (seed === RUN_SEED ? '; once the defect is fixed, add the seed to DEFECT_SEEDS in test/support/fuzz-seeds.ts' : ''),
      )
      // One shrunk failure is enough to act on, and shrinking another would outlast the test.
      break
    }
  }
  if (failures.length === 0) return
  const shown = failures.slice(0, 8)
  const more = failures.length > shown.length ? `\n\n... and ${failures.length - shown.length} more failing calls` : ''
  throw new Error(`${failures.length} hostile call(s) answered wrongly:\n\n${shown.join('\n\n')}${more}`)
}

/**
 * The management routes beyond the catalogue and gw's own catalogued routes: sign-in, and the reads
 * any member may make. The document is checked against this list (a new route must join one of the
 * fuzzed lists before it ships).
 */
const AUTHENTICATED_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ['POST', '/v1/auth/login'],
  ['POST', '/v1/auth/accept-invite'],
  ['POST', '/v1/auth/logout'],
  ['GET', '/v1/organization/settings'],
  ['GET', '/v1/rate-limits'],
  ['GET', '/v1/api-keys'],
  ['GET', '/v1/filter'],
]

/** Every management route: those of the spec's catalogue, gw's own, and the authenticated ones. */
const MANAGEMENT_ROUTES: ReadonlyArray<readonly [string, string]> = [
  ...ROUTE_CATALOGUE.map(([method, route]) => [method, route] as const),
  ...GW_ROUTES.map(([method, route]) => [method, route] as const),
  ...AUTHENTICATED_ROUTES,
]

/** The gateway's routes other than the dispatch paths and the provider APIs, each tested on its own below. */
const GATEWAY_ROUTES = ['GET /v1/models', 'GET /v1/models/*', 'POST /v1/feedback', 'GET /gateway/v1/meta/{requestId}']

/** What other suites fuzz (relays-hostile.test.ts: the MCP and A2A relays), and what has no input to speak of. */
const FUZZED_ELSEWHERE = /^(GET|POST|DELETE) \/(mcp|a2a\/)|^GET \/(healthcheck|openapi\/json)$/

const managementExpectation = (route: string): Expectation => ({
  family: 'management',
  success: route.endsWith('.csv') ? 'envelope-or-csv' : 'envelope',
  stubs: true,
})

function managementCalls(world: World, method: string, route: string): fc.Arbitrary<HostileCall> {
  const names = paramNames(route)
  const queryNames = world.queryNames(method, route)
  const params = fc.record(Object.fromEntries(names.map((name) => [name, world.paramArbitrary(route, name)])))
  const body = method === 'GET' ? fc.constant<Body>({ kind: 'none' }) : hostileBody(world.bodySchema(method, route), world)
  const query = method === 'GET' || queryNames.length > 0 ? queryString(queryNames) : fc.constant('')
  return fc
    .record({ params, query, body, contentType })
    .map((parts) => hostileCall({ method, route, headers: {}, caller: 'owner', expect: managementExpectation(route), ...parts }))
}

/** The fixed corpus of a catalogue route: every raw body, every content type, every fill of its schema, every hostile parameter and query value. */
function managementCorpus(world: World, method: string, route: string): HostileCall[] {
  const names = paramNames(route)
  const plainParams = Object.fromEntries(names.map((name) => [name, world.plainParam(route, name)]))
  const call = (parts: Partial<Pick<HostileCall, 'params' | 'query' | 'body' | 'contentType'>>): HostileCall =>
    hostileCall({
      method,
      route,
      params: plainParams,
      query: '',
      headers: {},
      body: method === 'GET' ? { kind: 'none' } : { kind: 'raw', text: '{}' },
      contentType: 'application/json',
      caller: 'owner',
      expect: managementExpectation(route),
      ...parts,
    })
  // The plainest call first: real ids, and `{}` for a body.
  const calls: HostileCall[] = [call({})]
  if (method !== 'GET') {
    const schema = world.bodySchema(method, route)
    calls.push(...RAW_BODIES.filter((text) => text !== '{}').map((text) => call({ body: { kind: 'raw', text } })))
    calls.push(call({ body: { kind: 'none' } }))
    calls.push(...[...CONTENT_TYPES, undefined].map((type) => call({ contentType: type })))
    if (schema)
      for (const mode of ['everywhere', 'free-text'] as const)
        calls.push(...FILLS.map((fill) => call({ body: { kind: 'json', value: filledValue(schema, fill, world, mode) } })))
  }
  for (const name of names)
    for (const param of PARAM_EXAMPLES) {
      // A foreign `{id}` is a 404 before anything else; the hostile ones are still tried here.
      calls.push(call({ params: { ...plainParams, [name]: param } }))
    }
  calls.push(...queryCorpus(world.queryNames(method, route)).map((query) => call({ query })))
  return calls
}

/** Every hostile value in every query parameter, one at a time, and each parameter given twice. */
const queryCorpus = (names: readonly string[]): string[] =>
  names.flatMap((name) => [...QUERY_VALUES.map((value) => `?${name}=${value}`), `?${name}=1&${name}=2`])

const gatewayRouteExpectation: Record<'models' | 'model' | 'feedback' | 'meta', Expectation> = {
  models: { family: 'openai', success: 'model-list', stubs: false },
  model: { family: 'openai', success: 'provider', stubs: false },
  feedback: { family: 'openai', success: 'envelope', stubs: false },
  meta: { family: 'management', success: 'gateway-meta', stubs: false },
}

for (const dialect of DIALECTS) {
  describe(`hostile input on ${dialect}`, () => {
    const world = new World(dialect)
    beforeAll(() => world.start())
    afterAll(() => world.stop())

    test('the objects the fuzzing aims at exist (real ids reach the handlers)', () => {
      expect(world.target.seedProblems).toEqual([])
    })

    test('every route of the document is fuzzed, with every query parameter its schema declares', () => {
      const fuzzed = new Set([
        ...MANAGEMENT_ROUTES.map(([method, route]) => `${method} ${route}`),
        ...DISPATCH_PATHS.map((path) => `POST ${path}`),
        ...PROVIDER_APIS.map((api) => `${api.method} ${openApiPath(api.path)}`),
        ...GATEWAY_ROUTES,
      ])
      const missing = world.operations().filter((operation) => !fuzzed.has(operation) && !FUZZED_ELSEWHERE.test(operation))
      expect(missing).toEqual([])
      // queryNames reads the document and the route's own schema: every name a route declares is found.
      const unseen = world.h.app.routes.flatMap((r) => {
        const declared = Object.keys((r.hooks as { query?: { properties?: object } }).query?.properties ?? {})
        const found = world.queryNames(r.method, openApiPath(r.path))
        return declared.filter((name) => !found.includes(name)).map((name) => `${r.method} ${r.path} ?${name}`)
      })
      expect(unseen).toEqual([])
    })

    describe('every management route: no 5xx, errors in the management envelope, the gateway still serving afterwards', () => {
      for (const [index, [method, route]] of MANAGEMENT_ROUTES.entries()) {
        test(`${method} ${route}`, async () => {
          await world.ensureTarget(MANAGEMENT_ROUTES[index - 1]?.[0])
          await thenStillServing(world, `hostile input to ${method} ${route}`, async () => {
            await holds(
              world,
              managementCorpus(world, method, route),
              managementCalls(world, method, route),
              RUNS.route,
              () => world.target.org,
            )
          })
        }, 60_000)
      }
    })

    test('a body ten thousand levels deep or a megabyte where an object belongs is refused quickly, on every route', async () => {
      // One such body must not hold the event loop for seconds (problemWith bounds every answer's time).
      const failures: string[] = []
      const targets: Array<{
        method: string
        route: string
        /** A dispatch path's own parameters (Google's model and method); a catalogue route's plainest values otherwise. */
        params?: HostileCall['params']
        expect: Expectation
        caller: () => Org
      }> = [
        ...ROUTE_CATALOGUE.filter(([method]) => method !== 'GET').map(([method, route]) => ({
          method,
          route,
          expect: managementExpectation(route),
          caller: () => world.target.org,
        })),
        ...DISPATCH_PATHS.map((path) => ({
          method: 'POST',
          ...dispatchRoute(path),
          expect: dispatchExpectation(path),
          caller: () => world.traffic,
        })),
      ]
      await world.ensureTarget()
      for (const target of targets) {
        const params =
          target.params ??
          Object.fromEntries(paramNames(target.route).map((name) => [name, world.plainParam(target.route, name)]))
        for (const text of HEAVY_BODIES) {
          const call = hostileCall({
            ...target,
            params,
            query: '',
            headers: {},
            body: { kind: 'raw', text },
            contentType: 'application/json',
            caller: 'owner',
          })
          const problem = await world.check(call, target.caller())
          if (problem) failures.push(problem)
        }
        // A slow answer costs seconds on its own: the first failure is enough to show the fault.
        if (failures.length > 0) break
        if (target.route === '/v1/organization/delete') await world.ensureTarget()
      }
      await thenStillServing(world, 'deep and huge bodies', async () => {
        if (failures.length > 0) throw new Error(`deep or huge bodies answered wrongly or slowly:\n\n${failures.join('\n\n')}`)
      })
    }, 120_000)

    describe('every dispatch path: no 5xx, errors in the SDK error shape, every call logged', () => {
      for (const path of DISPATCH_PATHS) {
        test(`POST ${path}`, async () => {
          await thenStillServing(world, `hostile input to POST ${path}`, async () => {
            await holds(world, dispatchExamples(path), dispatchCall(path), RUNS.dispatch, () => world.traffic)
          })
        }, 60_000)
      }

      test("a `stream` that is not a boolean is refused with 400 in the caller's format, not taken for false", async () => {
        const streaming: DispatchPath[] = ['/v1/chat/completions', '/v1/messages', '/v1/completions', '/v1/responses']
        const failures: string[] = []
        for (const path of streaming)
          for (const stream of ['yes', 'true', 'false', 1, 0, {}, []]) {
            const call = hostileCall({
              method: 'POST',
              route: path,
              params: {},
              query: '',
              headers: {},
              body: { kind: 'json', value: validDispatchBody(path, { stream }) },
              contentType: 'application/json',
              caller: 'apiKey',
              expect: dispatchExpectation(path),
            })
            const answer = await send(world.h.app, call, world.traffic.apiKey)
            const problem = answer.status === 400 ? problemWith(call, answer) : `stream ${JSON.stringify(stream)} was not refused`
            if (problem) failures.push(report(call, answer, problem))
          }
        await thenStillServing(world, 'non-boolean stream flags', async () => {
          if (failures.length > 0)
            throw new Error(`${failures.length} call(s) answered wrongly:\n\n${failures.slice(0, 6).join('\n\n')}`)
        })
      })
    })

    describe('the other gateway routes', () => {
      const gatewayCall = (parts: Pick<HostileCall, 'method' | 'route' | 'expect'> & Partial<HostileCall>): HostileCall =>
        hostileCall({
          params: {},
          query: '',
          headers: {},
          body: { kind: 'none' },
          contentType: undefined,
          caller: 'apiKey',
          ...parts,
        })

      test('GET /v1/models', async () => {
        const base = { method: 'GET', route: '/v1/models', expect: gatewayRouteExpectation.models } as const
        // The names an OpenAI client sends, and any the route declares.
        const names = [...new Set(['limit', 'after', 'provider', ...world.queryNames('GET', '/v1/models')])]
        const corpus = queryCorpus(names).map((query) => gatewayCall({ ...base, query }))
        const random = fc
          .record({ query: queryString(names), caller: fc.constantFrom<Caller>('apiKey', 'owner') })
          .map((parts) => gatewayCall({ ...base, ...parts }))
        await thenStillServing(world, 'hostile input to GET /v1/models', async () => {
          await holds(world, corpus, random, RUNS.gateway, () => world.traffic)
        })
      })

      test('GET /v1/models/{model}', async () => {
        const base = { method: 'GET', route: '/v1/models/{model}', expect: gatewayRouteExpectation.model } as const
        const corpus = [
          ...PARAM_EXAMPLES.map((model) => gatewayCall({ ...base, params: { model } })),
          ...queryCorpus(world.queryNames('GET', '/v1/models/*')).map((query) =>
            gatewayCall({ ...base, params: { model: encodedParam('gpt-4o') }, query }),
          ),
        ]
        const random = fc
          .record({ params: fc.record({ model: pathParam(['gpt-4o', 'openai/gpt-4o'], []) }), query: queryString([]) })
          .map((parts) => gatewayCall({ ...base, ...parts }))
        await thenStillServing(world, 'hostile input to GET /v1/models/{model}', async () => {
          await holds(world, corpus, random, RUNS.gateway, () => world.traffic)
        })
      })

      test('POST /v1/feedback', async () => {
        const base = { method: 'POST', route: '/v1/feedback', expect: gatewayRouteExpectation.feedback } as const
        const requestIds = world.idsFor('requestId')
        const corpus = [
          ...RAW_BODIES.map((text) => gatewayCall({ ...base, body: { kind: 'raw', text }, contentType: 'application/json' })),
          ...FILLS.map((fill) =>
            gatewayCall({
              ...base,
              body: { kind: 'json', value: { requestId: fill, rating: true } },
              contentType: 'application/json',
            }),
          ),
        ]
        const requestId = fc.oneof(
          fc.uuid(),
          ...(requestIds.length > 0 ? [fc.constantFrom(...requestIds)] : []),
          hostileShortText,
          wrongType,
        )
        const rating = fc.oneof(fc.boolean(), fc.double({ min: -1, max: 1, noNaN: true }), wrongType)
        const random = fc
          .record({
            body: fc.oneof(
              {
                weight: 4,
                arbitrary: fc.record({ requestId, rating }, { requiredKeys: [] }).map((value): Body => ({ kind: 'json', value })),
              },
              { weight: 1, arbitrary: hostileBody(undefined, world) },
            ),
            contentType,
            caller: fc.constantFrom<Caller>('apiKey', 'owner'),
          })
          .map((parts) => gatewayCall({ ...base, ...parts }))
        await thenStillServing(world, 'hostile input to POST /v1/feedback', async () => {
          await holds(world, corpus, random, RUNS.gateway, () => world.traffic)
        })
      })

      test('GET /gateway/v1/meta/{requestId}', async () => {
        const base = { method: 'GET', route: '/gateway/v1/meta/{requestId}', expect: gatewayRouteExpectation.meta } as const
        const corpus = PARAM_EXAMPLES.map((param) => gatewayCall({ ...base, params: { requestId: param } }))
        const random = fc
          .record({ params: fc.record({ requestId: pathParam(world.idsFor('requestId'), []) }), query: queryString([]) })
          .map((parts) => gatewayCall({ ...base, ...parts }))
        await thenStillServing(world, 'hostile input to GET /gateway/v1/meta/{requestId}', async () => {
          await holds(world, corpus, random, RUNS.gateway, () => world.traffic)
        })
      })
    })

    test('the provider APIs (files, batches): no 5xx, errors in the provider shape, the gateway still serving', async () => {
      // The fuzzed organisation holds an OpenAI key of its own, which these routes need.
      const names = ['limit', 'after', 'before_id', 'after_id', 'purpose', 'order']
      const calls = PROVIDER_APIS.flatMap((api) => {
        const route = openApiPath(api.path)
        const family = errorFamily(api.path)
        const expect: Expectation = {
          family: family === 'anthropic' ? 'anthropic' : 'openai',
          success: 'provider-raw',
          stubs: false,
        }
        const plain = Object.fromEntries(paramNames(route).map((name) => [name, encodedParam('x')]))
        const call = (parts: Partial<HostileCall>): HostileCall =>
          hostileCall({
            method: api.method,
            route,
            params: plain,
            query: '',
            headers: {},
            body: api.method === 'POST' ? { kind: 'raw', text: '{}' } : { kind: 'none' },
            contentType: api.method === 'POST' ? 'application/json' : undefined,
            caller: 'apiKey',
            expect,
            ...parts,
          })
        return [
          // Each value once, in a name an SDK sends, the names taking turns.
          ...QUERY_VALUES.map((value, i) => call({ query: `?${names[i % names.length]}=${value}` })),
          ...paramNames(route).flatMap((name) => PARAM_EXAMPLES.map((param) => call({ params: { ...plain, [name]: param } }))),
        ]
      })
      await world.ensureTarget()
      await thenStillServing(world, 'hostile input to the provider APIs', async () => {
        const failures: string[] = []
        for (const call of calls) {
          const problem = await world.check(call, world.target.org)
          if (problem) failures.push(problem)
        }
        if (failures.length > 0)
          throw new Error(`${failures.length} call(s) answered wrongly:\n\n${failures.slice(0, 8).join('\n\n')}`)
      })
    }, 60_000)
  })
}
