import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Chains, DEFAULT_FALLBACK_STATUSES, type FallbackChain } from '../src/directory/chains'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/**
 * The fallback-chains management API (spec 4.6 `gateway_config.write`, and gw's own list with
 * `org.read`) and the gateway's reader of it, on every dialect this run reaches.
 */

interface ChainView {
  id: string
  name: string
  match: { model: string }
  steps: Array<{ model: string; provider?: string; providerKeyId?: string; timeoutMs?: number }>
  on: { statusCodes: number[]; defaultStatusCodes: boolean; timeout: boolean; networkError: boolean }
  retry: { attempts: number; minDelayMs: number; maxDelayMs: number } | null
  createdAt: string
  updatedAt: string
}
interface Failure {
  code: string
  message: string
}

const PATH = '/v1/gateway/fallback-chains'
const DEFAULT_ON = { statusCodes: [...DEFAULT_FALLBACK_STATUSES], defaultStatusCodes: true, timeout: true, networkError: true }
const chainBody = (alias = 'smart', extra: Record<string, unknown> = {}) => ({
  name: `chain for ${alias}`,
  match: { model: alias },
  steps: [{ model: 'gpt-4o' }, { model: 'claude-sonnet-4-5', timeoutMs: 5_000 }],
  ...extra,
})

const data = async <T>(response: Response, status = 200): Promise<T> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { data: T }).data
}
const failure = async (response: Response, status: number): Promise<Failure> => {
  const text = await response.text()
  expect(`${response.status} ${text}`).toStartWith(`${status} `)
  return (JSON.parse(text) as { error: Failure }).error
}

describe.each(DIALECTS)('fallback chains on %s', (dialect) => {
  let h: Harness
  let clock = Date.parse('2026-06-01T12:00:00.000Z')
  beforeAll(async () => {
    h = await createHarness({ dialect, now: () => clock })
  })
  afterAll(() => h.close())

  const create = (org: Org, body: unknown, token = org.ownerSession) => h.request('POST', PATH, { token, body })
  const replace = (org: Org, id: string, body: unknown, token = org.ownerSession) =>
    h.request('PUT', `${PATH}/${id}`, { token, body })
  const remove = (org: Org, id: string, token = org.ownerSession) => h.request('DELETE', `${PATH}/${id}`, { token })
  const list = async (org: Org, token = org.ownerSession) => data<ChainView[]>(await h.request('GET', PATH, { token }))
  const rows = (org: Org) => h.store.org(org.orgId).fallbackChains.list()
  const providerKey = async (org: Org, provider: 'openai' | 'anthropic') =>
    data<{ id: string }>(
      await h.request('POST', '/v1/api-keys/provider-key', {
        token: org.ownerSession,
        body: { provider, name: `${provider} key`, secret: `sk-${provider}-0123456789abcdef` },
      }),
      201,
    )

  describe('the happy path', () => {
    test('create answers 201 with the defaults shown, stores only what was given, and lists it', async () => {
      const org = await h.org()
      const created = await data<ChainView>(await create(org, chainBody()), 201)
      expect(created).toEqual({
        id: expect.any(String),
        name: 'chain for smart',
        match: { model: 'smart' },
        steps: [{ model: 'gpt-4o' }, { model: 'claude-sonnet-4-5', timeoutMs: 5_000 }],
        on: DEFAULT_ON,
        retry: null,
        createdAt: new Date(clock).toISOString(),
        updatedAt: new Date(clock).toISOString(),
      })
      // Absent triggers are stored as null, so the defaults can change under them.
      const [row] = await rows(org)
      expect(row).toMatchObject({ id: created.id, matchModel: 'smart', triggers: null, retry: null })
      expect(await list(org)).toEqual([created])
    })

    test('given triggers and retry are shown as given, the defaults filling in what they leave out', async () => {
      const org = await h.org()
      const created = await data<ChainView>(
        await create(
          org,
          chainBody('smart', {
            name: '  padded  ',
            steps: [
              { model: 'gpt-4o', provider: 'openai' },
              { model: 'my-model', provider: 'anthropic' },
              { model: 'openai/llama' },
            ],
            on: { statusCodes: [429, 503], networkError: false },
            retry: { attempts: 2, minDelayMs: 100, maxDelayMs: 100 },
          }),
        ),
        201,
      )
      expect(created).toMatchObject({
        name: 'padded',
        steps: [{ model: 'gpt-4o', provider: 'openai' }, { model: 'my-model', provider: 'anthropic' }, { model: 'openai/llama' }],
        on: { statusCodes: [429, 503], defaultStatusCodes: false, timeout: true, networkError: false },
        retry: { attempts: 2, minDelayMs: 100, maxDelayMs: 100 },
      })
      const [row] = await rows(org)
      expect(row?.triggers).toEqual({ statusCodes: [429, 503], networkError: false })
    })

    test('PUT replaces the whole chain: what the body leaves out goes back to the defaults', async () => {
      const org = await h.org()
      const created = await data<ChainView>(
        await create(org, chainBody('smart', { on: { timeout: false }, retry: { attempts: 1, minDelayMs: 0, maxDelayMs: 10 } })),
        201,
      )
      const createdAt = clock
      clock += 60_000
      const replaced = await data<ChainView>(
        await replace(org, created.id, { name: 'renamed', match: { model: 'smarter' }, steps: [{ model: 'gpt-4o-mini' }] }),
      )
      expect(replaced).toEqual({
        id: created.id,
        name: 'renamed',
        match: { model: 'smarter' },
        steps: [{ model: 'gpt-4o-mini' }],
        on: DEFAULT_ON,
        retry: null,
        createdAt: new Date(createdAt).toISOString(),
        updatedAt: new Date(clock).toISOString(),
      })
      expect(await list(org)).toEqual([replaced])
      // The same alias again is no clash with itself.
      expect((await replace(org, created.id, chainBody('smarter'))).status).toBe(200)
    })

    test('DELETE answers {id, deleted: true}, and the chain is gone', async () => {
      const org = await h.org()
      const created = await data<ChainView>(await create(org, chainBody()), 201)
      expect(await data(await remove(org, created.id))).toEqual({ id: created.id, deleted: true })
      expect(await list(org)).toEqual([])
      expect(await rows(org)).toEqual([])
      await failure(await remove(org, created.id), 404)
    })

    test("a step may name one of the organisation's provider keys of its provider", async () => {
      const org = await h.org()
      const openai = await providerKey(org, 'openai')
      const anthropic = await providerKey(org, 'anthropic')
      const created = await data<ChainView>(
        await create(
          org,
          chainBody('smart', {
            steps: [
              { model: 'gpt-4o', providerKeyId: openai.id },
              { model: 'claude-haiku-4-5', providerKeyId: anthropic.id },
              { model: 'self-hosted', provider: 'openai', providerKeyId: openai.id },
            ],
          }),
        ),
        201,
      )
      expect(created.steps.map((s) => s.providerKeyId)).toEqual([openai.id, anthropic.id, openai.id])
    })
  })

  describe('bad input: 400 naming the field, nothing stored', () => {
    const steps = (...list: unknown[]) => ({ steps: list })
    const cases: Array<[string, Record<string, unknown>, string]> = [
      ['an empty name', { name: '' }, 'name'],
      ['a blank name', { name: '   ' }, 'name'],
      ['a name of 201 characters', { name: 'n'.repeat(201) }, 'name'],
      ['no match', { match: undefined }, 'match'],
      ['an empty match.model', { match: { model: '' } }, 'match.model'],
      ['a match.model of 201 characters', { match: { model: 'm'.repeat(201) } }, 'match.model'],
      ['a control character in match.model', { match: { model: 'smart\u0007' } }, 'match.model'],
      ['a line break in match.model', { match: { model: 'smart\nmodel' } }, 'match.model'],
      ['no steps', steps(), 'steps'],
      ['11 steps', steps(...Array.from({ length: 11 }, () => ({ model: 'gpt-4o' }))), 'steps'],
      ['a step without a model', steps({ provider: 'openai' }), 'model'],
      ['an empty step model', steps({ model: '' }), 'model'],
      ['a step model of 201 characters', steps({ model: `gpt-${'4'.repeat(197)}` }), 'model'],
      ['a model gw cannot route', steps({ model: 'gpt-4o' }, { model: 'no-such-model' }), 'steps[1].model'],
      ['an unknown provider', steps({ model: 'gemini-pro', provider: 'google' }), 'provider'],
      ['a timeout under 100 ms', steps({ model: 'gpt-4o', timeoutMs: 99 }), 'timeoutMs'],
      ['a timeout over 600 s', steps({ model: 'gpt-4o', timeoutMs: 600_001 }), 'timeoutMs'],
      ['a fractional timeout', steps({ model: 'gpt-4o', timeoutMs: 150.5 }), 'timeoutMs'],
      ['an unknown step field', steps({ model: 'gpt-4o', weight: 2 }), 'steps'],
      ['empty statusCodes', { on: { statusCodes: [] } }, 'on.statusCodes'],
      ['a status under 400', { on: { statusCodes: [399] } }, 'on.statusCodes'],
      ['a status over 599', { on: { statusCodes: [600] } }, 'on.statusCodes'],
      ['a repeated status', { on: { statusCodes: [429, 429] } }, 'on.statusCodes'],
      ['51 statuses', { on: { statusCodes: Array.from({ length: 51 }, (_, i) => 450 + i) } }, 'on.statusCodes'],
      ['a fractional status', { on: { statusCodes: [429.5] } }, 'on.statusCodes'],
      ['status 400', { on: { statusCodes: [429, 400] } }, 'on.statusCodes must not hold 400'],
      ['status 401', { on: { statusCodes: [401] } }, 'on.statusCodes must not hold 401'],
      ['status 403', { on: { statusCodes: [403] } }, 'on.statusCodes must not hold 403'],
      ['status 422', { on: { statusCodes: [422] } }, 'on.statusCodes must not hold 422'],
      ['a timeout trigger that is no boolean', { on: { timeout: 'yes' } }, 'on.timeout'],
      ['a networkError trigger that is no boolean', { on: { networkError: 1 } }, 'on.networkError'],
      ['an unknown trigger', { on: { always: true } }, 'on'],
      ['six retries', { retry: { attempts: 6, minDelayMs: 0, maxDelayMs: 0 } }, 'retry.attempts'],
      ['negative retries', { retry: { attempts: -1, minDelayMs: 0, maxDelayMs: 0 } }, 'retry.attempts'],
      ['a minDelayMs over 10 s', { retry: { attempts: 1, minDelayMs: 10_001, maxDelayMs: 20_000 } }, 'retry.minDelayMs'],
      ['a maxDelayMs over 30 s', { retry: { attempts: 1, minDelayMs: 0, maxDelayMs: 30_001 } }, 'retry.maxDelayMs'],
      ['a maxDelayMs under minDelayMs', { retry: { attempts: 1, minDelayMs: 500, maxDelayMs: 499 } }, 'retry.maxDelayMs'],
      ['a retry without its delays', { retry: { attempts: 1 } }, 'retry'],
      ['an unknown field', { priority: 1 }, 'priority'],
    ]
    for (const [what, change, field] of cases) {
      test(what, async () => {
        const org = await h.org()
        const body = { ...chainBody(), ...change }
        const refused = await failure(await create(org, body), 400)
        expect(refused.message).toContain(field)
        expect(await rows(org)).toEqual([])
        // PUT takes the same body, and leaves the chain as it was.
        const kept = await data<ChainView>(await create(org, chainBody('kept')), 201)
        await failure(await replace(org, kept.id, body), 400)
        expect(await list(org)).toEqual([kept])
      })
    }

    test('a step naming a provider key the organisation does not have, or one of another provider', async () => {
      const org = await h.org()
      const other = await h.org()
      const theirs = await providerKey(other, 'openai')
      const anthropic = await providerKey(org, 'anthropic')
      const unknown = await failure(
        await create(org, chainBody('smart', { steps: [{ model: 'gpt-4o', providerKeyId: 'no-such-key' }] })),
        400,
      )
      expect(unknown.message).toContain('steps[0].providerKeyId: no provider key no-such-key in this organization')
      // Another organisation's key is as unknown as a made-up one.
      const foreign = await failure(
        await create(org, chainBody('smart', { steps: [{ model: 'gpt-4o', providerKeyId: theirs.id }] })),
        400,
      )
      expect(foreign.message).toContain(`no provider key ${theirs.id} in this organization`)
      const mismatched = await failure(
        await create(org, chainBody('smart', { steps: [{ model: 'gpt-4o' }, { model: 'gpt-4o', providerKeyId: anthropic.id }] })),
        400,
      )
      expect(mismatched.message).toContain('steps[1].providerKeyId')
      expect(mismatched.message).toContain('anthropic')
      // The provider a step names is the one its key must be of.
      await failure(
        await create(
          org,
          chainBody('smart', { steps: [{ model: 'claude-haiku-4-5', provider: 'openai', providerKeyId: anthropic.id }] }),
        ),
        400,
      )
      expect(await rows(org)).toEqual([])
    })
  })

  describe('one chain per alias', () => {
    test('a second chain for the same match.model is 409, on POST and on a PUT that takes it', async () => {
      const org = await h.org()
      const first = await data<ChainView>(await create(org, chainBody('smart')), 201)
      const clash = await failure(await create(org, chainBody('smart', { name: 'again' })), 409)
      expect(clash.code).toBe('conflict')
      expect(clash.message).toContain('"smart"')
      // The list is in the order of creation.
      clock += 1_000
      const second = await data<ChainView>(await create(org, chainBody('fast')), 201)
      const taken = await failure(await replace(org, second.id, chainBody('smart')), 409)
      expect(taken.message).toContain('"smart"')
      expect(await list(org)).toEqual([first, second])
    })

    test('another organisation may use the same alias', async () => {
      const org = await h.org()
      const other = await h.org()
      await data(await create(org, chainBody('smart')), 201)
      await data(await create(other, chainBody('smart')), 201)
    })
  })

  describe('security', () => {
    test("another organisation's chain is 404 on PUT and DELETE, unchanged, and absent from its list", async () => {
      const org = await h.org()
      const other = await h.org()
      const chain = await data<ChainView>(await create(org, chainBody('smart')), 201)
      await failure(await replace(other, chain.id, chainBody('taken-over')), 404)
      await failure(await remove(other, chain.id), 404)
      // Even a body that would be refused says nothing of the chain: unknown is 404 first.
      await failure(await replace(other, chain.id, { ...chainBody(), steps: [{ model: 'no-such-model' }] }), 404)
      expect(await list(other)).toEqual([])
      expect(await list(org)).toEqual([chain])
      expect(await h.store.org(other.orgId).fallbackChains.get(chain.id)).toBeUndefined()
    })

    test('an unknown chain id is 404', async () => {
      const org = await h.org()
      await failure(await replace(org, 'no-such-chain', chainBody()), 404)
      await failure(await remove(org, 'no-such-chain'), 404)
    })

    // Custom roles are an Enterprise feature.
    test('without gateway_config.write writes are 403 and change nothing; org.read lists', async () => {
      const org = await h.org('enterprise')
      const chain = await data<ChainView>(await create(org, chainBody('smart')), 201)
      const member = await h.member(org.orgId, 'member')
      const role = await data<{ id: string }>(
        await h.request('POST', `/v1/organization/${org.orgId}/roles`, {
          token: org.ownerSession,
          body: { name: 'spender', permissions: ['org.read', 'spend_controls.write'] },
        }),
        201,
      )
      const spender = await h.member(org.orgId, role.id)
      for (const token of [member.sessionToken, org.apiKey, spender.sessionToken]) {
        await failure(await create(org, chainBody('other'), token), 403)
        await failure(await replace(org, chain.id, chainBody('other'), token), 403)
        await failure(await remove(org, chain.id, token), 403)
        expect(await list(org, token)).toEqual([chain])
      }
      expect(await list(org)).toEqual([chain])
    })

    test('a role with gateway_config.write may write; an Admin may too', async () => {
      const org = await h.org('enterprise')
      const role = await data<{ id: string }>(
        await h.request('POST', `/v1/organization/${org.orgId}/roles`, {
          token: org.ownerSession,
          body: { name: 'router', permissions: ['gateway_config.write'] },
        }),
        201,
      )
      const router = await h.member(org.orgId, role.id)
      const admin = await h.member(org.orgId, 'admin')
      const chain = await data<ChainView>(await create(org, chainBody('smart'), router.sessionToken), 201)
      await data(await replace(org, chain.id, chainBody('smarter'), admin.sessionToken))
      await data(await remove(org, chain.id, router.sessionToken))
    })

    test('no credential is 401 on every route', async () => {
      const org = await h.org()
      const chain = await data<ChainView>(await create(org, chainBody('smart')), 201)
      expect((await h.request('GET', PATH)).status).toBe(401)
      expect((await h.request('POST', PATH, { body: chainBody('x') })).status).toBe(401)
      expect((await h.request('PUT', `${PATH}/${chain.id}`, { body: chainBody('x') })).status).toBe(401)
      expect((await h.request('DELETE', `${PATH}/${chain.id}`)).status).toBe(401)
      expect(await list(org)).toEqual([chain])
    })
  })

  test('every write is audited with the chain as its target, refusals too', async () => {
    const org = await h.org()
    const chain = await data<ChainView>(await create(org, chainBody('smart')), 201)
    await data(await replace(org, chain.id, chainBody('smarter')))
    await data(await remove(org, chain.id))
    await failure(await remove(org, chain.id), 404)
    const audit = h.store.org(org.orgId).audit
    const [created] = await audit.query({ action: `POST ${PATH}`, limit: 1 })
    expect(created).toMatchObject({ actorId: org.ownerId, outcome: 'success', target: chain.id })
    const [replaced] = await audit.query({ action: `PUT ${PATH}/:chainId`, limit: 1 })
    expect(replaced).toMatchObject({ actorId: org.ownerId, outcome: 'success', target: chain.id })
    const deletes = await audit.query({ action: `DELETE ${PATH}/:chainId`, limit: 10 })
    expect(deletes.map((e) => [e.outcome, e.target])).toEqual(
      expect.arrayContaining([
        ['success', chain.id],
        ['failure', chain.id],
      ]),
    )
    // A list is a read: no entry.
    const before = (await audit.list(1_000)).length
    await list(org)
    expect((await audit.list(1_000)).length).toBe(before)
  })

  describe("the gateway's reader (the directory's chainFor)", () => {
    test('sees a create, a replace and a delete at once on the instance that made them', async () => {
      const org = await h.org()
      const chains = h.services.directory.chains
      expect(await chains.chainFor(org.orgId, 'smart')).toBeUndefined()
      const created = await data<ChainView>(await create(org, chainBody('smart')), 201)
      expect(await chains.chainFor(org.orgId, 'smart')).toEqual({
        id: created.id,
        name: 'chain for smart',
        matchModel: 'smart',
        steps: [{ model: 'gpt-4o' }, { model: 'claude-sonnet-4-5', timeoutMs: 5_000 }],
        triggers: null,
        retry: null,
      })
      await data(await replace(org, created.id, chainBody('smarter', { on: { statusCodes: [429] } })))
      expect(await chains.chainFor(org.orgId, 'smart')).toBeUndefined()
      expect(await chains.chainFor(org.orgId, 'smarter')).toMatchObject({ id: created.id, triggers: { statusCodes: [429] } })
      await data(await remove(org, created.id))
      expect(await chains.chainFor(org.orgId, 'smarter')).toBeUndefined()
    })

    test("answers only the organisation's own chains", async () => {
      const org = await h.org()
      const other = await h.org()
      await data(await create(org, chainBody('smart')), 201)
      expect(await h.services.directory.chains.chainFor(other.orgId, 'smart')).toBeUndefined()
      expect(await h.services.directory.chains.chainFor(org.orgId, 'smart')).toBeDefined()
    })

    test('another instance reads its cache until the second lapses, then sees the change', async () => {
      const second = await createHarness({ database: h, now: () => clock })
      try {
        const org = await h.org()
        const theirs = second.services.directory.chains
        expect(await theirs.chainFor(org.orgId, 'smart')).toBeUndefined()
        const created = await data<ChainView>(await create(org, chainBody('smart')), 201)
        // Read once per second per organisation, not per call: the change is not seen yet.
        expect(await theirs.chainFor(org.orgId, 'smart')).toBeUndefined()
        clock += 1_001
        expect(await theirs.chainFor(org.orgId, 'smart')).toMatchObject({ id: created.id })
        await data(await remove(org, created.id))
        expect(await theirs.chainFor(org.orgId, 'smart')).toBeDefined()
        clock += 1_001
        expect(await theirs.chainFor(org.orgId, 'smart')).toBeUndefined()
      } finally {
        await second.close()
      }
    })

    test('concurrent calls of one organisation share one read', async () => {
      const org = await h.org()
      await data(await create(org, chainBody('smart')), 201)
      clock += 1_001
      const store = h.store
      let reads = 0
      const org$ = store.org.bind(store)
      const counting = Object.create(store) as typeof store
      counting.org = (orgId: string) => {
        const bound = org$(orgId)
        return new Proxy(bound, {
          get(target, name) {
            const value = Reflect.get(target, name)
            if (name !== 'fallbackChains') return value
            return {
              ...value,
              list: () => {
                reads += 1
                return (value as typeof bound.fallbackChains).list()
              },
            }
          },
        })
      }
      const service = new Chains(counting, () => clock)
      const found = await Promise.all(Array.from({ length: 20 }, () => service.chainFor(org.orgId, 'smart')))
      expect(found.every((chain) => chain?.matchModel === 'smart')).toBe(true)
      expect(await service.chainFor(org.orgId, 'other')).toBeUndefined()
      expect(reads).toBe(1)
      clock += 1_001
      await service.chainFor(org.orgId, 'smart')
      expect(reads).toBe(2)
    })

    test('once read, a chain is answered at once, without a promise; a forgotten organisation is read again', async () => {
      const org = await h.org()
      await data(await create(org, chainBody('smart')), 201)
      const service = new Chains(h.store, () => clock)
      const first = service.chainFor(org.orgId, 'smart')
      expect(first).toBeInstanceOf(Promise)
      expect((await first)?.matchModel).toBe('smart')
      const held = service.chainFor(org.orgId, 'smart')
      expect(held).not.toBeInstanceOf(Promise)
      expect((held as FallbackChain | undefined)?.matchModel).toBe('smart')
      expect(service.chainFor(org.orgId, 'other')).toBeUndefined()
      service.forget(org.orgId)
      expect(service.chainFor(org.orgId, 'smart')).toBeInstanceOf(Promise)
    })

    test('a read that fails is not kept: the next call reads again', async () => {
      const org = await h.org()
      let failing = true
      const store = Object.create(h.store) as typeof h.store
      store.org = (orgId: string) => {
        const bound = h.store.org(orgId)
        return new Proxy(bound, {
          get: (target, name) =>
            name === 'fallbackChains' && failing
              ? { list: () => Promise.reject(new Error('database down')) }
              : Reflect.get(target, name),
        })
      }
      const service = new Chains(store, () => clock)
      await expect(service.chainFor(org.orgId, 'smart') as Promise<unknown>).rejects.toThrow('database down')
      failing = false
      expect(await service.chainFor(org.orgId, 'smart')).toBeUndefined()
    })
  })
})
