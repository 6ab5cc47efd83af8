import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Locator, Page } from 'playwright-core'
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
import { type FakeMcpServer, startFakeMcpServer } from './support/fake-mcp-server'

/**
 * The Governance page: access rules made, dry-run, changed, refused and deleted, the defaults of each
 * resource kind, and MCP servers registered, probed and switched on from the catalogue; as the Owner,
 * and as a Member who reads all of it and changes nothing.
 */
let world: ConsoleWorld
let mcp: FakeMcpServer
let teamId: string

const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>

beforeAll(async () => {
  if (!browserAvailable) return
  // The fake MCP server listens on loopback: the egress policy must let gw reach it.
  world = await startConsoleWorld({ egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }) })
  mcp = startFakeMcpServer({ name: 'Fake Tools' })
  const team = await data<{ id: string }>(
    await world.h.request('POST', '/v1/team', { token: world.ownerSession, body: { name: 'Platform' } }),
  )
  teamId = team.id
})
afterAll(async () => {
  if (!browserAvailable) return
  await mcp.close()
  await world.close()
})

interface Rule {
  id: string
  subject: { kind: string; id: string | null }
  resource: { kind: string; id: string }
  effect: string
  reason: string | null
}

const rules = async () => data<Rule[]>(await world.h.request('GET', '/v1/governance/access-rules', { token: world.ownerSession }))
const defaults = async () =>
  data<Record<string, string>>(await world.h.request('GET', '/v1/governance/access-default', { token: world.ownerSession }))

const rule = (page: Page, text: string) => page.getByRole('listitem', { name: `Rule ${text}`, exact: true })
const glob = (form: Locator) => form.getByLabel(/^Which \(a glob/)

describe.skipIf(!browserAvailable)('the Governance page, in chromium', () => {
  test(
    "the Owner makes a deny rule, dry-runs it, is shown the API's refusals, edits and deletes it, and sets a default to deny and back",
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Governance')
      await page.getByText('No access rules').waitFor()

      const form = page.getByRole('form', { name: 'New access rule' })
      // A team subject with no team picked: the API's 400 says what is missing, in the form.
      expect(await form.getByLabel('Who').inputValue()).toBe('team')
      await glob(form).fill('gpt-4o*')
      await form.getByRole('button', { name: 'Add rule' }).click()
      await form.getByRole('alert').filter({ hasText: 'subject.id is required for a team' }).waitFor()
      await form.getByLabel('Which team').selectOption({ label: 'Platform' })
      await form.getByLabel(/^Reason/).fill('too dear for the platform team')
      await form.getByRole('button', { name: 'Add rule' }).click()
      const made = rule(page, 'deny team Platform → model gpt-4o*')
      await made.waitFor()
      expect(await made.getByText('too dear for the platform team').count()).toBe(1)
      const [stored] = await rules()
      expect(stored).toMatchObject({
        subject: { kind: 'team', id: teamId },
        resource: { kind: 'model', id: 'gpt-4o*' },
        effect: 'deny',
        reason: 'too dear for the platform team',
      })
      // The new form starts afresh.
      expect(await glob(form).inputValue()).toBe('')

      // The dry run answers deny, naming the rule, which the list marks.
      const dry = page.getByRole('form', { name: 'Dry run' })
      await dry.getByLabel('Who').selectOption('team')
      await dry.getByLabel('Which team').selectOption({ label: 'Platform' })
      await dry.getByLabel('Resource').selectOption('model')
      await dry.getByLabel(/^Name/).fill('gpt-4o-mini')
      await dry.getByRole('button', { name: 'Check' }).click()
      const verdict = page.locator('[data-decision]')
      await verdict.waitFor()
      expect(await verdict.getAttribute('data-decision')).toBe('deny')
      expect(await verdict.textContent()).toContain('by the rule deny team Platform → model gpt-4o*')
      expect(await verdict.textContent()).toContain('Reason: too dear for the platform team')
      expect(await verdict.textContent()).toContain('1 rule on models looked at')
      await made.locator('[data-matched]').waitFor()
      await shots(page, 'governance-rules')

      // Edited: a glob over 200 characters is the API's 400 in the form; then an allow of one model.
      await page.getByRole('button', { name: 'Edit the rule deny team Platform → model gpt-4o*' }).click()
      const edit = page.getByRole('form', { name: 'Edit the rule deny team Platform → model gpt-4o*' })
      await glob(edit).fill('g'.repeat(201))
      await edit.getByRole('button', { name: 'Save rule' }).click()
      await edit.getByRole('alert').filter({ hasText: 'resource.id must be 1 to 200 characters' }).waitFor()
      await shots(page, 'governance-rule-refused')
      await glob(edit).fill('gpt-4o')
      await edit.getByLabel('Effect').selectOption('allow')
      await edit.getByLabel(/^Reason/).fill('')
      await edit.getByRole('button', { name: 'Save rule' }).click()
      await rule(page, 'allow team Platform → model gpt-4o').waitFor()
      expect((await rules()).map((r) => [r.effect, r.resource.id, r.reason])).toEqual([['allow', 'gpt-4o', null]])

      // A default set to deny decides what no rule matches; then back to allow.
      const defaultsForm = page.getByRole('form', { name: 'Defaults' })
      expect(await defaultsForm.getByRole('button', { name: 'Save defaults' }).isDisabled()).toBe(true)
      await defaultsForm.locator('[data-default="model"]').selectOption('deny')
      await defaultsForm.getByRole('button', { name: 'Save defaults' }).click()
      await defaultsForm.getByRole('button', { name: 'Save defaults', disabled: true }).waitFor()
      expect((await defaults()).model).toBe('deny')
      await dry.getByLabel('Who').selectOption('org')
      await dry.getByLabel(/^Name/).fill('claude-sonnet')
      await dry.getByRole('button', { name: 'Check' }).click()
      await page.locator('[data-decision="deny"]').filter({ hasText: 'by the default for models' }).waitFor()
      await defaultsForm.locator('[data-default="model"]').selectOption('allow')
      await defaultsForm.getByRole('button', { name: 'Save defaults' }).click()
      await defaultsForm.getByRole('button', { name: 'Save defaults', disabled: true }).waitFor()
      expect(await defaults()).toEqual({
        provider: 'allow',
        model: 'allow',
        mcp_server: 'allow',
        mcp_tool: 'allow',
        agent: 'allow',
      })

      await page.getByRole('button', { name: 'Delete the rule allow team Platform → model gpt-4o' }).click()
      await page.getByText('No access rules').waitFor()
      expect(await rules()).toEqual([])
      expect(
        errors.filter((error) => !/status of 400/.test(error)),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 2,
  )

  test(
    'the Owner registers the fake MCP server, probes it and sees its tools, edits it, switches a catalogue server on and off, and deletes it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Governance')
      await page.getByText('No MCP servers registered.').waitFor()
      const form = page.getByRole('form', { name: 'Register an MCP server' })
      await form.getByLabel("Name (the tools' prefix)").fill('Fake Tools')
      await form.getByLabel('URL').fill(mcp.url)
      await form.getByRole('button', { name: 'Register server' }).click()
      // The name is the tools' prefix: the API's 400 says what it may hold.
      await form.getByRole('alert').filter({ hasText: 'name must be 1 to 64 characters of a-z' }).waitFor()
      await form.getByLabel("Name (the tools' prefix)").fill('fake-tools')
      await form.getByRole('button', { name: 'Register server' }).click()
      const card = page.getByRole('article', { name: 'MCP server fake-tools' })
      await card.waitFor()

      await card.getByRole('button', { name: 'Probe fake-tools' }).click()
      const tools = card.getByRole('list', { name: 'Tools of fake-tools' })
      await tools.waitFor()
      expect(await tools.locator('code').allTextContents()).toEqual(['echo', 'add'])
      expect(await card.locator('[data-probe="ok"]').textContent()).toContain('as Fake Tools 1.2.3')
      expect(mcp.rpcMethods()).toContain('tools/list')
      await shots(page, 'governance-mcp')

      await card.getByRole('button', { name: 'Edit fake-tools' }).click()
      const edit = page.getByRole('form', { name: 'Edit fake-tools' })
      await edit.getByLabel(/^Tools never offered/).fill('add, delete_*')
      await edit.getByRole('button', { name: 'Save server' }).click()
      await card.getByText('add, delete_*').waitFor()

      // A catalogue server that needs no token is switched on (registered under its id) and off (kept, disabled).
      const deepwiki = page.getByRole('switch', { name: 'DeepWiki enabled' })
      await deepwiki.check()
      const registered = page.getByRole('article', { name: 'MCP server deepwiki' })
      await registered.getByText('enabled', { exact: true }).waitFor()
      expect(await deepwiki.isChecked()).toBe(true)
      await deepwiki.uncheck()
      await registered.getByText('disabled', { exact: true }).waitFor()
      // One that needs a token, switched on without one: the API's 400, beside it.
      await page.getByRole('switch', { name: 'GitHub enabled' }).click()
      await page
        .getByRole('listitem')
        .filter({ has: page.getByRole('switch', { name: 'GitHub enabled' }) })
        .getByRole('alert')
        .waitFor()
      await shots(page, 'governance-catalogue')

      await page.getByRole('button', { name: 'Delete deepwiki' }).click()
      await registered.waitFor({ state: 'detached' })
      expect(await page.getByRole('switch', { name: 'DeepWiki enabled' }).isChecked()).toBe(false)
      expect(
        errors.filter((error) => !/status of 400/.test(error)),
        errors.join('\n'),
      ).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS * 2,
  )

  test(
    'a Member sees the rules, the defaults and the servers, dry-runs, and has nothing to change',
    async () => {
      await world.h.request('POST', '/v1/governance/access-rules', {
        token: world.ownerSession,
        body: { subject: { kind: 'role', id: 'member' }, resource: { kind: 'mcp_tool', id: 'fake-tools__*' }, effect: 'deny' },
      })
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Governance', MEMBER_EMAIL)
      const denied = rule(page, 'deny role Member → MCP tool fake-tools__*')
      await denied.waitFor()
      await page.getByRole('article', { name: 'MCP server fake-tools' }).waitFor()
      // The dry run is the one form a reader has.
      expect(await page.getByRole('form').count()).toBe(1)
      expect(await page.getByRole('button', { name: /^(Edit|Delete|Probe)/ }).count()).toBe(0)
      expect(await page.locator('dd[data-default="model"]').textContent()).toBe('allow')
      for (const item of await page.getByRole('switch').all()) expect(await item.isDisabled()).toBe(true)

      const dry = page.getByRole('form', { name: 'Dry run' })
      await dry.getByLabel('Who').selectOption('member')
      await dry.getByLabel('Which member').selectOption({ label: MEMBER_EMAIL })
      await dry.getByLabel('Resource').selectOption('mcp_tool')
      await dry.getByLabel(/^Name/).fill('fake-tools__echo')
      await dry.getByRole('button', { name: 'Check' }).click()
      await page.locator('[data-decision="deny"]').filter({ hasText: 'deny role Member → MCP tool fake-tools__*' }).waitFor()
      await denied.locator('[data-matched]').waitFor()
      await shots(page, 'governance-member')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})
