import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { RequestLog } from '../src/gateway/request-log/request-log'
import { writeEntries } from '../src/gateway/request-log/writer'
import { readCallFields } from '../src/gateway/steps/read-call'
import { silentLogger } from '../src/log'
import { headerValue } from '../src/util/header-value'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'
import { requestRecord } from './support/records'

const chat = (model: unknown, extra: Record<string, unknown> = {}) => ({
  model,
  messages: [{ role: 'user', content: 'hi' }],
  ...extra,
})

describe('header values', () => {
  test('printable ASCII goes as it is; anything else is percent-encoded UTF-8, and always a valid header', () => {
    expect(headerValue('gpt-4o')).toBe('gpt-4o')
    expect(headerValue('openai/llama3.1:8b')).toBe('openai/llama3.1:8b')
    for (const text of ['openai/模型', 'gpt-4o-😀', 'a\u0000b', 'line\nbreak', 'é']) {
      const value = headerValue(text)
      expect(() => new Headers({ 'gw-model': value })).not.toThrow()
      expect(decodeURIComponent(value)).toBe(text)
    }
    expect(decodeURIComponent(headerValue('x\ud800'))).toBe('x\uFFFD')
  })
})

describe('the fields gw reads from a call', () => {
  test('a wrong type is a 400 naming the field', () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [chat(42), 'model'],
      [chat(''), 'model'],
      [chat(undefined), 'model'],
      [chat(['gpt-4o']), 'model'],
      [chat('gpt-4o', { stream: 'yes' }), 'stream'],
      [chat('gpt-4o', { stream: 1 }), 'stream'],
      [chat('gpt-4o', { max_tokens: '10' }), 'max_tokens'],
      [chat('gpt-4o', { max_tokens: -1 }), 'max_tokens'],
      [chat('gpt-4o', { max_tokens: 1.5 }), 'max_tokens'],
      [chat('gpt-4o', { max_tokens: 1e308 }), 'max_tokens'],
      [chat('gpt-4o', { max_completion_tokens: {} }), 'max_completion_tokens'],
      [chat('gpt-4o', { max_output_tokens: true }), 'max_output_tokens'],
    ]
    for (const [body, field] of cases) {
      expect(() => readCallFields(body)).toThrow(`"${field}"`)
    }
  })

  test('a model name with control characters, or longer than a model name is, is refused naming it', () => {
    expect(() => readCallFields(chat('gpt-4o\u0000'))).toThrow('control characters: "gpt-4o\\u0000"')
    expect(() => readCallFields(chat('gpt\n4o'))).toThrow('control characters')
    expect(() => readCallFields(chat(`gpt-${'x'.repeat(300)}`))).toThrow('longer than 256 characters')
    expect(() => readCallFields(chat('gpt-4o\udfff'))).toThrow('unpaired surrogate')
  })

  test('null stands for absent; the first output bound given is the one used', () => {
    expect(readCallFields(chat('gpt-4o', { stream: null, max_tokens: null }))).toEqual({
      model: 'gpt-4o',
      stream: false,
      maxOutputTokens: undefined,
    })
    expect(readCallFields(chat('gpt-4o', { stream: true, max_completion_tokens: 7 }))).toEqual({
      model: 'gpt-4o',
      stream: true,
      maxOutputTokens: 7,
    })
  })
})

for (const dialect of DIALECTS) {
  describe(`odd calls through the gateway on ${dialect}`, () => {
    let fake: FakeProvider
    let h: Harness
    let org: Org
    beforeAll(async () => {
      fake = await startFakeProvider()
      h = await createHarness({ dialect, providers: providersAt(fake) })
      org = await h.org()
      await h.services.organizations.addCredits(org.orgId, 1_000)
    })
    afterAll(async () => {
      await h.close()
      await fake.close()
    })

    const call = (body: unknown, path = '/v1/chat/completions') => h.request('POST', path, { token: org.apiKey, body })

    /** A normal call afterwards is written: the request log still moves. */
    const logStillWrites = async () => {
      const response = await call(chat('gpt-4o'))
      expect(response.status).toBe(200)
      await h.requestLog.flush()
      expect(await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string)).toBeDefined()
    }

    test('models named in CJK or with emoji are served; their Gw-Model header is encoded; each is recorded once', async () => {
      for (const model of ['openai/模型', 'gpt-4o-😀', 'openai/naïve']) {
        const response = await call(chat(model))
        expect(response.status).toBe(200)
        const id = response.headers.get('gw-id') as string
        expect(decodeURIComponent(response.headers.get('gw-model') as string)).toBe(model.replace(/^openai\//, ''))
        await h.requestLog.flush()
        const rows = await h.db.query<{ model: string }>('SELECT model FROM requests WHERE id = $1', [id])
        expect(rows).toEqual([{ model: model.replace(/^openai\//, '') }])
      }
      expect(h.requestLog.snapshot()).toMatchObject({ queued: 0, setAside: 0 })
      await logStillWrites()
    })

    test('a model with a NUL or other control character is a 400 naming it, recorded as such, and the log moves on', async () => {
      for (const model of ['gpt-4o\u0000', 'openai/a\u0001b', 'gpt\u007f']) {
        const response = await call(chat(model))
        expect(response.status).toBe(400)
        const body = (await response.json()) as { error: { message: string; param: string } }
        expect(body.error).toMatchObject({ param: 'model' })
        expect(body.error.message).toContain(JSON.stringify(model))
        expect(response.headers.get('gw-model')).toBe('unknown')
        await h.requestLog.flush()
        expect((await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string))?.httpStatus).toBe(400)
      }
      expect(h.requestLog.snapshot()).toMatchObject({ queued: 0, setAside: 0, failedFlushes: 0 })
      await logStillWrites()
    })

    test("wrong types of the fields gw reads are a 400 in the caller's format, and no provider is called", async () => {
      const before = fake.calls.length
      const streamYes = await call(chat('gpt-4o', { stream: 'yes' }))
      expect(streamYes.status).toBe(400)
      expect(await streamYes.json()).toMatchObject({ error: { param: 'stream', type: 'invalid_request_error' } })
      const anthropic = await call(chat('claude-sonnet-4-5', { max_tokens: '10' }), '/v1/messages')
      expect(anthropic.status).toBe(400)
      expect(await anthropic.json()).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } })
      expect(fake.calls.length).toBe(before)
    })

    test('a body that is not JSON, with raw NUL bytes in it, is a 400 and its record is still written', async () => {
      const response = await call('\u0000\u0001 not json \u0000')
      expect(response.status).toBe(400)
      await h.requestLog.flush()
      expect(await h.store.requests.get(org.orgId, response.headers.get('gw-id') as string)).toBeDefined()
      await logStillWrites()
    })
  })
}

describe('a record the database refuses', () => {
  test('is set aside, counted and logged; the records around it are written and the log never stalls', async () => {
    const h = await createHarness()
    try {
      const org = await h.org()
      const lines: string[] = []
      const log = new RequestLog(
        writeEntries(h.store),
        { ...silentLogger, error: (message) => void lines.push(message) },
        { flushIntervalMs: 1 },
      )
      const good = (id: string) => ({ record: requestRecord({ id, orgId: org.orgId, ptb: false }) })
      log.record(good('r1'))
      log.record({ record: { ...requestRecord({ id: 'r2', orgId: org.orgId }), httpStatus: null as unknown as number } })
      log.record(good('r3'))
      await log.drain()
      log.record(good('r4'))
      await log.drain()
      expect(log.snapshot()).toMatchObject({ written: 3, setAside: 1, queued: 0, failedFlushes: 0 })
      expect((await h.store.requests.getMany(org.orgId, ['r1', 'r2', 'r3', 'r4'])).map((r) => r.id).sort()).toEqual([
        'r1',
        'r3',
        'r4',
      ])
      expect((await h.store.requestRejects.list()).map((r) => r.requestId)).toEqual(['r2'])
      expect(lines).toEqual(['request record refused by the database; set aside in request_log_rejects'])
    } finally {
      await h.close()
    }
  })
})
