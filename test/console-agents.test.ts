import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { data } from './support/budgets'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  openConsolePage,
  openPage,
  shots,
  startConsoleWorld,
} from './support/console'
import { type FakeA2aAgent, startFakeA2aAgent } from './support/fake-a2a-agent'
import { type FakeMcpServer, startFakeMcpServer } from './support/fake-mcp-server'

/**
 * A2A agents and tool rates on the Governance page, and the Tool calls page (MCP tool calls and A2A
 * agent calls): the fake agent registered, keyed, probed, renamed and called through gw's relay as the
 * Owner; an agent with a broken card probed and deleted; a tool rate set and deleted; a Member who sees
 * all of it and changes nothing.
 */
let world: ConsoleWorld
let agent: FakeA2aAgent
let broken: FakeA2aAgent
let mcp: FakeMcpServer

const AGENT_KEY = 'agent-key-0123456789-secret-value'
const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>

beforeAll(async () => {
  if (!browserAvailable) return
  // The fake agents listen on loopback: the egress policy must let gw reach them.
  world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
  agent = await startFakeA2aAgent({ name: 'Echo Agent', key: AGENT_KEY })
  broken = await startFakeA2aAgent({ card: { name: 'half a card', url: 'http://127.0.0.1/', skills: 'none' } })
  mcp = startFakeMcpServer({ name: 'Fake Tools' })
})
afterAll(async () => {
  if (!browserAvailable) return
  await agent.close()
  await broken.close()
  await mcp.close()
  await world.close()
})

interface AgentView {
  id: string
  name: string
  url: string
  hasKey: boolean
  keyHint?: string
}

const agents = async () => data<AgentView[]>(await world.h.request('GET', '/v1/a2a/agents', { token: world.ownerSession }))

const rpc = (text: string, id: string) => ({
  jsonrpc: '2.0',
  id,
  method: 'message/send',
  params: { message: { kind: 'message', messageId: `m-${id}`, role: 'user', parts: [{ kind: 'text', text }] } },
})

describe.skipIf(!browserAvailable)('A2A agents, tool rates and tool calls, in chromium', () => {
  test(
    'the Owner registers the fake agent, sets its key, probes it, renames it, calls it through gw and sees the call',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Tool calls')
      // Nothing relayed yet: each view says what would fill it.
      await page.getByText('No MCP tool calls in this window.').waitFor()
      await page.getByText('No A2A agent calls in this window.').waitFor()
      expect(await page.locator('[data-summary="a2a"]').textContent()).toContain('0 calls, 0 errors')
      await shots(page, 'tool-calls-empty')

      await page.getByRole('link', { name: 'Governance', exact: true }).click()
      await page.getByText('No A2A agents registered').waitFor()
      const form = page.getByRole('form', { name: 'Register an A2A agent' })
      await form.getByLabel(/^Name/).fill('Echo Agent')
      await form.getByLabel(/^URL/).fill(agent.url)
      await form.getByRole('button', { name: 'Register agent' }).click()
      // The name is what access rules name the agent by: the API's 400 says what it may hold.
      await form.getByRole('alert').filter({ hasText: 'name must be 1 to 64 characters of a-z' }).waitFor()
      await form.getByLabel(/^Name/).fill('echo')
      await form.getByRole('button', { name: 'Register agent' }).click()
      const card = page.getByRole('article', { name: 'A2A agent echo' })
      await card.waitFor()
      const [made] = await agents()
      if (!made) throw new Error('no agent registered')
      expect(await card.locator('[data-relay]').textContent()).toBe(`${world.server.url}/a2a/${made.id}`)
      expect(await card.locator('[data-fact="Key sent to the agent"]').textContent()).toBe('none')
      await card.getByText('No card yet').waitFor()

      // The key: typed once, kept sealed, shown back only by its hint.
      await card.getByRole('button', { name: 'Set the key of echo' }).click()
      const keyForm = card.getByRole('form', { name: 'Key of echo' })
      await keyForm.getByLabel(/^Key/).fill(AGENT_KEY)
      await keyForm.getByRole('button', { name: 'Save key' }).click()
      await keyForm.waitFor({ state: 'detached' })
      const hint = `${AGENT_KEY.slice(0, 4)}…${AGENT_KEY.slice(-4)}`
      expect(await agents()).toEqual([expect.objectContaining({ hasKey: true, keyHint: hint })])
      // The form closes at once; the card shows the hint once the list is read again.
      await card
        .locator('[data-fact="Key sent to the agent"]')
        .filter({ hasText: `set (${hint})` })
        .waitFor()
      expect(await card.locator('[data-fact="Key sent to the agent"]').textContent()).toBe(`set (${hint})`)
      expect(await page.content()).not.toContain(AGENT_KEY)

      // The probe fetches the card: its name, description and skills.
      await card.getByRole('button', { name: 'Probe echo' }).click()
      await card.locator('[data-probe="ok"]').waitFor()
      const skills = card.getByRole('list', { name: 'Skills of echo' })
      await skills.waitFor()
      expect(await skills.locator('code').allTextContents()).toEqual(['echo'])
      expect(await skills.textContent()).toContain('says back what it was told')
      expect(await card.locator('[data-card]').textContent()).toContain('Echo Agent, an agent for tests')

      // Renamed in place; its relay address stays.
      await card.getByRole('button', { name: 'Edit echo' }).click()
      const edit = page.getByRole('form', { name: 'Edit echo' })
      await edit.getByLabel(/^Name/).fill('echo-agent')
      await edit.getByRole('button', { name: 'Save agent' }).click()
      const renamed = page.getByRole('article', { name: 'A2A agent echo-agent' })
      await renamed.getByRole('list', { name: 'Skills of echo-agent' }).waitFor()
      expect(await renamed.locator('[data-relay]').textContent()).toBe(`${world.server.url}/a2a/${made.id}`)

      // An agent whose card is not one: the probe's error, beside it; then deleted.
      await form.getByLabel(/^Name/).fill('half')
      await form.getByLabel(/^URL/).fill(broken.url)
      await form.getByRole('button', { name: 'Register agent' }).click()
      const half = page.getByRole('article', { name: 'A2A agent half' })
      await half.getByRole('button', { name: 'Probe half' }).click()
      await half.locator('[data-probe="failed"]').waitFor()
      expect(await half.locator('[data-probe="failed"]').textContent()).toContain('The probe found no valid agent card')

      // A tool rate: every tool on any server, then one tool; the API's refusal of a price too precise.
      await page.getByText('No tool rates').waitFor()
      const rates = page.getByRole('form', { name: 'Set a tool rate' })
      await rates.getByLabel('USD per call').fill('0.0000000001')
      await rates.getByRole('button', { name: 'Set rate' }).click()
      await rates.getByRole('alert').filter({ hasText: 'more than 9 decimal places' }).waitFor()
      await rates.getByLabel(/^Tool/).fill('echo')
      await rates.getByLabel('USD per call').fill('0.002')
      await rates.getByRole('button', { name: 'Set rate' }).click()
      const table = page.getByRole('table', { name: 'Tool rates' })
      await table.getByRole('row').filter({ hasText: '$0.002' }).waitFor()
      expect(await table.getByRole('row').nth(1).textContent()).toContain('any server')
      // A server registered above is offered at once; a rate to the nano-dollar is shown as set.
      const server = page.getByRole('form', { name: 'Register an MCP server' })
      await server.getByLabel("Name (the tools' prefix)").fill('tools')
      await server.getByLabel('URL').fill(mcp.url)
      await server.getByRole('button', { name: 'Register server' }).click()
      await page.getByRole('article', { name: 'MCP server tools' }).waitFor()
      await rates.getByLabel('Server').selectOption({ label: 'tools' })
      await rates.getByLabel('USD per call').fill('0.000002')
      await rates.getByRole('button', { name: 'Set rate' }).click()
      const exact = table.getByRole('row').filter({ hasText: '$0.000002' })
      await exact.waitFor()
      expect((await exact.getByRole('cell').allTextContents()).slice(0, 2)).toEqual(['tools', 'every tool'])
      await page.getByRole('button', { name: 'Delete the rate of echo on any server' }).click()
      await table.getByRole('row').filter({ hasText: '$0.002' }).waitFor({ state: 'detached' })
      expect(
        (
          await data<Array<{ tool: string; usdPerCall: number }>>(
            await world.h.request('GET', '/v1/tool-rates', { token: world.ownerSession }),
          )
        ).map((r) => [r.tool, r.usdPerCall]),
      ).toEqual([['*', 0.000002]])
      await shots(page, 'agents-governance')

      await half.getByRole('button', { name: 'Delete half' }).click()
      await half.waitFor({ state: 'detached' })
      expect((await agents()).map((a) => a.name)).toEqual(['echo-agent'])

      // One call through gw's relay, with the organisation's API key: the agent gets its own key.
      const before = agent.calls.length
      const relayed = await fetch(`${world.server.url}/a2a/${made.id}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${world.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(rpc('hello from the console test', 'call-1')),
      })
      expect(relayed.status).toBe(200)
      expect(await relayed.json()).toMatchObject({ result: { parts: [{ text: 'echo: hello from the console test' }] } })
      expect(agent.calls.slice(before)).toEqual([expect.objectContaining({ authorization: `Bearer ${AGENT_KEY}` })])

      // One tool call through gw's MCP server, priced by the server's rate.
      const called = await fetch(`${world.server.url}/mcp`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${world.apiKey}`,
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
        },
        body: JSON.stringify({
          jsonrpc: '2.0',
          id: 2,
          method: 'tools/call',
          params: { name: 'tools__echo', arguments: { text: 'hi' } },
        }),
      })
      expect(`${called.status} ${await called.text()}`).toStartWith('200 ')

      await page.getByRole('link', { name: 'Tool calls', exact: true }).click()
      const tools = page.getByRole('table', { name: 'MCP tool calls' })
      await tools.waitFor()
      expect(await tools.getByRole('row').nth(1).getByRole('cell').allTextContents()).toEqual([
        expect.any(String),
        'tools',
        'echo',
        'success',
        expect.stringMatching(/^\d[\d,]* ms$/),
        '$0.000002',
      ])
      expect(await page.locator('[data-summary="mcp"]').textContent()).toMatch(
        /^1 call, 0 errors, average latency \d[\d,]* ms, cost \$0\.000002$/,
      )
      const calls = page.getByRole('table', { name: 'A2A agent calls' })
      await calls.waitFor()
      const row = calls.getByRole('row').nth(1)
      expect(await row.getByRole('cell').allTextContents()).toEqual([
        expect.any(String),
        'echo-agent',
        'message/send',
        'success',
        expect.stringMatching(/^\d[\d,]* ms$/),
      ])
      expect(await page.locator('[data-summary="a2a"]').textContent()).toContain('1 call, 0 errors')
      await shots(page, 'tool-calls')

      expect(
        errors.filter((error) => !/status of 400/.test(error)),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 2,
  )

  test(
    'a Member sees the agent, its card, its relay address, the rates and the calls, and has nothing to change',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Governance', MEMBER_EMAIL)
      const card = page.getByRole('article', { name: 'A2A agent echo-agent' })
      await card.getByRole('list', { name: 'Skills of echo-agent' }).waitFor()
      await card.locator('[data-relay]').waitFor()
      await page.getByRole('table', { name: 'Tool rates' }).getByRole('cell', { name: 'every tool' }).waitFor()
      // The dry run is the one form a reader has.
      expect(await page.getByRole('form').count()).toBe(1)
      expect(await page.getByRole('button', { name: /^(Edit|Delete|Probe|Set the key)/ }).count()).toBe(0)
      expect(await page.getByRole('button', { name: /^(Register|Set rate)/ }).count()).toBe(0)
      await shots(page, 'agents-member')

      await page.getByRole('link', { name: 'Tool calls', exact: true }).click()
      await page.getByRole('table', { name: 'A2A agent calls' }).getByRole('cell', { name: 'echo-agent' }).waitFor()
      await page.getByRole('table', { name: 'MCP tool calls' }).getByRole('cell', { name: 'echo', exact: true }).waitFor()
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
