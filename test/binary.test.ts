import { Database } from 'bun:sqlite'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { generateKeyPairSync } from 'node:crypto'
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { Webhook as Verifier } from 'standardwebhooks'
import { VERSION } from '../src/version'
import { BROWSER_TEST_MS, browserAvailable, launchChromium, openPage, shot } from './support/console'
import { startFakeA2aAgent } from './support/fake-a2a-agent'
import { BEDROCK_MODELS, BEDROCK_TEXT, startFakeBedrock } from './support/fake-aws-azure'
import { GEMINI_TEXT, serviceAccountKeyFile, startFakeGoogle } from './support/fake-google'
import { startFakeMcpServer } from './support/fake-mcp-server'
import { type FakeProvider, startFakeProvider } from './support/fake-provider'
import { startOtlpReceiver } from './support/otlp-receiver'

/**
 * The compiled executable, as a user runs it: built fresh, started from an empty directory with
 * nothing beside it, minified (which is where Elysia macros written the wrong way break).
 */
const root = join(import.meta.dir, '..')
const work = mkdtempSync(join(tmpdir(), 'gw-binary-'))
const binary = join(work, 'bin', 'gw')
const home = join(work, 'home')

const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', HOME: home, GW_LOG_LEVEL: 'info', ...extra })

function run(args: string[], options: { cwd: string; stdin?: string; env?: Record<string, string> }) {
  const result = Bun.spawnSync([binary, ...args], {
    cwd: options.cwd,
    env: env(options.env),
    stdin: options.stdin === undefined ? 'ignore' : new TextEncoder().encode(options.stdin),
  })
  return { code: result.exitCode, stdout: result.stdout.toString(), stderr: result.stderr.toString() }
}

let fake: FakeProvider

beforeAll(async () => {
  // Built the way `bun run build` builds it, so its extra entrypoints (the log writer thread) are in.
  const build = Bun.spawnSync(['bun', 'scripts/build.ts', '--outfile', binary], { cwd: root })
  if (build.exitCode !== 0) throw new Error(`build failed: ${build.stderr.toString()}`)
  Bun.spawnSync(['mkdir', '-p', home])
  fake = await startFakeProvider()
  // A build takes a second or two alone, several on a machine busy with the rest of the suite.
}, 60_000)
afterAll(async () => {
  await fake.close()
  rmSync(work, { recursive: true, force: true })
})

/** `gw serve` in a directory, on a port the kernel chooses, calling the fake provider. */
async function serveFrom(cwd: string, extra: Record<string, string> = {}) {
  const server = Bun.spawn([binary, 'serve'], {
    cwd,
    env: env({ GW_PORT: '0', OPENAI_BASE_URL: fake.openaiBaseUrl, OPENAI_API_KEY: 'sk-operator', ...extra }),
    stdout: 'pipe',
    stderr: 'pipe',
  })
  // The listening line carries the port the kernel chose.
  const reader = server.stderr.getReader()
  let log = ''
  let base: string | undefined
  while (base === undefined) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`server exited: ${log}`)
    log += new TextDecoder().decode(value)
    base = /"url":"(http:\/\/[^"]+)"/.exec(log)?.[1]
  }
  reader.releaseLock()
  return { server, base }
}

describe('the compiled binary', () => {
  test('--version and --help', () => {
    expect(run(['--version'], { cwd: home }).stdout.trim()).toBe(VERSION)
    const help = run(['--help'], { cwd: home })
    expect(help.code).toBe(0)
    expect(help.stdout).toContain('gw bootstrap --org NAME --email EMAIL')
  })

  test('a bad configuration exits 2 with one line naming the variable', () => {
    const result = run(['serve'], { cwd: home, env: { GW_PORT: 'abc' } })
    expect(result.code).toBe(2)
    expect(result.stderr.trim().split('\n')).toHaveLength(1)
    expect(result.stderr).toContain('GW_PORT')
  })

  test('an unknown command exits 2', () => {
    expect(run(['frobnicate'], { cwd: home }).code).toBe(2)
  })

  test("an --email a browser's email field refuses exits 2 with one line naming it, and creates nothing", () => {
    const cwd = mkdtempSync(join(work, 'bad-email-'))
    for (const args of [
      ['bootstrap', '--org', 'Acme', '--email', 'not an email'],
      ['member', 'add', '--org', 'some-org', '--email', 'not an email', '--role', 'member'],
    ]) {
      const result = run(args, { cwd })
      expect(result.code).toBe(2)
      expect(result.stdout).toBe('')
      expect(result.stderr.trim().split('\n')).toEqual([
        'gw: --email "not an email" is not an email address such as name@example.com (what a browser\'s email field accepts), at most 254 characters',
      ])
    }
    // Refused before the data directory is opened: no database, no secret.
    expect(existsSync(join(cwd, 'gw-data'))).toBe(false)
  })

  test("takes nothing from the working directory: a .env there changes no setting, a bunfig.toml's preload never runs", () => {
    const cwd = join(work, 'hostile')
    mkdirSync(cwd, { recursive: true })
    writeFileSync(join(cwd, '.env'), `GW_DATA_DIR=${join(cwd, 'from-dotenv')}\n`)
    writeFileSync(join(cwd, 'bunfig.toml'), 'preload = ["./preload.ts"]\n')
    writeFileSync(join(cwd, 'preload.ts'), 'console.error("PRELOAD RAN")\n')
    const result = run(['bootstrap', '--org', 'o', '--email', 'a@example.test'], { cwd })
    expect(result.code).toBe(0)
    expect(result.stderr).not.toContain('PRELOAD RAN')
    // GW_DATA_DIR is unset, so the default (./gw-data) serves, not the .env's directory.
    expect(existsSync(join(cwd, 'from-dotenv'))).toBe(false)
    expect(existsSync(join(cwd, 'gw-data'))).toBe(true)
  })

  test('from an empty directory: serves, bootstraps, enforces permissions, stops cleanly', async () => {
    const cwd = mkdtempSync(join(work, 'empty-'))
    const { server, base } = await serveFrom(cwd)
    let orgId = ''
    try {
      const health = await fetch(`${base}/healthcheck`)
      expect(health.status).toBe(200)
      expect(await health.json()).toMatchObject({ status: 'ok', version: VERSION, components: { database: 'ok' } })
      expect(statSync(join(cwd, 'gw-data', 'secret')).mode & 0o777).toBe(0o600)

      // The console is inside the executable: / leads to it, its page and assets come from gw alone.
      const home = await fetch(`${base}/`, { redirect: 'manual' })
      expect([home.status, home.headers.get('location')]).toEqual([302, '/console'])
      const page = await (await fetch(`${base}/console`)).text()
      expect(page).toContain("script-src 'self'")
      const assets = [...page.matchAll(/(?:src|href)="([^"]+)"/g)]
        .map((m) => m[1] as string)
        .filter((a) => !a.startsWith('data:'))
      expect(assets.length).toBeGreaterThanOrEqual(2)
      for (const asset of assets) {
        expect(asset.startsWith('/')).toBe(true)
        expect((await fetch(`${base}${asset}`)).status).toBe(200)
      }

      const boot = run(['bootstrap', '--org', 'Acme', '--email', 'owner@acme.test', '--tier', 'growth'], { cwd })
      expect(boot.code).toBe(0)
      expect(boot.stdout.trim().split('\n')).toHaveLength(1)
      const created = JSON.parse(boot.stdout) as Record<string, string>
      expect(Object.keys(created).sort()).toEqual(['apiKey', 'orgId', 'sessionToken', 'userId'])

      const asKey = { authorization: `Bearer ${created.apiKey}` }
      expect((await fetch(`${base}/v1/webhooks`, { headers: asKey })).status).toBe(403)
      expect((await fetch(`${base}/v1/organization/${created.orgId}/permissions/me`, { headers: asKey })).status).toBe(200)
      expect((await fetch(`${base}/v1/webhooks`)).status).toBe(401)

      // A query's numbers are validated in the minified build as from source: in range is read, out of
      // range is the caller's 400, whatever the bundler renamed.
      const asOwner = { authorization: `Bearer ${created.sessionToken}` }
      const audit = (query: string) => fetch(`${base}/v1/organization/${created.orgId}/audit?${query}`, { headers: asOwner })
      expect((await audit('limit=2')).status).toBe(200)
      for (const query of ['limit=-1', 'limit=0', 'limit=5000', 'limit=1.5', 'limit=abc']) {
        const refused = await audit(query)
        expect([query, refused.status]).toEqual([query, 400])
        expect(((await refused.json()) as { error: { message: string } }).error.message).toContain('limit must be a whole number')
      }

      const added = run(
        ['member', 'add', '--org', created.orgId as string, '--email', 'admin@acme.test', '--role', 'admin', '--password-stdin'],
        {
          cwd,
          stdin: 'a long enough password\n',
        },
      )
      expect(added.code).toBe(0)
      expect(Object.keys(JSON.parse(added.stdout)).sort()).toEqual(['sessionToken', 'userId'])
      const login = await fetch(`${base}/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'admin@acme.test', password: 'a long enough password' }),
      })
      expect(login.status).toBe(200)
      const session = ((await login.json()) as { data: { sessionToken: string } }).data.sessionToken
      // An Admin is refused only the ownership routes; this one has no handler yet and says so.
      expect(
        (
          await fetch(`${base}/v1/value/rate`, {
            method: 'PUT',
            headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(501)
      // A built route's schema is checked in the minified build too, after its permission.
      expect(
        (
          await fetch(`${base}/v1/a2a/agents`, {
            method: 'POST',
            headers: { authorization: `Bearer ${session}`, 'content-type': 'application/json' },
            body: '{}',
          })
        ).status,
      ).toBe(400)
      expect(
        (await fetch(`${base}/v1/organization/delete`, { method: 'DELETE', headers: { authorization: `Bearer ${session}` } }))
          .status,
      ).toBe(403)

      const credits = run(['credits', 'add', '--org', created.orgId as string, '--usd', '5'], { cwd })
      expect(JSON.parse(credits.stdout)).toEqual({ orgId: created.orgId, creditsRemaining: 5 })
      orgId = created.orgId as string
      // A gateway call: its record and its charge are written by the log writer's own thread.
      const call = await fetch(`${base}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...asKey, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi' }] }),
      })
      expect(call.status).toBe(200)
      expect(run(['credits', 'add', '--org', created.orgId as string, '--usd', '-1'], { cwd }).code).toBe(2)

      // Rotating the generated secret: the file is replaced, and a new process opens the database with it.
      const secretBefore = await Bun.file(join(cwd, 'gw-data', 'secret')).text()
      const rotated = run(['secret', 'rotate'], { cwd })
      expect(rotated.code).toBe(0)
      expect(JSON.parse(rotated.stdout)).toMatchObject({
        rotated: {
          serverKeys: 1,
          providerKeys: 0,
          ssoClientSecrets: 0,
          webhookSecrets: 0,
          integrationSecrets: 0,
          mcpServerTokens: 0,
          a2aAgentKeys: 0,
        },
      })
      expect(await Bun.file(join(cwd, 'gw-data', 'secret')).text()).not.toBe(secretBefore)
      expect(statSync(join(cwd, 'gw-data', 'secret')).mode & 0o777).toBe(0o600)
      const afterRotation = run(
        ['member', 'add', '--org', created.orgId as string, '--email', 'late@acme.test', '--role', 'member'],
        { cwd },
      )
      expect(afterRotation.code).toBe(0)
      expect(run(['secret', 'rotate'], { cwd, env: { GW_SECRET: 'x'.repeat(40) } }).code).toBe(2)

      const duplicate = run(
        ['member', 'add', '--org', created.orgId as string, '--email', 'admin@acme.test', '--role', 'member'],
        { cwd },
      )
      expect(duplicate.code).toBe(1)
      expect(duplicate.stderr).toContain('already a member')
    } finally {
      server.kill('SIGTERM')
    }
    expect(await server.exited).toBe(0)
    // Stopped cleanly: the request log was drained through the writer thread before the exit.
    const db = new Database(join(cwd, 'gw-data', 'gw.db'), { readonly: true })
    const row = db.query('SELECT count(*) AS n FROM requests WHERE org_id = ?').get(orgId) as { n: number }
    const org = db.query('SELECT credit_balance_nano AS balance FROM organizations WHERE id = ?').get(orgId) as {
      balance: number
    }
    db.close()
    expect(row.n).toBe(1)
    expect(org.balance).toBe(5e9 - 7_500_000) // $0.0075 at the fake's usage, taken with the record
  })

  test.skipIf(!browserAvailable)(
    "the console from the executable, in chromium: the first person's two commands, signing in, a key, its call in Requests",
    async () => {
      const cwd = mkdtempSync(join(work, 'console-'))
      // The first person: one command to create the organisation with a password, one to serve.
      const password = 'the first password'
      const boot = run(['bootstrap', '--org', 'First', '--email', 'first@acme.test', '--tier', 'growth', '--password-stdin'], {
        cwd,
        stdin: `${password}\n`,
      })
      expect(boot.code).toBe(0)
      // Calls on the operator's provider key are paid from credits (not part of signing in).
      const { orgId } = JSON.parse(boot.stdout) as { orgId: string }
      expect(run(['credits', 'add', '--org', orgId, '--usd', '1'], { cwd }).code).toBe(0)
      const { server, base } = await serveFrom(cwd)
      const browser = await launchChromium()
      try {
        const { page, requested, errors } = await openPage(browser)
        await page.goto(base)
        await page.getByLabel('Email').fill('first@acme.test')
        await page.getByLabel('Password').fill(password)
        await page.getByRole('button', { name: 'Sign in' }).click()
        await page.getByRole('heading', { name: 'Overview' }).waitFor()
        await page.getByRole('link', { name: 'API keys' }).click()
        await page.getByLabel('Name').fill('from the binary')
        await page.getByRole('button', { name: 'Create key' }).click()
        const key = (await page.locator('[data-secret]').textContent()) ?? ''
        expect(key).toStartWith('gw-sk-')
        const call = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'hi from the binary' }] }),
        })
        expect(call.status).toBe(200)
        // The record is written by the log writer's thread: Requests shows it within seconds.
        await page.getByRole('link', { name: 'Requests' }).click()
        for (let attempt = 0; attempt < 40 && (await page.locator('[data-cost]').count()) === 0; attempt++) {
          await Bun.sleep(250)
          await page.getByRole('button', { name: 'Apply filter' }).click()
        }
        expect(await page.locator('[data-cost]').first().textContent()).toBe('$0.0075')
        await shot(page, 'binary-requests')
        expect(requested.filter((url) => !url.startsWith(base) && !url.startsWith('data:'))).toEqual([])
        expect(errors, errors.join('\n')).toEqual([])
      } finally {
        await browser.close()
        server.kill('SIGTERM')
        await server.exited
      }
    },
    BROWSER_TEST_MS,
  )

  test('relays an A2A call and its stream through the real server, with the agent key and gw as the card address', async () => {
    const agentKey = 'agent-key-binary-0123456789'
    const agent = await startFakeA2aAgent({ name: 'Binary Agent', key: agentKey })
    const cwd = mkdtempSync(join(work, 'a2a-'))
    try {
      const boot = run(['bootstrap', '--org', 'Agents', '--email', 'agents@acme.test'], { cwd })
      const { sessionToken, apiKey } = JSON.parse(boot.stdout) as Record<string, string>
      const { server, base } = await serveFrom(cwd, { GW_EGRESS_ALLOW_HOSTS: '127.0.0.1' })
      try {
        const manage = (method: string, path: string, body?: unknown) =>
          fetch(`${base}${path}`, {
            method,
            headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          })
        const created = await manage('POST', '/v1/a2a/agents', { name: 'binary', url: agent.url })
        expect(created.status).toBe(201)
        const { id } = ((await created.json()) as { data: { id: string } }).data
        expect((await manage('PUT', `/v1/a2a/agents/${id}/keys`, { key: agentKey })).status).toBe(200)
        const probed = (await (await manage('POST', `/v1/a2a/agents/${id}/probe`)).json()) as { data: { ok: boolean } }
        expect(probed.data.ok).toBe(true)
        const card = await fetch(`${base}/a2a/${id}/.well-known/agent-card.json`, {
          headers: { authorization: `Bearer ${apiKey}` },
        })
        expect(((await card.json()) as { url: string }).url).toBe(`${base}/a2a/${id}`)
        const streamed = await fetch(`${base}/a2a/${id}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json', accept: 'text/event-stream' },
          body: JSON.stringify({
            jsonrpc: '2.0',
            id: 1,
            method: 'message/stream',
            params: { message: { kind: 'message', messageId: 'm-1', role: 'user', parts: [{ kind: 'text', text: 'hi' }] } },
          }),
        })
        expect(streamed.status).toBe(200)
        expect(streamed.headers.get('content-type')).toStartWith('text/event-stream')
        expect(await streamed.text()).toContain('"final":true')
        expect(agent.calls.at(-1)).toMatchObject({ method: 'message/stream', authorization: `Bearer ${agentKey}` })
      } finally {
        server.kill('SIGTERM')
        await server.exited
      }
    } finally {
      await agent.close()
    }
  })

  test("serves MCP at /mcp: the SDK's client lists a registered server's tools and calls one through gw, priced and logged", async () => {
    const upstreamToken = 'mcp-token-binary-0123456789'
    const upstream = startFakeMcpServer({ name: 'Binary Tools', token: upstreamToken })
    const cwd = mkdtempSync(join(work, 'mcp-'))
    try {
      const boot = run(['bootstrap', '--org', 'Tools', '--email', 'tools@acme.test'], { cwd })
      const { sessionToken, apiKey } = JSON.parse(boot.stdout) as Record<string, string>
      const { server, base } = await serveFrom(cwd, { GW_EGRESS_ALLOW_HOSTS: '127.0.0.1' })
      const client = new Client({ name: 'binary-test', version: '1.0.0' })
      try {
        const manage = (method: string, path: string, body?: unknown) =>
          fetch(`${base}${path}`, {
            method,
            headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
            body: body === undefined ? undefined : JSON.stringify(body),
          })
        const created = await manage('POST', '/v1/mcp/servers', {
          name: 'tools',
          url: upstream.url,
          transport: 'streamable_http',
          auth: { kind: 'bearer', token: upstreamToken },
        })
        expect(created.status).toBe(201)
        const { id } = ((await created.json()) as { data: { id: string } }).data
        expect((await manage('PUT', '/v1/tool-rates', { serverId: id, tool: 'echo', usdPerCall: 0.01 })).status).toBe(200)
        expect((await fetch(`${base}/mcp`, { method: 'POST', body: '{}' })).status).toBe(401)

        await client.connect(
          new StreamableHTTPClientTransport(new URL(`${base}/mcp`), {
            requestInit: { headers: { authorization: `Bearer ${apiKey}` } },
          }),
        )
        const { tools } = await client.listTools()
        expect(tools.map((tool) => tool.name).sort()).toEqual(['tools__add', 'tools__echo'])
        const result = await client.callTool({ name: 'tools__echo', arguments: { text: 'from the binary' } })
        expect(result.content).toEqual([{ type: 'text', text: 'from the binary' }])
        const logged = (await (await manage('POST', '/v1/mcp/tool-calls', {})).json()) as {
          data: { calls: Array<{ toolName: string; status: string; cost: number }> }
        }
        expect(logged.data.calls).toEqual([expect.objectContaining({ toolName: 'echo', status: 'success', cost: 0.01 })])
      } finally {
        await client.close().catch(() => undefined)
        server.kill('SIGTERM')
        await server.exited
      }
    } finally {
      await upstream.close()
    }
  })

  test("with a collector named, a call's spans reach it over OTLP/HTTP, the last of them sent at shutdown", async () => {
    const collector = startOtlpReceiver()
    const cwd = mkdtempSync(join(work, 'traces-'))
    try {
      const boot = run(['bootstrap', '--org', 'Traced', '--email', 'traced@acme.test'], { cwd })
      const { orgId, apiKey } = JSON.parse(boot.stdout) as Record<string, string>
      run(['credits', 'add', '--org', orgId as string, '--usd', '1'], { cwd })
      // A minute between exports: what comes, comes from the flush at shutdown.
      const { server, base } = await serveFrom(cwd, {
        OTEL_EXPORTER_OTLP_ENDPOINT: collector.endpoint,
        OTEL_BSP_SCHEDULE_DELAY: '60000',
        OTEL_SERVICE_NAME: 'gw-binary',
      })
      let requestId: string | null = null
      try {
        const call = await fetch(`${base}/v1/chat/completions`, {
          method: 'POST',
          headers: {
            authorization: `Bearer ${apiKey}`,
            'content-type': 'application/json',
            traceparent: '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01',
          },
          body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'traced' }] }),
        })
        expect(call.status).toBe(200)
        requestId = call.headers.get('gw-id')
        expect(fake.calls.at(-1)?.headers.traceparent).toStartWith('00-0af7651916cd43dd8448eb211c80319c-')
      } finally {
        server.kill('SIGTERM')
        expect(await server.exited).toBe(0)
      }
      const span = await collector.span((candidate) => candidate.attributes['gw.request_id'] === requestId, 1_000)
      expect(span).toMatchObject({ traceId: '0af7651916cd43dd8448eb211c80319c', parentSpanId: 'b7ad6b7169203331' })
      expect(span.attributes).toMatchObject({ 'gen_ai.operation.name': 'chat', 'gen_ai.request.model': 'gpt-4o' })
      expect(span.resource['service.name']).toBe('gw-binary')
      expect(collector.spans.some((candidate) => candidate.parentSpanId === span.spanId)).toBe(true)
    } finally {
      await collector.stop()
    }
  })

  test("reaches Bedrock (its signature checked by AWS's signer, streams framed by AWS's codec), Gemini and Vertex (a service account's token), and serves Google's SDK route", async () => {
    const aws = { id: 'AKIAFAKEBINARY000001', secret: 'binary-secret-access-key-0000000001' }
    const bedrock = startFakeBedrock({ [aws.id]: { secretAccessKey: aws.secret } })
    const google = await startFakeGoogle()
    const cwd = mkdtempSync(join(work, 'providers-'))
    try {
      const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 })
      const email = `binary@${google.project}.iam.gserviceaccount.com`
      google.trust(email, publicKey)
      const keyFile = join(cwd, 'service-account.json')
      const privateKeyPem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()
      writeFileSync(keyFile, serviceAccountKeyFile(google, { clientEmail: email, privateKeyPem }))
      const boot = run(['bootstrap', '--org', 'Providers', '--email', 'providers@acme.test'], { cwd })
      const { orgId, apiKey } = JSON.parse(boot.stdout) as Record<string, string>
      run(['credits', 'add', '--org', orgId as string, '--usd', '1'], { cwd })
      const { server, base } = await serveFrom(cwd, {
        AWS_ACCESS_KEY_ID: aws.id,
        AWS_SECRET_ACCESS_KEY: aws.secret,
        AWS_REGION: bedrock.region,
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: bedrock.url,
        GEMINI_API_KEY: google.apiKey,
        GEMINI_BASE_URL: google.url,
        GOOGLE_APPLICATION_CREDENTIALS: keyFile,
        GOOGLE_CLOUD_LOCATION: google.location,
        GOOGLE_VERTEX_BASE_URL: google.url,
      })
      const call = (path: string, body: Record<string, unknown>) =>
        fetch(`${base}${path}`, {
          method: 'POST',
          headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
          body: JSON.stringify(body),
        })
      const chat = (model: string, stream = false) =>
        call('/v1/chat/completions', { model, stream, messages: [{ role: 'user', content: 'hi' }] })
      try {
        for (const [model, provider, text] of [
          [`bedrock/${BEDROCK_MODELS[0]}`, 'bedrock', BEDROCK_TEXT],
          ['gemini-2.5-flash', 'gemini', GEMINI_TEXT],
          ['vertex/gemini-2.5-flash', 'vertex', GEMINI_TEXT],
        ] as const) {
          const whole = await chat(model)
          expect(whole.headers.get('gw-provider')).toBe(provider)
          const answer = (await whole.json()) as { choices: Array<{ message: { content: string } }> }
          expect(answer.choices[0]?.message.content).toBe(text.join(''))
          const streamed = await chat(model, true)
          expect(streamed.status).toBe(200)
          const events = await streamed.text()
          for (const piece of text) expect(events).toContain(JSON.stringify(piece))
          expect(events.trimEnd()).toEndWith('data: [DONE]')
        }
        const generated = await call('/v1beta/models/gemini-2.5-flash:generateContent', {
          contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
        })
        expect(generated.status).toBe(200)
        const candidates = ((await generated.json()) as { candidates: Array<{ content: { parts: Array<{ text: string }> } }> })
          .candidates
        expect(candidates[0]?.content.parts.map((part) => part.text).join('')).toBe(GEMINI_TEXT.join(''))
        expect(google.tokensIssued).toBe(1)
      } finally {
        server.kill('SIGTERM')
        await server.exited
      }
    } finally {
      await Promise.all([bedrock.close(), google.close()])
    }
  })

  test('a webhook event waiting in the outbox when gw is killed is delivered by the next start, once', async () => {
    const cwd = mkdtempSync(join(work, 'outbox-'))
    const received: string[] = []
    let secret = ''
    const receiver = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      fetch: async (request) => {
        const body = await request.text()
        new Verifier(secret).verify(body, Object.fromEntries(request.headers))
        received.push(request.headers.get('webhook-id') as string)
        return new Response('ok')
      },
    })
    const allowLoopback = { GW_EGRESS_ALLOW_HOSTS: '127.0.0.1' }
    try {
      const boot = run(['bootstrap', '--org', 'Hooks', '--email', 'hooks@acme.test', '--tier', 'growth'], { cwd })
      const { orgId, sessionToken, apiKey } = JSON.parse(boot.stdout) as Record<string, string>
      run(['credits', 'add', '--org', orgId as string, '--usd', '1'], { cwd })
      // First start: the webhook is made.
      const first = await serveFrom(cwd, allowLoopback)
      const created = await fetch(`${first.base}/v1/webhooks`, {
        method: 'POST',
        headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
        body: JSON.stringify({ destination: `http://127.0.0.1:${receiver.port}/hook`, events: ['request.completed'] }),
      })
      expect(created.status).toBe(201)
      secret = ((await created.json()) as { data: { secret: string } }).data.secret
      first.server.kill('SIGTERM')
      await first.server.exited
      // Second start, with outgoing calls off: a call's event waits in the outbox; then gw is killed outright.
      const second = await serveFrom(cwd, { ...allowLoopback, GW_EGRESS: 'off' })
      const call = await fetch(`${second.base}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'gpt-4o', messages: [{ role: 'user', content: 'keep me' }] }),
      })
      expect(call.status).toBe(200)
      const requestId = call.headers.get('gw-id')
      await call.text()
      // The record, and its event with it, is written within a moment by the log writer's thread.
      const recorded = async () => {
        const found = await fetch(`${second.base}/v1/request/query-ids`, {
          method: 'POST',
          headers: { authorization: `Bearer ${sessionToken}`, 'content-type': 'application/json' },
          body: JSON.stringify({ requestIds: [requestId] }),
        })
        return ((await found.json()) as { data: { requests: unknown[] } }).data.requests.length === 1
      }
      for (let i = 0; i < 50 && !(await recorded()); i++) await Bun.sleep(100)
      second.server.kill('SIGKILL')
      await second.server.exited
      expect(received).toEqual([])
      // Third start: the event goes out, once.
      const third = await serveFrom(cwd, allowLoopback)
      for (let i = 0; i < 50 && received.length === 0; i++) await Bun.sleep(100)
      await Bun.sleep(1_500)
      third.server.kill('SIGTERM')
      expect(await third.server.exited).toBe(0)
      expect(received).toHaveLength(1)
    } finally {
      receiver.stop(true)
    }
  })
})
