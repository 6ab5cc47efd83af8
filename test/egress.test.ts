import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { deliveryOf, matchesProperties, sampled } from '../src/egress/events'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import type { Webhook } from '../src/store/repositories/webhooks'
import { createHarness, type Harness } from './support/harness'

describe('the egress policy', () => {
  const policy = new EgressPolicy({
    enabled: true,
    resolve: async (host) => (host === 'mapped.test' ? ['::ffff:127.0.0.1'] : ['93.184.215.14']),
  })

  test('internal addresses of every kind are refused as written and as resolved', async () => {
    for (const address of [
      '127.0.0.1',
      '10.0.0.1',
      '172.16.5.4',
      '192.168.1.1',
      '169.254.169.254',
      '100.64.0.1',
      '0.0.0.0',
      '[::1]',
      '[fd12::1]',
      '[fe80::1]',
      '[::ffff:10.0.0.1]',
    ])
      expect(policy.refusal(`https://${address}/x`)).toContain('private, loopback or link-local')
    expect(policy.refusal('https://93.184.215.14/x')).toBeUndefined()
    await expect(policy.pin('https://mapped.test/x')).rejects.toThrow('resolves to ::ffff:127.0.0.1')
    expect((await policy.pin('https://public.test/x')).url).toBe('https://93.184.215.14/x')
  })

  test('names of this machine are refused before any lookup; so is every spelling of loopback', () => {
    for (const host of [
      'localhost',
      'LOCALHOST',
      'localhost.',
      'api.localhost',
      '127.1',
      '2130706433',
      '0177.0.0.1',
      '0x7f.1',
      '[::127.0.0.1]',
    ])
      expect(policy.refusal(`https://${host}/x`)).toBeDefined()
    expect(
      new EgressPolicy({ enabled: true, allow: parseAllowList('localhost') }).refusal('http://localhost:8000/x'),
    ).toBeUndefined()
  })

  test('with outgoing calls off, no connection is pinned, whatever the address', async () => {
    const off = new EgressPolicy({ enabled: false, resolve: async () => ['93.184.215.14'] })
    await expect(off.pin('https://public.test/x')).rejects.toThrow('GW_EGRESS=off')
  })

  test("a name's checked addresses are reused for half a minute: the connection still goes to a checked address", async () => {
    let now = 0
    let lookups = 0
    const answers = [['93.184.215.14'], ['127.0.0.1']]
    const cached = new EgressPolicy({
      enabled: true,
      now: () => now,
      resolve: async () => answers[Math.min(lookups++, 1)] as string[],
    })
    expect((await cached.pin('https://rebinding.test/a')).url).toBe('https://93.184.215.14/a')
    now = 29_000
    expect((await cached.pin('https://rebinding.test/b')).url).toBe('https://93.184.215.14/b')
    expect(lookups).toBe(1)
    now = 31_000
    await expect(cached.pin('https://rebinding.test/c')).rejects.toThrow('resolves to 127.0.0.1')
    expect(lookups).toBe(2)
  })

  test('a name that does not resolve, or not in time, is refused with the reason', async () => {
    const failing = new EgressPolicy({
      enabled: true,
      resolve: async () => {
        throw new Error('getaddrinfo ENOTFOUND')
      },
    })
    await expect(failing.pin('https://nowhere.test/x')).rejects.toThrow('nowhere.test does not resolve: getaddrinfo ENOTFOUND')
  })

  test('the allow list takes host names, addresses and CIDRs, and nothing else', () => {
    expect(parseAllowList('hooks.internal, 10.0.0.0/8 ,fd00::/8,192.168.1.7')).toBeDefined()
    for (const bad of ['10.0.0.0/33', 'fd00::/129', 'a b', '10.0.0.0/x', 'http://x']) expect(parseAllowList(bad)).toBeUndefined()
    const allow = new EgressPolicy({ enabled: true, allow: parseAllowList('192.168.1.7') })
    expect(allow.refusal('http://192.168.1.7:8080/x')).toBeUndefined()
    expect(allow.refusal('https://192.168.1.8/x')).toContain('private')
  })
})

describe('which events a webhook takes', () => {
  test('sampling is decided per event, the same way every time, near the rate asked', () => {
    const hook = { id: 'w1', sampleRate: 30 }
    const keys = Array.from({ length: 2_000 }, (_, i) => `request-${i}`)
    const taken = keys.filter((key) => sampled(hook, key)).length
    expect(taken).toBeGreaterThan(2_000 * 0.25)
    expect(taken).toBeLessThan(2_000 * 0.35)
    expect(keys.filter((key) => sampled(hook, key)).length).toBe(taken)
    expect(keys.some((key) => sampled({ id: 'w1', sampleRate: 0 }, key))).toBe(false)
    expect(keys.every((key) => sampled({ id: 'w1', sampleRate: 100 }, key))).toBe(true)
  })

  test('every property filter must hold', () => {
    const hook = { propertyFilters: { env: 'prod', team: 'a' } }
    expect(matchesProperties(hook, { env: 'prod', team: 'a', extra: 'x' })).toBe(true)
    expect(matchesProperties(hook, { env: 'prod' })).toBe(false)
    expect(matchesProperties(hook, null)).toBe(false)
    expect(matchesProperties({ propertyFilters: {} }, null)).toBe(true)
  })
})

describe('the outbox is bounded', () => {
  let h: Harness
  beforeAll(async () => {
    h = await createHarness()
  })
  afterAll(() => h.close())

  test('the oldest request.completed events beyond the cap are dropped and counted; budget events never are', async () => {
    const org = await h.org()
    const webhook: Webhook = {
      id: 'hook-bounded',
      orgId: org.orgId,
      destination: 'https://hooks.example.com/x',
      events: ['request.completed', 'budget.breached'],
      sampleRate: 100,
      propertyFilters: {},
      includeData: false,
      sealedSecret: 'sealed',
      secretPrefix: 'whsec_…',
      disabledAt: null,
      droppedEvents: 0,
      createdAt: new Date(),
    }
    await h.store.org(org.orgId).webhooks.add(webhook)
    const at = (i: number) => new Date(Date.UTC(2026, 0, 1, 0, i))
    const requests = Array.from({ length: 8 }, (_, i) => deliveryOf(webhook, 'request.completed', { n: i }, at(i)))
    const budgets = Array.from({ length: 8 }, (_, i) => deliveryOf(webhook, 'budget.breached', { n: i }, at(i)))
    await h.store.deliveries.enqueue([...requests, ...budgets])
    expect(await h.store.deliveries.trim(5, 'request.completed')).toBe(3)
    const left = await h.store.org(org.orgId).webhooks.deliveries(100, webhook.id)
    expect(left.filter((d) => d.event === 'budget.breached')).toHaveLength(8)
    expect(
      left
        .filter((d) => d.event === 'request.completed')
        .map((d) => (JSON.parse(d.payload) as { data: { n: number } }).data.n)
        .sort(),
    ).toEqual([3, 4, 5, 6, 7])
    expect((await h.store.org(org.orgId).webhooks.get(webhook.id))?.droppedEvents).toBe(3)
  })
})
