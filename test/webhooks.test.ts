import { afterAll, afterEach, beforeAll, describe, expect, test } from 'bun:test'
import { Webhook as Verifier } from 'standardwebhooks'
import { EgressPolicy, parseAllowList } from '../src/egress/policy'
import { createLogger } from '../src/log'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

/**
 * Webhooks end to end: a receiver on loopback verifies every delivery with the `standardwebhooks`
 * package (never gw's own code), and answers as each test makes it.
 */
interface Received {
  id: string
  payload: { type: string; timestamp: string; data: Record<string, unknown> }
}

class Receiver {
  readonly received: Received[] = []
  readonly refused: string[] = []
  /** The statuses to answer, in turn; 200 once they run out. */
  answers: number[] = []
  secret = ''
  private readonly server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: async (request) => {
      const body = await request.text()
      const headers = Object.fromEntries(request.headers)
      const status = this.answers.shift() ?? 200
      if (status !== 200) return new Response('not now', { status })
      try {
        new Verifier(this.secret).verify(body, headers)
      } catch (error) {
        this.refused.push(String(error))
        return new Response('bad signature', { status: 400 })
      }
      this.received.push({ id: headers['webhook-id'] as string, payload: JSON.parse(body) })
      return new Response('ok')
    },
  })
  readonly url = `http://127.0.0.1:${this.server.port}/hook`
  stop() {
    this.server.stop(true)
  }
}

const LOOPBACK = parseAllowList('127.0.0.1') as NonNullable<ReturnType<typeof parseAllowList>>
/** Retries a tenth of a second apart, three of them. */
const QUICK = { schedule: [0.1, 0.1, 0.1], pollMs: 20, attemptTimeoutMs: 2_000 }

let fake: FakeProvider
const harnesses: Harness[] = []
const receivers: Receiver[] = []

beforeAll(async () => {
  fake = await startFakeProvider()
})
afterEach(async () => {
  for (const h of harnesses.splice(0)) {
    await h.services.deliverer.stop()
    await h.close()
  }
  for (const r of receivers.splice(0)) r.stop()
})
afterAll(() => fake.close())

async function world(options: Parameters<typeof createHarness>[0] = {}) {
  const h = await createHarness({
    providers: providersAt(fake),
    egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
    delivery: QUICK,
    ...options,
  })
  harnesses.push(h)
  const org = await h.org('growth')
  await h.services.organizations.addCredits(org.orgId, 10)
  const receiver = new Receiver()
  receivers.push(receiver)
  return { h, org, receiver }
}

const data = async <T>(response: Response): Promise<T> => ((await response.json()) as { data: T }).data
const errorOf = async (response: Response) => ((await response.json()) as { error: { code: string; message: string } }).error

async function createWebhook(h: Harness, org: Org, receiver: Receiver, body: Record<string, unknown> = {}) {
  const response = await h.request('POST', '/v1/webhooks', {
    token: org.ownerSession,
    body: { destination: receiver.url, events: ['request.completed'], ...body },
  })
  expect(response.status).toBe(201)
  const created = await data<{ id: string; secret: string; secretPrefix: string }>(response)
  receiver.secret = created.secret
  return created
}

async function call(h: Harness, org: Org, headers: Record<string, string> = {}, content = 'hi') {
  const response = await h.request('POST', '/v1/chat/completions', {
    token: org.apiKey,
    headers,
    body: { model: 'gpt-4o', messages: [{ role: 'user', content }] },
  })
  expect(response.status).toBe(200)
  await response.text()
  await h.requestLog.flush()
  return response.headers.get('gw-id') as string
}

/** Runs the deliverer until `done` holds (or fails after a few seconds). */
async function deliverUntil(h: Harness, done: () => boolean) {
  const until = Date.now() + 5_000
  while (!done()) {
    if (Date.now() > until) throw new Error('the deliveries never arrived')
    await h.services.deliverer.tick()
    await Bun.sleep(20)
  }
}

describe('webhooks: the routes', () => {
  test('the secret is shown once as whsec_, then only its prefix; bad input is 400 and changes nothing', async () => {
    const { h, org, receiver } = await world()
    const created = await createWebhook(h, org, receiver, { sampleRate: 50, propertyFilters: { Env: 'prod' } })
    expect(created.secret).toMatch(/^whsec_[A-Za-z0-9+/=]{40,}$/)
    const listed = await data<Array<Record<string, unknown>>>(await h.request('GET', '/v1/webhooks', { token: org.ownerSession }))
    expect(listed).toHaveLength(1)
    expect(listed[0]).toMatchObject({ id: created.id, sampleRate: 50, propertyFilters: { env: 'prod' }, lastDelivery: null })
    expect(JSON.stringify(listed)).not.toContain(created.secret)
    expect(String(listed[0]?.secretPrefix)).toStartWith('whsec_')
    // Nor in the audit log.
    const audit = await h.request('GET', `/v1/organization/${org.orgId}/audit`, { token: org.ownerSession })
    expect(await audit.text()).not.toContain(created.secret.slice(6))

    for (const [body, message] of [
      [{ destination: 'http://hooks.example.com/x', events: ['request.completed'] }, 'https://'],
      [{ destination: 'https://10.1.2.3/x', events: ['request.completed'] }, 'private'],
      [{ destination: 'https://[::1]/x', events: ['request.completed'] }, 'private'],
      [{ destination: 'https://user:pw@hooks.example.com/x', events: ['request.completed'] }, 'user name'],
      [{ destination: 'not a url', events: ['request.completed'] }, 'absolute URL'],
      [{ destination: 'https://hooks.example.com/x', events: ['request.exploded'] }, 'events must be among'],
      [{ destination: 'https://hooks.example.com/x', events: ['request.completed'], sampleRate: 101 }, 'sampleRate'],
    ] as const) {
      const refused = await h.request('POST', '/v1/webhooks', { token: org.ownerSession, body })
      expect(refused.status).toBe(400)
      expect((await errorOf(refused)).message).toContain(message)
    }
    expect(await data<unknown[]>(await h.request('GET', '/v1/webhooks', { token: org.ownerSession }))).toHaveLength(1)
  })

  test('a Member is refused (egress.write); another organisation finds nothing to test or delete', async () => {
    const { h, org, receiver } = await world()
    const created = await createWebhook(h, org, receiver)
    const member = await h.member(org.orgId, 'member')
    expect((await h.request('GET', '/v1/webhooks', { token: member.sessionToken })).status).toBe(403)
    expect((await h.request('GET', '/v1/webhooks')).status).toBe(401)
    const other = await h.org('growth')
    for (const [method, path] of [
      ['POST', `/v1/webhooks/${created.id}/test`],
      ['GET', `/v1/webhooks/${created.id}/deliveries`],
      ['DELETE', `/v1/webhooks/${created.id}`],
    ] as const)
      expect((await h.request(method, path, { token: other.ownerSession })).status).toBe(404)
    expect(receiver.received).toEqual([])
    expect((await h.request('DELETE', `/v1/webhooks/${created.id}`, { token: org.ownerSession })).status).toBe(200)
    expect(await data<unknown[]>(await h.request('GET', '/v1/webhooks', { token: org.ownerSession }))).toEqual([])
  })

  test('with outgoing calls switched off, no webhook is made or tested: 409 egress_disabled', async () => {
    const { h, org, receiver } = await world({ egress: new EgressPolicy({ enabled: false }) })
    const refused = await h.request('POST', '/v1/webhooks', {
      token: org.ownerSession,
      body: { destination: receiver.url, events: ['request.completed'] },
    })
    expect(refused.status).toBe(409)
    expect((await errorOf(refused)).code).toBe('egress_disabled')
  })

  test('test sends a signed webhook.test now and says how it went; the delivery is listed', async () => {
    const { h, org, receiver } = await world()
    const created = await createWebhook(h, org, receiver)
    const result = await data<{ ok: boolean; httpStatus: number; latencyMs: number; error: string | null }>(
      await h.request('POST', `/v1/webhooks/${created.id}/test`, { token: org.ownerSession }),
    )
    expect(result).toMatchObject({ ok: true, httpStatus: 200, error: null })
    expect(receiver.received.map((r) => r.payload.type)).toEqual(['webhook.test'])
    receiver.answers = [500]
    const failed = await data<{ ok: boolean; httpStatus: number; error: string }>(
      await h.request('POST', `/v1/webhooks/${created.id}/test`, { token: org.ownerSession }),
    )
    expect(failed).toMatchObject({ ok: false, httpStatus: 500, error: 'the destination answered 500' })
    const deliveries = await data<Array<{ event: string; status: string }>>(
      await h.request('GET', `/v1/webhooks/${created.id}/deliveries`, { token: org.ownerSession }),
    )
    expect(deliveries.map((d) => [d.event, d.status]).sort()).toEqual([
      ['webhook.test', 'dead'],
      ['webhook.test', 'delivered'],
    ])
  })
})

describe('webhooks: delivery', () => {
  test('a gateway call produces exactly one verified request.completed, with the call in it', async () => {
    const { h, org, receiver } = await world()
    await createWebhook(h, org, receiver)
    const id = await call(h, org, { 'Gw-Property-Env': 'prod' })
    await deliverUntil(h, () => receiver.received.length === 1)
    for (let i = 0; i < 3; i++) await h.services.deliverer.tick()
    expect(receiver.received).toHaveLength(1)
    expect(receiver.refused).toEqual([])
    const [event] = receiver.received
    expect(event?.id).toMatch(/^msg_/)
    expect(event?.payload).toMatchObject({
      type: 'request.completed',
      data: { requestId: id, model: 'gpt-4o', status: 'success', httpStatus: 200, cost: 0.0075, properties: { env: 'prod' } },
    })
    expect(event?.payload.data).not.toHaveProperty('body')
  })

  test('includeData carries the bodies; property filters and sampling decide which calls are sent', async () => {
    const { h, org, receiver } = await world()
    await createWebhook(h, org, receiver, { includeData: true, propertyFilters: { env: 'prod' } })
    // A webhook of its own receiver that samples nothing.
    const none = new Receiver()
    receivers.push(none)
    await createWebhook(h, org, none, { sampleRate: 0 })
    await call(h, org, { 'Gw-Property-Env': 'staging' }, 'not this one')
    const id = await call(h, org, { 'Gw-Property-Env': 'prod' }, 'this one')
    await deliverUntil(h, () => receiver.received.length === 1)
    for (let i = 0; i < 3; i++) await h.services.deliverer.tick()
    expect(receiver.received.map((r) => r.payload.data.requestId)).toEqual([id])
    const body = receiver.received[0]?.payload.data.body as { request: string; truncated: boolean } | undefined
    expect(body?.truncated).toBe(false)
    expect(body?.request).toContain('this one')
    expect(none.received).toEqual([])
  })

  test('a receiver down for several attempts gets the event once it is up, with the same webhook-id', async () => {
    const { h, org, receiver } = await world()
    const created = await createWebhook(h, org, receiver)
    receiver.answers = [503, 500, 502]
    await call(h, org)
    await deliverUntil(h, () => receiver.received.length === 1)
    const deliveries = await data<Array<{ id: string; status: string; attempts: number; lastHttpStatus: number }>>(
      await h.request('GET', `/v1/webhooks/${created.id}/deliveries`, { token: org.ownerSession }),
    )
    expect(deliveries).toMatchObject([{ id: receiver.received[0]?.id, status: 'delivered', attempts: 4, lastHttpStatus: 200 }])
    const [listed] = await data<Array<{ lastDelivery: { status: string } }>>(
      await h.request('GET', '/v1/webhooks', { token: org.ownerSession }),
    )
    expect(listed?.lastDelivery.status).toBe('delivered')
  })

  test('after the last attempt a delivery is dead; a 410 Gone disables the webhook', async () => {
    const { h, org, receiver } = await world()
    const created = await createWebhook(h, org, receiver)
    receiver.answers = [500, 500, 500, 500]
    await call(h, org)
    const status = async () =>
      (
        await data<Array<{ status: string }>>(
          await h.request('GET', `/v1/webhooks/${created.id}/deliveries`, { token: org.ownerSession }),
        )
      )[0]?.status
    const until = Date.now() + 5_000
    while ((await status()) !== 'dead' && Date.now() < until) {
      await h.services.deliverer.tick()
      await Bun.sleep(20)
    }
    expect(await status()).toBe('dead')
    expect(receiver.received).toEqual([])

    receiver.answers = [410]
    await call(h, org)
    const until410 = Date.now() + 5_000
    let webhook: { disabledAt: string | null } | undefined
    while (!webhook?.disabledAt && Date.now() < until410) {
      await h.services.deliverer.tick()
      webhook = (
        await data<Array<{ disabledAt: string | null }>>(await h.request('GET', '/v1/webhooks', { token: org.ownerSession }))
      )[0]
    }
    expect(webhook?.disabledAt).toBeString()
    // A disabled webhook takes no more events.
    await call(h, org)
    for (let i = 0; i < 3; i++) await h.services.deliverer.tick()
    expect(receiver.received).toEqual([])
  })

  test('a DNS name that resolves to loopback is refused at connection time, whatever it resolved to before', async () => {
    const resolve = async (host: string) => (host === 'inside.test' ? ['127.0.0.1'] : ['93.184.215.14'])
    const { h, org, receiver } = await world({ egress: new EgressPolicy({ enabled: true, resolve }) })
    const port = new URL(receiver.url).port
    // `localhost` is this machine by definition: refused when saved, before any lookup.
    const local = await h.request('POST', '/v1/webhooks', {
      token: org.ownerSession,
      body: { destination: `https://localhost:${port}/hook`, events: ['request.completed'] },
    })
    expect(local.status).toBe(400)
    // Any other name passes the check made when the webhook is saved, and is refused when resolved.
    const created = await h.request('POST', '/v1/webhooks', {
      token: org.ownerSession,
      body: { destination: `https://inside.test:${port}/hook`, events: ['request.completed'] },
    })
    expect(created.status).toBe(201)
    const { id } = await data<{ id: string }>(created)
    const result = await data<{ ok: boolean; error: string }>(
      await h.request('POST', `/v1/webhooks/${id}/test`, { token: org.ownerSession }),
    )
    expect(result.ok).toBe(false)
    expect(result.error).toContain('resolves to 127.0.0.1')
    expect(receiver.received).toEqual([])
  })

  test('a private address is refused unless the operator allows it', async () => {
    const resolve = async () => ['10.20.30.40']
    const closed = new EgressPolicy({ enabled: true, resolve })
    await expect(closed.pin('https://hooks.internal/x')).rejects.toThrow('resolves to 10.20.30.40')
    const open = new EgressPolicy({ enabled: true, resolve, allow: parseAllowList('10.0.0.0/8') })
    expect(await open.pin('https://hooks.internal:8443/x')).toEqual({
      url: 'https://10.20.30.40:8443/x',
      host: 'hooks.internal:8443',
      serverName: 'hooks.internal',
    })
    const byName = new EgressPolicy({ enabled: true, resolve, allow: parseAllowList('hooks.internal') })
    expect(byName.refusal('http://hooks.internal/x')).toBeUndefined()
    expect(closed.refusal('http://hooks.internal/x')).toContain('https://')
  })

  test('the signing secret is never written to the log', async () => {
    const lines: string[] = []
    const { h, org, receiver } = await world({ log: createLogger('debug', (line) => lines.push(line)) })
    const created = await createWebhook(h, org, receiver)
    receiver.answers = [500, 410]
    await call(h, org)
    for (let i = 0; i < 10; i++) {
      await h.services.deliverer.tick()
      await Bun.sleep(30)
    }
    await h.request('POST', `/v1/webhooks/${created.id}/test`, { token: org.ownerSession })
    expect(lines.length).toBeGreaterThan(0)
    expect(lines.join('\n')).not.toContain(created.secret.slice(6))
  })
})

describe.each(DIALECTS)('webhooks on %s: durable and delivered once', (dialect) => {
  test('an instance that dies mid-attempt loses nothing: another takes the attempt when its lease runs out', async () => {
    const { h, org, receiver } = await world({ dialect })
    await createWebhook(h, org, receiver)
    await call(h, org)
    // The first instance takes the attempt and dies with it: its lease runs out in a tenth of a second.
    const taken = await h.store.deliveries.claim(new Date(), new Date(Date.now() + 100), 10)
    expect(taken).toHaveLength(1)
    const restarted = await createHarness({
      database: h,
      egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
      delivery: QUICK,
    })
    harnesses.push(restarted)
    expect(await restarted.services.deliverer.tick()).toBe(0)
    await Bun.sleep(150)
    await deliverUntil(restarted, () => receiver.received.length === 1)
    expect(receiver.received[0]?.id).toBe(taken[0]?.delivery.id)
  })

  test('two instances sharing the store send each event once', async () => {
    const { h, org, receiver } = await world({ dialect })
    await createWebhook(h, org, receiver)
    for (let i = 0; i < 12; i++) await call(h, org)
    const second = await createHarness({
      database: h,
      egress: new EgressPolicy({ enabled: true, allow: LOOPBACK }),
      delivery: { ...QUICK, batch: 3 },
    })
    harnesses.push(second)
    const until = Date.now() + 10_000
    while (receiver.received.length < 12 && Date.now() < until)
      await Promise.all([h.services.deliverer.tick(), second.services.deliverer.tick(), second.services.deliverer.tick()])
    for (let i = 0; i < 3; i++) await Promise.all([h.services.deliverer.tick(), second.services.deliverer.tick()])
    const ids = receiver.received.map((r) => r.id)
    expect(ids).toHaveLength(12)
    expect(new Set(ids).size).toBe(12)
  })
})
