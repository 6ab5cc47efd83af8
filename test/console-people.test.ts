import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Page } from 'playwright-core'
import {
  BROWSER_TEST_MS,
  browserAvailable,
  type ConsoleWorld,
  MEMBER_EMAIL,
  OWNER_EMAIL,
  openConsolePage,
  openPage,
  PASSWORD,
  shot,
  startConsoleWorld,
} from './support/console'

const ENTERPRISE_OWNER = 'enterprise-owner@console.test'
const ENTERPRISE_MEMBER = 'enterprise-member@console.test'
const TRANSFER_OWNER = 'transfer-owner@console.test'
const TRANSFER_ADMIN = 'transfer-admin@console.test'

interface Listed {
  userId: string
  email: string
  role: string
}
interface Role {
  id: string
  name: string
  permissions: string[]
  archivedAt: string | null
}

let world: ConsoleWorld
/** An Enterprise organisation, where custom roles exist. */
let enterprise: { orgId: string; session: string; memberId: string }
/** An organisation of its own for the transfer, which changes who its Owner is. */
let transfer: { orgId: string; adminId: string; adminSession: string }

beforeAll(async () => {
  if (!browserAvailable) return
  world = await startConsoleWorld()
  const { organizations, members } = world.h.services
  const ent = await organizations.bootstrap({
    orgName: 'enterprise',
    email: ENTERPRISE_OWNER,
    tier: 'enterprise',
    password: PASSWORD,
  })
  const entMember = await members.add({ orgId: ent.orgId, email: ENTERPRISE_MEMBER, role: 'member' })
  enterprise = { orgId: ent.orgId, session: ent.sessionToken, memberId: entMember.userId }
  const moving = await organizations.bootstrap({ orgName: 'moving', email: TRANSFER_OWNER, tier: 'growth', password: PASSWORD })
  const admin = await members.add({ orgId: moving.orgId, email: TRANSFER_ADMIN, role: 'admin', password: PASSWORD })
  transfer = { orgId: moving.orgId, adminId: admin.userId, adminSession: admin.sessionToken }
})
afterAll(async () => {
  if (browserAvailable) await world.close()
})

async function read<T>(path: string, token = world.ownerSession): Promise<T> {
  const response = await world.h.request('GET', path, { token })
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: T }).data
}
const membersOf = (orgId: string, token?: string) => read<Listed[]>(`/v1/organization/${orgId}/members`, token)
const status = (page: Page, text: string) => page.getByRole('status').filter({ hasText: text }).waitFor()

describe.skipIf(!browserAvailable)('the people pages, in chromium', () => {
  test(
    'the Owner adds a member, whose invite token is shown once, changes their role and removes them',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Members')
      await page.getByRole('cell', { name: `${OWNER_EMAIL} (you)` }).waitFor()
      await page.getByLabel('Email').fill('newcomer@console.test')
      await page.getByRole('form', { name: 'Add a member' }).getByLabel('Role').selectOption('member')
      await page.getByRole('button', { name: 'Add member' }).click()
      const secret = page.locator('[data-secret]')
      await secret.waitFor()
      expect(await secret.textContent()).toStartWith('gw-inv-')
      expect(await page.getByRole('status').textContent()).toContain('POST /v1/auth/accept-invite')
      const added = (await membersOf(world.orgId)).find((m) => m.email === 'newcomer@console.test')
      expect(added?.role).toBe('member')
      await shot(page, 'members')

      await page.getByLabel('Role of newcomer@console.test', { exact: true }).selectOption('admin')
      await page.getByRole('button', { name: 'Save the role of newcomer@console.test' }).click()
      await status(page, 'newcomer@console.test is now Admin.')
      expect((await membersOf(world.orgId)).find((m) => m.email === 'newcomer@console.test')?.role).toBe('admin')
      // The Owner's row and one's own offer no role change and no removal.
      expect(await page.getByLabel(`Role of ${OWNER_EMAIL}`, { exact: true }).count()).toBe(0)
      expect(await page.getByRole('button', { name: `Remove ${OWNER_EMAIL}` }).count()).toBe(0)

      // Shown once: a reload has no token to show.
      await page.reload()
      await page.getByRole('cell', { name: 'newcomer@console.test', exact: true }).waitFor()
      expect(await page.locator('[data-secret]').count()).toBe(0)

      await page.getByRole('button', { name: 'Remove newcomer@console.test' }).click()
      await page.getByRole('cell', { name: 'newcomer@console.test', exact: true }).waitFor({ state: 'detached' })
      expect((await membersOf(world.orgId)).map((m) => m.email)).toEqual([OWNER_EMAIL, MEMBER_EMAIL])
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    "a refusal shows the API's message; on Growth the Roles page says custom roles need Enterprise",
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Members')
      await page.getByLabel('Email').fill(MEMBER_EMAIL)
      await page.getByRole('button', { name: 'Add member' }).click()
      const alert = page.getByRole('alert')
      await alert.waitFor()
      expect(await alert.textContent()).toBe(`${MEMBER_EMAIL} is already a member of this organization`)
      expect((await membersOf(world.orgId)).filter((m) => m.email === MEMBER_EMAIL)).toHaveLength(1)

      await page.getByRole('link', { name: 'Roles', exact: true }).click()
      await page.getByText('Custom roles need the enterprise tier; this organization is on growth.').waitFor()
      expect(await page.getByRole('button', { name: 'Create role' }).count()).toBe(0)
      // The built-in roles are listed, read-only.
      await page.getByRole('cell', { name: /^Admin/ }).waitFor()
      expect(await page.getByRole('button', { name: /^(Edit|Archive)/ }).count()).toBe(0)
      // The browser logs the refused request itself; nothing else may go wrong.
      const unexpected = errors.filter((error) => !error.includes('status of 409'))
      expect(unexpected, unexpected.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'on Enterprise the Owner creates a custom role with two permissions, edits it, gives it to a member and archives it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Roles', ENTERPRISE_OWNER)
      const form = page.getByRole('form', { name: 'New custom role' })
      await form.getByLabel('Name').fill('Analyst')
      await form.getByLabel('traffic.read').check()
      await form.getByLabel('audit.read').check()
      await page.getByRole('button', { name: 'Create role' }).click()
      await page.getByRole('button', { name: 'Archive Analyst' }).waitFor()
      const roles = await read<Role[]>(`/v1/organization/${enterprise.orgId}/roles`, enterprise.session)
      const analyst = roles.find((role) => role.name === 'Analyst')
      expect(analyst?.permissions).toEqual(['org.read', 'traffic.read', 'audit.read'])
      await shot(page, 'roles')
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'roles-narrow')
      await page.setViewportSize({ width: 1280, height: 800 })

      await page.getByRole('button', { name: 'Edit Analyst' }).click()
      const edit = page.getByRole('form', { name: 'Edit Analyst' })
      await edit.getByLabel('Name').fill('Auditor')
      await edit.getByLabel('traffic.read').uncheck()
      await edit.getByRole('button', { name: 'Save role' }).click()
      await page.getByRole('button', { name: 'Archive Auditor' }).waitFor()
      const edited = (await read<Role[]>(`/v1/organization/${enterprise.orgId}/roles`, enterprise.session)).find(
        (role) => role.id === analyst?.id,
      )
      expect(edited).toMatchObject({ name: 'Auditor', permissions: ['org.read', 'audit.read'] })

      await page.getByRole('link', { name: 'Members', exact: true }).click()
      await page.getByLabel(`Role of ${ENTERPRISE_MEMBER}`, { exact: true }).selectOption({ label: 'Auditor' })
      await page.getByRole('button', { name: `Save the role of ${ENTERPRISE_MEMBER}` }).click()
      await status(page, `${ENTERPRISE_MEMBER} is now Auditor.`)
      const held = (await membersOf(enterprise.orgId, enterprise.session)).find((m) => m.userId === enterprise.memberId)
      expect(held?.role).toBe(analyst?.id as string)

      await page.getByRole('link', { name: 'Roles', exact: true }).click()
      await page.getByRole('button', { name: 'Archive Auditor' }).click()
      await page.getByText(/^archived /).waitFor()
      const archived = (await read<Role[]>(`/v1/organization/${enterprise.orgId}/roles`, enterprise.session)).find(
        (role) => role.id === analyst?.id,
      )
      expect(archived?.archivedAt).not.toBeNull()
      // An archived role can no longer be given, and its holder is shown falling back to Member.
      await page.getByRole('link', { name: 'Members', exact: true }).click()
      const select = page.getByLabel(`Role of ${ENTERPRISE_MEMBER}`, { exact: true })
      await select.waitFor()
      expect(await select.locator('option:not([disabled])').allTextContents()).toEqual(['Member', 'Admin'])
      expect(await select.locator('option[disabled]').textContent()).toBe('Auditor (archived: acts as Member)')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'the Owner creates a team, adds a member, renames it, sets who sees teams and deletes it',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Teams')
      await page.getByText('No teams yet.').waitFor()
      await page.getByLabel('Team name').fill('Platform')
      await page.getByRole('button', { name: 'Create team' }).click()
      await page.getByRole('heading', { name: 'Platform' }).waitFor()
      const [team] = await read<Array<{ id: string; name: string }>>('/v1/team')
      expect(team?.name).toBe('Platform')

      await page.getByLabel('Add a member to Platform').selectOption({ label: MEMBER_EMAIL })
      await page.getByRole('button', { name: 'Add to Platform' }).click()
      await page.getByRole('button', { name: `Remove ${MEMBER_EMAIL} from Platform` }).waitFor()
      const teamMembers = await read<Array<{ userId: string }>>(`/v1/team/${team?.id}/members`)
      expect(teamMembers.map((m) => m.userId)).toEqual([world.memberId])

      await page.getByRole('button', { name: 'Rename Platform' }).click()
      await page.getByLabel('New name for Platform').fill('Infrastructure')
      await page.getByRole('button', { name: 'Save name' }).click()
      await page.getByRole('heading', { name: 'Infrastructure' }).waitFor()
      expect((await read<Array<{ name: string }>>('/v1/team')).map((t) => t.name)).toEqual(['Infrastructure'])

      await page.getByLabel('Who sees the teams').selectOption('members')
      await page.getByRole('button', { name: 'Save visibility' }).click()
      await page.getByRole('heading', { name: 'Infrastructure' }).waitFor()
      await waitFor(async () => (await read<{ mode: string }>('/v1/team/settings/visibility')).mode === 'members')
      await shot(page, 'teams')
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'teams-narrow')
      await page.setViewportSize({ width: 1280, height: 800 })

      await page.getByRole('button', { name: 'Delete Infrastructure' }).click()
      await page.getByText('No teams yet.').waitFor()
      expect(await read<unknown[]>('/v1/team')).toEqual([])
      await world.h.request('PUT', '/v1/team/settings/visibility', { token: world.ownerSession, body: { mode: 'all' } })
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )

  test(
    'a Member sees the members, roles and teams with no action that would change them',
    async () => {
      const created = await world.h.request('POST', '/v1/team', { token: world.ownerSession, body: { name: 'Readers' } })
      expect(created.status).toBe(201)
      const teamId = ((await created.json()) as { data: { id: string } }).data.id
      const joined = await world.h.request('POST', `/v1/team/${teamId}/member`, {
        token: world.ownerSession,
        body: { userId: world.memberId },
      })
      expect(joined.status).toBe(200)
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Members', MEMBER_EMAIL)
      await page.getByRole('cell', { name: OWNER_EMAIL }).waitFor()
      expect(await page.getByRole('cell', { name: 'Owner', exact: true }).count()).toBe(1)
      expect(await page.locator('main :is(button, input, select)').count()).toBe(0)

      await page.getByRole('link', { name: 'Roles', exact: true }).click()
      await page
        .getByRole('cell', { name: /^Member/ })
        .first()
        .waitFor()
      expect(await page.locator('main :is(button, input, select)').count()).toBe(0)

      await page.getByRole('link', { name: 'Teams', exact: true }).click()
      await page.getByRole('list', { name: 'Members of Readers' }).getByText(MEMBER_EMAIL).waitFor()
      await page.getByText('Visibility: everyone sees every team.').waitFor()
      expect(await page.locator('main :is(button, input, select)').count()).toBe(0)
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
      await world.h.request('DELETE', `/v1/team/${teamId}`, { token: world.ownerSession })
    },
    BROWSER_TEST_MS,
  )

  test(
    'the Owner transfers ownership to an Admin after a confirmation; the API then names the new Owner',
    async () => {
      const { page, errors } = await openPage(world.browser)
      await openConsolePage(page, world.server.url, 'Members', TRANSFER_OWNER)
      await page.getByRole('button', { name: `Transfer ownership to ${TRANSFER_ADMIN}` }).click()
      const confirm = page.getByRole('button', { name: `Confirm transfer to ${TRANSFER_ADMIN}` })
      await confirm.waitFor()
      // Nothing moves before the confirmation.
      expect((await membersOf(transfer.orgId, transfer.adminSession))[0]?.email).toBe(TRANSFER_OWNER)
      await page.setViewportSize({ width: 420, height: 900 })
      await shot(page, 'members-narrow')
      await page.setViewportSize({ width: 1280, height: 800 })
      await confirm.click()
      await status(page, `${TRANSFER_ADMIN} is now the Owner; you are an Admin.`)
      const after = await membersOf(transfer.orgId, transfer.adminSession)
      expect(after.map((m) => [m.email, m.role])).toEqual([
        [TRANSFER_ADMIN, 'owner'],
        [TRANSFER_OWNER, 'admin'],
      ])
      expect(after[0]?.userId).toBe(transfer.adminId)
      // The permissions are read again: the page offers no second transfer, and the former Owner is
      // not offered a change of their own role.
      await page
        .getByRole('button', { name: /^Transfer ownership/ })
        .first()
        .waitFor({ state: 'detached' })
      expect(await page.getByLabel(`Role of ${TRANSFER_OWNER}`, { exact: true }).count()).toBe(0)
      await page.emulateMedia({ colorScheme: 'dark' })
      await shot(page, 'members-dark')
      expect(errors, errors.join('\n')).toEqual([])
      await page.close()
    },
    BROWSER_TEST_MS,
  )
})

/** Polls a condition the page's last request brings about (the page may still be waiting for its answer). */
async function waitFor(condition: () => Promise<boolean>, ms = 5_000): Promise<void> {
  const until = Date.now() + ms
  while (!(await condition())) {
    if (Date.now() > until) throw new Error('the condition never held')
    await Bun.sleep(50)
  }
}
