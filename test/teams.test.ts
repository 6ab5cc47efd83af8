import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHarness, type Harness, type Org } from './support/harness'

let h: Harness
let org: Org
let member: { userId: string; sessionToken: string }
beforeAll(async () => {
  h = await createHarness()
  org = await h.org('growth')
  member = await h.member(org.orgId, 'member')
})
afterAll(() => h.close())

type TeamView = { id: string; name: string }
const json = async <T>(response: Response) => ((await response.json()) as { data: T }).data

async function team(name: string): Promise<TeamView> {
  const response = await h.request('POST', '/v1/team', { token: org.ownerSession, body: { name } })
  expect(response.status).toBe(201)
  return json<TeamView>(response)
}

describe('teams', () => {
  test('create, rename, add and remove members, list members, delete', async () => {
    const platform = await team('platform')
    expect((await h.request('POST', '/v1/team', { token: org.ownerSession, body: { name: 'platform' } })).status).toBe(409)
    const renamed = await json<TeamView>(
      await h.request('PUT', `/v1/team/${platform.id}`, { token: org.ownerSession, body: { name: 'infra' } }),
    )
    expect(renamed.name).toBe('infra')
    expect(
      (await h.request('POST', `/v1/team/${platform.id}/member`, { token: org.ownerSession, body: { userId: member.userId } }))
        .status,
    ).toBe(200)
    const members = await json<Array<{ userId: string }>>(
      await h.request('GET', `/v1/team/${platform.id}/members`, { token: member.sessionToken }),
    )
    expect(members.map((m) => m.userId)).toEqual([member.userId])
    expect(
      (await h.request('DELETE', `/v1/team/${platform.id}/member`, { token: org.ownerSession, body: { userId: member.userId } }))
        .status,
    ).toBe(200)
    expect(
      (await h.request('DELETE', `/v1/team/${platform.id}/member`, { token: org.ownerSession, body: { userId: member.userId } }))
        .status,
    ).toBe(404)
    expect((await h.request('DELETE', `/v1/team/${platform.id}`, { token: org.ownerSession })).status).toBe(200)
    expect((await h.request('GET', `/v1/team/${platform.id}/members`, { token: org.ownerSession })).status).toBe(404)
  })

  test('only members of the organisation join its teams; a Member cannot change teams', async () => {
    const t = await team('only-ours')
    const outsider = await h.org('growth')
    expect(
      (await h.request('POST', `/v1/team/${t.id}/member`, { token: org.ownerSession, body: { userId: outsider.ownerId } }))
        .status,
    ).toBe(404)
    expect((await h.request('POST', '/v1/team', { token: member.sessionToken, body: { name: 'mine' } })).status).toBe(403)
    expect((await h.request('PUT', `/v1/team/${t.id}`, { token: outsider.ownerSession, body: { name: 'stolen' } })).status).toBe(
      404,
    )
  })

  test('visibility: all by default; members: a person sees only their teams, managers still see all', async () => {
    const a = await team('vis-a')
    const b = await team('vis-b')
    await h.request('POST', `/v1/team/${a.id}/member`, { token: org.ownerSession, body: { userId: member.userId } })
    expect(
      await json<{ mode: string }>(await h.request('GET', '/v1/team/settings/visibility', { token: member.sessionToken })),
    ).toEqual({ mode: 'all' })
    const everyone = await json<TeamView[]>(await h.request('GET', '/v1/team', { token: member.sessionToken }))
    expect(everyone.map((t) => t.name)).toEqual(expect.arrayContaining(['vis-a', 'vis-b']))

    expect(
      (await h.request('PUT', '/v1/team/settings/visibility', { token: member.sessionToken, body: { mode: 'members' } })).status,
    ).toBe(403)
    expect(
      (await h.request('PUT', '/v1/team/settings/visibility', { token: org.ownerSession, body: { mode: 'secret' } })).status,
    ).toBe(400)
    expect(
      (await h.request('PUT', '/v1/team/settings/visibility', { token: org.ownerSession, body: { mode: 'members' } })).status,
    ).toBe(200)
    const own = await json<TeamView[]>(await h.request('GET', '/v1/team', { token: member.sessionToken }))
    expect(own.map((t) => t.name)).toEqual(['vis-a'])
    expect((await h.request('GET', `/v1/team/${b.id}/members`, { token: member.sessionToken })).status).toBe(404)
    const all = await json<TeamView[]>(await h.request('GET', '/v1/team', { token: org.ownerSession }))
    expect(all.map((t) => t.name)).toEqual(expect.arrayContaining(['vis-a', 'vis-b']))
  })
})
