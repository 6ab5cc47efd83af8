import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { costNano, estimateNano } from '../src/money/cost'
import { PriceBook, type PricedModel } from '../src/money/price-book'
import type { ModelPriceRow } from '../src/store/repositories/model-prices'
import { type FakeProvider, providersAt, startFakeProvider } from './support/fake-provider'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

interface PriceView {
  id: string
  provider: string
  model: string
  inputPerMillion: number
  outputPerMillion: number
  cacheReadPerMillion: number | null
  cacheWritePerMillion: number | null
  perRequest: number | null
  maxOutputTokens: number | null
  effectiveFrom: string
  inForce: boolean
  createdAt: string
}
interface Failure {
  error: { code: string; message: string; details?: { errors?: Array<{ row: number; line?: number; field: string | null }> } }
}

let h: Harness
let clock = Date.parse('2026-06-01T12:00:00.000Z')
beforeAll(async () => {
  h = await createHarness({ now: () => clock })
})
afterAll(() => h.close())

const HOUR = 3_600_000
const iso = (ms: number) => new Date(ms).toISOString()

const put = (org: Org, body: unknown, token = org.ownerSession) => h.request('PUT', '/v1/model-prices', { token, body })
const importPrices = (org: Org, body: unknown, token = org.ownerSession) =>
  h.request('PUT', '/v1/model-prices/import', { token, body })
const remove = (org: Org, query: Record<string, string>, token = org.ownerSession) =>
  h.request('DELETE', `/v1/model-prices?${new URLSearchParams(query)}`, { token })
const list = async (org: Org, token = org.ownerSession): Promise<PriceView[]> => {
  const response = await h.request('GET', '/v1/model-prices', { token })
  expect(response.status).toBe(200)
  return ((await response.json()) as { data: PriceView[] }).data
}
const data = async <T>(response: Response, status = 200): Promise<T> => {
  expect(response.status).toBe(status)
  return ((await response.json()) as { data: T }).data
}
const failure = async (response: Response, status = 400): Promise<Failure['error']> => {
  expect(response.status).toBe(status)
  return ((await response.json()) as Failure).error
}
const rows = (org: Org): Promise<ModelPriceRow[]> => h.store.org(org.orgId).modelPrices.list()

const gpt4o = { provider: 'openai', model: 'gpt-4o', inputPerMillion: 2, outputPerMillion: 8 }

describe('PUT /v1/model-prices', () => {
  test('stores the price exactly in nano-USD, answers it in USD, and audits the write', async () => {
    const org = await h.org()
    const price = await data<PriceView>(
      await put(org, {
        ...gpt4o,
        inputPerMillion: 2.123456789,
        cacheReadPerMillion: 0.000000001,
        cacheWritePerMillion: 3.75,
        perRequest: 0.0001,
      }),
    )
    expect(price).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o',
      inputPerMillion: 2.123456789,
      outputPerMillion: 8,
      cacheReadPerMillion: 0.000000001,
      cacheWritePerMillion: 3.75,
      perRequest: 0.0001,
      maxOutputTokens: null,
      effectiveFrom: iso(clock),
      inForce: true,
      createdAt: iso(clock),
    })
    const [row] = await rows(org)
    expect(row).toMatchObject({
      id: price.id,
      inputNanoPerMtok: 2_123_456_789,
      outputNanoPerMtok: 8_000_000_000,
      cacheReadNanoPerMtok: 1,
      cacheWriteNanoPerMtok: 3_750_000_000,
      perRequestNano: 100_000,
      maxOutputTokens: null,
    })
    expect(await list(org)).toEqual([price])
    const [entry] = await h.store.org(org.orgId).audit.query({ action: 'PUT /v1/model-prices', limit: 1 })
    expect(entry).toMatchObject({ actorId: org.ownerId, outcome: 'success', target: price.id })
  })

  test('the same provider, model and effectiveFrom replace the row; another effectiveFrom adds one', async () => {
    const org = await h.org()
    const from = '2026-05-01T00:00:00Z'
    const first = await data<PriceView>(await put(org, { ...gpt4o, effectiveFrom: from }))
    const second = await data<PriceView>(
      await put(org, { ...gpt4o, inputPerMillion: 1, effectiveFrom: '2026-05-01T02:00:00+02:00' }),
    )
    expect(second.id).not.toBe(first.id)
    expect((await list(org)).map((p) => [p.inputPerMillion, p.effectiveFrom])).toEqual([[1, '2026-05-01T00:00:00.000Z']])
    const later = await data<PriceView>(await put(org, { ...gpt4o, inputPerMillion: 3, effectiveFrom: '2026-05-20' }))
    expect(later.inForce).toBe(true)
    const listed = await list(org)
    expect(listed.map((p) => [p.inputPerMillion, p.inForce])).toEqual([
      [1, false],
      [3, true],
    ])
  })

  test("a model without a built-in price needs maxOutputTokens; one with inherits the table's", async () => {
    const org = await h.org()
    const selfHosted = { provider: 'openai', model: 'llama-3.1-70b-instruct', inputPerMillion: 0.5, outputPerMillion: 0.5 }
    const refused = await failure(await put(org, selfHosted))
    expect(refused.message).toContain('maxOutputTokens')
    expect(refused.message).toContain('no built-in price')
    expect(await rows(org)).toEqual([])
    const accepted = await data<PriceView>(await put(org, { ...selfHosted, maxOutputTokens: 4_096 }))
    expect(accepted.maxOutputTokens).toBe(4_096)
    // A dated snapshot of a known family is known.
    expect((await put(org, { ...gpt4o, model: 'gpt-4o-2024-08-06' })).status).toBe(200)
  })

  test('bad input: 400 naming the field, nothing stored', async () => {
    const org = await h.org()
    const cases: Array<[unknown, string]> = [
      [{ ...gpt4o, provider: 'nonesuch' }, 'provider'],
      [{ ...gpt4o, model: '' }, 'model'],
      [{ ...gpt4o, model: 'x'.repeat(201) }, 'model'],
      [{ ...gpt4o, model: 'gpt-4o\n' }, 'model'],
      [{ ...gpt4o, model: 'gpt\u00074o' }, 'model'],
      [{ ...gpt4o, model: ' gpt-4o' }, 'model'],
      [{ ...gpt4o, inputPerMillion: -1 }, 'inputPerMillion'],
      [{ ...gpt4o, inputPerMillion: 1_000_001 }, 'inputPerMillion'],
      [{ ...gpt4o, inputPerMillion: '2' }, 'inputPerMillion'],
      [{ ...gpt4o, outputPerMillion: 0.1234567891 }, 'outputPerMillion'],
      [{ ...gpt4o, cacheReadPerMillion: 1e-10 }, 'cacheReadPerMillion'],
      [{ ...gpt4o, perRequest: 0.0000000005 }, 'perRequest'],
      [{ provider: 'openai', model: 'gpt-4o', inputPerMillion: 1 }, 'outputPerMillion'],
      [{ ...gpt4o, maxOutputTokens: 1.5 }, 'maxOutputTokens'],
      [{ ...gpt4o, maxOutputTokens: -1 }, 'maxOutputTokens'],
      [{ ...gpt4o, effectiveFrom: 'March 3 2026' }, 'effectiveFrom'],
      [{ ...gpt4o, effectiveFrom: '2026-02-30' }, 'effectiveFrom'],
      [{ ...gpt4o, effectiveFrom: '2026-03-01T25:00:00Z' }, 'effectiveFrom'],
      // Without a zone JavaScript would read the server's local time.
      [{ ...gpt4o, effectiveFrom: '2026-03-01T10:00:00' }, 'effectiveFrom'],
      [{ ...gpt4o, colour: 'red' }, 'colour'],
    ]
    for (const [body, field] of cases) {
      const error = await failure(await put(org, body))
      expect(`${JSON.stringify(body)}: ${error.message}`).toContain(field)
    }
    expect(await rows(org)).toEqual([])
  })
})

describe('DELETE /v1/model-prices', () => {
  test("deletes all of a model's overrides, or the one from effectiveFrom; 404 when none matched", async () => {
    const org = await h.org()
    for (const body of [
      { ...gpt4o, effectiveFrom: '2026-01-01' },
      { ...gpt4o, effectiveFrom: '2026-02-01' },
      { ...gpt4o, effectiveFrom: '2026-03-01' },
      { ...gpt4o, model: 'gpt-4o-mini' },
      // The same model id under another provider is another model.
      { ...gpt4o, provider: 'anthropic', maxOutputTokens: 1_000 },
    ])
      expect((await put(org, body)).status).toBe(200)

    expect(
      await data(await remove(org, { provider: 'openai', model: 'gpt-4o', effectiveFrom: '2026-02-01T00:00:00.000Z' })),
    ).toEqual({ provider: 'openai', model: 'gpt-4o', deleted: 1 })
    const gone = await failure(await remove(org, { provider: 'openai', model: 'gpt-4o', effectiveFrom: '2026-02-01' }), 404)
    expect(gone.code).toBe('not_found')
    expect(await data(await remove(org, { provider: 'openai', model: 'gpt-4o' }))).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      deleted: 2,
    })
    expect((await list(org)).map((p) => `${p.provider}/${p.model}`)).toEqual(['anthropic/gpt-4o', 'openai/gpt-4o-mini'])
    expect((await remove(org, { provider: 'openai', model: 'gpt-4o' })).status).toBe(404)
    // Each attempt is audited, refusals included (the clock stands still here, so the order is not asserted).
    const entries = await h.store.org(org.orgId).audit.query({ action: 'DELETE /v1/model-prices', limit: 10 })
    expect(entries.map((e) => e.outcome).sort()).toEqual(['failure', 'failure', 'success', 'success'])
  })

  test('bad input: 400, nothing deleted', async () => {
    const org = await h.org()
    await put(org, gpt4o)
    const queries: Array<Record<string, string>> = [
      { provider: 'openai' },
      { model: 'gpt-4o' },
      { provider: 'nonesuch', model: 'gpt-4o' },
      { provider: 'openai', model: 'gpt-4o', effectiveFrom: 'yesterday' },
      { provider: 'openai', model: 'gpt-4o', extra: '1' },
    ]
    for (const query of queries) expect((await remove(org, query)).status).toBe(400)
    expect((await rows(org)).length).toBe(1)
  })
})

describe('PUT /v1/model-prices/import', () => {
  test('JSON: merge adds and replaces by provider, model and effectiveFrom; replace leaves exactly the new rows', async () => {
    const org = await h.org()
    await put(org, { ...gpt4o, effectiveFrom: '2026-01-01' })
    await put(org, { ...gpt4o, model: 'gpt-4o-mini', effectiveFrom: '2026-01-01' })
    const merged = await importPrices(org, {
      format: 'json',
      mode: 'merge',
      rows: [
        { ...gpt4o, inputPerMillion: 1.5, effectiveFrom: '2026-01-01' },
        {
          provider: 'anthropic',
          model: 'claude-sonnet-4-5',
          inputPerMillion: 2.7,
          outputPerMillion: 13.5,
          cacheReadPerMillion: 0.27,
        },
      ],
    })
    expect(await data(merged)).toEqual({ imported: 2, replaced: 0 })
    expect((await list(org)).map((p) => `${p.model} ${p.inputPerMillion}`)).toEqual([
      'claude-sonnet-4-5 2.7',
      'gpt-4o 1.5',
      'gpt-4o-mini 2',
    ])

    const replaced = await importPrices(org, {
      format: 'json',
      mode: 'replace',
      rows: [{ ...gpt4o, model: 'o3', inputPerMillion: 1.8 }],
    })
    expect(await data(replaced)).toEqual({ imported: 1, replaced: 3 })
    expect((await list(org)).map((p) => `${p.model} ${p.inputPerMillion}`)).toEqual(['o3 1.8'])
    const [entry] = await h.store.org(org.orgId).audit.query({ action: 'PUT /v1/model-prices/import', limit: 1 })
    expect(entry).toMatchObject({ actorId: org.ownerId, outcome: 'success' })
  })

  test('CSV: a header naming the fields in any order, quoted fields, CRLF, empty cells for absent fields', async () => {
    const org = await h.org()
    const csv = [
      'model,provider,inputPerMillion,outputPerMillion,cacheReadPerMillion,maxOutputTokens,effectiveFrom',
      'gpt-4o,openai,2.5,10,1.25,,2026-01-01T00:00:00Z',
      '"my-model, v2",openai,0.000000001,0.2,,8192,',
      '"claude-""quoted""",anthropic,3,15,,1000,2026-02-01',
      '',
    ].join('\r\n')
    expect(await data(await importPrices(org, { format: 'csv', mode: 'merge', csv }))).toEqual({ imported: 3, replaced: 0 })
    const listed = await list(org)
    expect(listed.map((p) => [p.provider, p.model, p.inputPerMillion, p.cacheReadPerMillion, p.maxOutputTokens])).toEqual([
      ['anthropic', 'claude-"quoted"', 3, null, 1000],
      ['openai', 'gpt-4o', 2.5, 1.25, null],
      ['openai', 'my-model, v2', 0.000000001, null, 8192],
    ])
    expect(listed.find((p) => p.model === 'my-model, v2')?.effectiveFrom).toBe(iso(clock))
  })

  test('a bad JSON row: 400 naming each bad row and field, and nothing changes', async () => {
    const org = await h.org()
    await put(org, { ...gpt4o, effectiveFrom: '2026-01-01' })
    const before = await rows(org)
    const error = await failure(
      await importPrices(org, {
        format: 'json',
        mode: 'replace',
        rows: [
          { ...gpt4o, inputPerMillion: 9 },
          { ...gpt4o, provider: 'nonesuch' },
          { ...gpt4o, model: 'o3', outputPerMillion: 0.1234567891 },
          'not a price',
          { ...gpt4o, model: 'custom-model' },
        ],
      }),
    )
    expect(error.message).toStartWith('the import changed nothing: ')
    expect(error.message).toContain('row 2, provider: must be one of openai, anthropic')
    expect(error.message).toContain('row 3, outputPerMillion: 0.1234567891 has more than 9 decimal places')
    expect(error.message).toContain('row 4: must be an object')
    expect(error.message).toContain('row 5, maxOutputTokens: is required')
    expect(error.message).not.toContain('row 1')
    expect(error.details?.errors?.map((e) => [e.row, e.field])).toEqual([
      [2, 'provider'],
      [3, 'outputPerMillion'],
      [4, null],
      [5, 'maxOutputTokens'],
    ])
    expect(await rows(org)).toEqual(before)
  })

  test('a bad CSV line: 400 naming its row, line and field, and nothing changes', async () => {
    const org = await h.org()
    await put(org, gpt4o)
    const before = await rows(org)
    const header = 'provider,model,inputPerMillion,outputPerMillion'
    const cases: Array<[string, string]> = [
      [`${header}\nopenai,o3,2,8\nopenai,o4-mini,1.1x,4.4\n`, 'row 2 (line 3), inputPerMillion: "1.1x" is not a decimal number'],
      [`${header}\nopenai,"o3\nwith a line break",2,8,9\nopenai,o4-mini,-1,4`, 'row 1 (line 2): has 5 fields'],
      [`${header}\nopenai,"o3\nsecond line",2,8\nnonesuch,o4-mini,1,4`, 'row 2 (line 4), provider'],
      [`${header}\nopenai,o3,2,8\nopenai,o3,3,9`, 'row 2 (line 3): repeats row 1'],
      [`${header},colour\nopenai,o3,2,8,red`, 'line 1: the header names "colour"'],
      ['provider,model,inputPerMillion\nopenai,o3,2', 'line 1: the header lacks outputPerMillion'],
      [`${header}\nopenai,"o3,2,8`, 'line 2: a quoted field is never closed'],
      [`${header}\nopenai,o"3,2,8`, 'line 2: a quote inside an unquoted field'],
      ['', 'the CSV is empty'],
    ]
    for (const [csv, expected] of cases) {
      const error = await failure(await importPrices(org, { format: 'csv', mode: 'replace', csv }))
      expect(error.message).toContain(expected)
    }
    expect(await rows(org)).toEqual(before)
  })

  test('a repeated price within one import is a row error; the body must match its format', async () => {
    const org = await h.org()
    const repeated = await failure(
      await importPrices(org, { format: 'json', mode: 'merge', rows: [gpt4o, { ...gpt4o, inputPerMillion: 3 }] }),
    )
    expect(repeated.message).toContain('row 2: repeats row 1')
    for (const body of [
      { format: 'json', mode: 'merge', csv: 'provider,model' },
      { format: 'csv', mode: 'merge', rows: [gpt4o] },
      { format: 'json', mode: 'merge' },
      { format: 'xml', mode: 'merge', rows: [] },
      { format: 'json', mode: 'upsert', rows: [] },
      { format: 'json', mode: 'merge', rows: Array.from({ length: 10_001 }, () => gpt4o) },
    ])
      expect((await importPrices(org, body)).status).toBe(400)
    expect(await rows(org)).toEqual([])
  })

  test('10,000 prices import in one go; 10,001 are refused', async () => {
    const org = await h.org()
    const csv = (count: number) =>
      [
        'provider,model,inputPerMillion,outputPerMillion,maxOutputTokens',
        ...Array.from({ length: count }, (_, i) => `openai,m-${i},2,8,100`),
      ].join('\n')
    expect((await failure(await importPrices(org, { format: 'csv', mode: 'merge', csv: csv(10_001) }))).message).toContain(
      'at most 10000',
    )
    expect(await rows(org)).toEqual([])
    expect(await data(await importPrices(org, { format: 'csv', mode: 'merge', csv: csv(10_000) }))).toEqual({
      imported: 10_000,
      replaced: 0,
    })
    expect((await rows(org)).length).toBe(10_000)
  })
})

describe('who may see and change prices', () => {
  test("another organisation's prices cannot be seen, changed or deleted, and stay as they were", async () => {
    const a = await h.org()
    const b = await h.org()
    await put(a, { ...gpt4o, effectiveFrom: '2026-01-01' })
    await put(a, { ...gpt4o, model: 'o3' })
    const before = await rows(a)
    expect(await list(b)).toEqual([])
    expect((await remove(b, { provider: 'openai', model: 'gpt-4o' })).status).toBe(404)
    expect((await remove(b, { provider: 'openai', model: 'gpt-4o', effectiveFrom: '2026-01-01' })).status).toBe(404)
    // The same identity in B is B's own row.
    expect((await put(b, { ...gpt4o, inputPerMillion: 99, effectiveFrom: '2026-01-01' })).status).toBe(200)
    expect(
      await data(await importPrices(b, { format: 'json', mode: 'replace', rows: [{ ...gpt4o, model: 'o4-mini' }] })),
    ).toEqual({
      imported: 1,
      replaced: 1,
    })
    expect(
      (await importPrices(b, { format: 'json', mode: 'merge', rows: [{ ...gpt4o, effectiveFrom: '2026-01-01' }] })).status,
    ).toBe(200)
    expect(await rows(a)).toEqual(before)
    expect((await list(b)).map((p) => p.model)).toEqual(['gpt-4o', 'o4-mini'])
    expect((await h.services.prices.priceOf(a.orgId, 'openai', 'gpt-4o'))?.price.inputNanoPerToken).toBe(2_000)
  })

  test('a Member (session or API key) may list but gets 403 on every write; nothing changes', async () => {
    const org = await h.org()
    await put(org, gpt4o)
    const before = await rows(org)
    const member = await h.member(org.orgId, 'member')
    for (const token of [member.sessionToken, org.apiKey]) {
      expect((await list(org, token)).length).toBe(1)
      expect((await put(org, { ...gpt4o, inputPerMillion: 0 }, token)).status).toBe(403)
      expect((await remove(org, { provider: 'openai', model: 'gpt-4o' }, token)).status).toBe(403)
      expect((await importPrices(org, { format: 'json', mode: 'replace', rows: [] }, token)).status).toBe(403)
    }
    expect(await rows(org)).toEqual(before)
    const [entry] = await h.store.org(org.orgId).audit.query({ action: 'PUT /v1/model-prices', actorId: member.userId, limit: 1 })
    expect(entry).toMatchObject({ outcome: 'failure', detail: { status: 403 } })
  })

  test('no credential: 401 on every route', async () => {
    for (const [method, path, body] of [
      ['GET', '/v1/model-prices', undefined],
      ['PUT', '/v1/model-prices', gpt4o],
      ['DELETE', '/v1/model-prices?provider=openai&model=gpt-4o', undefined],
      ['PUT', '/v1/model-prices/import', { format: 'json', mode: 'merge', rows: [] }],
    ] as const)
      expect((await h.request(method, path, { body })).status).toBe(401)
  })
})

describe('the price book', () => {
  test('an organisation without overrides pays the built-in table', async () => {
    const org = await h.org()
    const priced = await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o')
    expect(priced?.source).toBe('builtin')
    expect(priced?.price.inputNanoPerToken).toBe(2_500)
    expect(await h.services.prices.priceOf(org.orgId, 'openai', 'no-such-model')).toBeUndefined()
  })

  test('once the overrides are read, a price is answered at once, without a promise, until they are forgotten', async () => {
    const book = new PriceBook(h.store)
    const org = await h.org()
    expect(book.priceOf(org.orgId, 'openai', 'gpt-4o')).toBeInstanceOf(Promise)
    await book.priceOf(org.orgId, 'openai', 'gpt-4o')
    expect((book.priceOf(org.orgId, 'openai', 'gpt-4o') as PricedModel | undefined)?.source).toBe('builtin')
    book.forget(org.orgId)
    expect(book.priceOf(org.orgId, 'openai', 'gpt-4o')).toBeInstanceOf(Promise)
  })

  test('an override is in force from its effectiveFrom on, not before', async () => {
    let now = Date.parse('2026-07-01T00:00:00Z')
    const book = new PriceBook(h.store, () => now)
    const org = await h.org()
    const future = await data<PriceView>(await put(org, { ...gpt4o, inputPerMillion: 1, effectiveFrom: '2026-07-01T01:00:00Z' }))
    expect(future.inForce).toBe(false)
    expect((await book.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe('builtin')
    now += HOUR - 1
    book.forget(org.orgId)
    expect((await book.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe('builtin')
    now += 1
    // Still cached: the time decides, not a new read.
    const priced = await book.priceOf(org.orgId, 'openai', 'gpt-4o')
    expect(priced?.source).toBe(`override:${future.id}`)
    expect(priced?.price).toMatchObject({ inputNanoPerToken: 1_000, outputNanoPerToken: 8_000, maxOutputTokens: 16_384 })
    expect(priced?.price.longContext).toBeUndefined()
  })

  test("a dated snapshot is priced by its family's override, unless it has its own; an alias by its row's", async () => {
    const org = await h.org()
    const family = await data<PriceView>(await put(org, { ...gpt4o, inputPerMillion: 1 }))
    const snapshot = await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o-2024-08-06')
    expect(snapshot?.source).toBe(`override:${family.id}`)
    expect(snapshot?.price.inputNanoPerToken).toBe(1_000)
    // gpt-4o-mini is another family, priced by the table.
    expect((await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o-mini-2024-07-18'))?.source).toBe('builtin')
    // The first gpt-4o snapshot writes at most 4,096 tokens: its own maximum bounds its estimate.
    expect((await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o-2024-05-13'))?.price.maxOutputTokens).toBe(4_096)

    const own = await data<PriceView>(await put(org, { ...gpt4o, model: 'gpt-4o-2024-08-06', inputPerMillion: 0.5 }))
    expect((await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o-2024-08-06'))?.source).toBe(`override:${own.id}`)

    const sonnet = await data<PriceView>(
      await put(org, { provider: 'anthropic', model: 'claude-sonnet-4', inputPerMillion: 2, outputPerMillion: 10 }),
    )
    expect((await h.services.prices.priceOf(org.orgId, 'anthropic', 'claude-sonnet-4-0'))?.source).toBe(`override:${sonnet.id}`)
    expect((await h.services.prices.priceOf(org.orgId, 'anthropic', 'claude-sonnet-4-20250514'))?.source).toBe(
      `override:${sonnet.id}`,
    )
    // The provider is part of the key.
    expect(await h.services.prices.priceOf(org.orgId, 'anthropic', 'gpt-4o')).toBeUndefined()
  })

  test('fractional per-token rates: a cost rounds to the nearest nano-USD, an estimate rounds up', async () => {
    const org = await h.org()
    await put(org, {
      provider: 'openai',
      model: 'tiny',
      inputPerMillion: 0.0025,
      outputPerMillion: 0.0015,
      perRequest: 0.000000003,
      maxOutputTokens: 10,
    })
    const priced = await h.services.prices.priceOf(org.orgId, 'openai', 'tiny')
    if (!priced) throw new Error('no price')
    expect(priced.price).toMatchObject({ inputNanoPerToken: 2.5, outputNanoPerToken: 1.5, perRequestNano: 3 })
    // 3 x 2.5 + 1 x 1.5 + 3 = 12
    expect(costNano(priced.price, { promptTokens: 3, completionTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBe(12)
    // 1 x 2.5 + 0 + 3 = 5.5 -> 6
    expect(costNano(priced.price, { promptTokens: 1, completionTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0 })).toBe(6)
    // 1 x 2.5 + 1 x 1.5 + 3 = 7, 3 x 2.5 + 0 + 3 = 10.5 -> 11 (cache reads bill as input without a rate)
    expect(costNano(priced.price, { promptTokens: 3, completionTokens: 0, cacheReadTokens: 1, cacheWriteTokens: 0 })).toBe(11)
    // 3 bytes x 2.5 + 10 x 1.5 + 3 = 25.5 -> 26
    expect(estimateNano(priced.price, { bodyBytes: 3 })).toBe(26)
  })

  test('a change through the API is in force at once on this instance, on another within a second', async () => {
    const org = await h.org()
    const other = new PriceBook(h.store, () => clock)
    expect((await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe('builtin')
    expect((await other.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe('builtin')
    const price = await data<PriceView>(await put(org, { ...gpt4o, effectiveFrom: iso(clock - HOUR) }))
    expect((await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe(`override:${price.id}`)
    expect((await other.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe('builtin')
    clock += 1_001
    expect((await other.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe(`override:${price.id}`)
    await remove(org, { provider: 'openai', model: 'gpt-4o' })
    expect((await h.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o'))?.source).toBe('builtin')
  })
})

describe.each(DIALECTS)('the overrides stored on %s', (dialect) => {
  let d: Harness
  beforeAll(async () => {
    d = await createHarness({ dialect })
  })
  afterAll(() => d.close())

  test('PUT replaces by identity, import merges and replaces in batches, DELETE by model or by time', async () => {
    const org = await d.org()
    const send = (method: string, path: string, body?: unknown) => d.request(method, path, { token: org.ownerSession, body })
    const from = '2026-01-01T00:00:00.000Z'
    const first = await data<PriceView>(await send('PUT', '/v1/model-prices', { ...gpt4o, effectiveFrom: from }))
    const second = await data<PriceView>(
      await send('PUT', '/v1/model-prices', { ...gpt4o, inputPerMillion: 1, effectiveFrom: from }),
    )
    expect(second.id).not.toBe(first.id)
    expect((await d.store.org(org.orgId).modelPrices.list()).map((r) => [r.id, r.inputNanoPerMtok])).toEqual([
      [second.id, 1_000_000_000],
    ])

    const csv = [
      'provider,model,inputPerMillion,outputPerMillion,maxOutputTokens,effectiveFrom',
      `openai,gpt-4o,3,9,,${from}`,
      ...Array.from({ length: 1_200 }, (_, i) => `openai,m-${i},0.000000001,1000000,100,`),
    ].join('\n')
    expect(await data(await send('PUT', '/v1/model-prices/import', { format: 'csv', mode: 'merge', csv }))).toEqual({
      imported: 1_201,
      replaced: 0,
    })
    const merged = await d.store.org(org.orgId).modelPrices.list()
    expect(merged.length).toBe(1_201)
    expect(merged.find((r) => r.model === 'gpt-4o')).toMatchObject({ inputNanoPerMtok: 3_000_000_000, maxOutputTokens: null })
    expect(merged.find((r) => r.model === 'm-7')).toMatchObject({ inputNanoPerMtok: 1, outputNanoPerMtok: 1_000_000_000_000_000 })

    expect(
      await data(
        await send('PUT', '/v1/model-prices/import', {
          format: 'json',
          mode: 'replace',
          rows: [
            { ...gpt4o, effectiveFrom: '2026-01-01' },
            { ...gpt4o, effectiveFrom: '2026-02-01' },
          ],
        }),
      ),
    ).toEqual({ imported: 2, replaced: 1_201 })
    expect(await data(await send('DELETE', '/v1/model-prices?provider=openai&model=gpt-4o&effectiveFrom=2026-02-01'))).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      deleted: 1,
    })
    expect((await d.store.org(org.orgId).modelPrices.list()).map((r) => r.effectiveFrom.toISOString())).toEqual([from])
    expect((await d.services.prices.priceOf(org.orgId, 'openai', 'gpt-4o-2024-11-20'))?.price.inputNanoPerToken).toBe(2_000)

    // What to delete may come as a JSON body too; naming no model is a 400.
    expect((await send('DELETE', '/v1/model-prices', { provider: 'openai' })).status).toBe(400)
    expect(await data(await send('DELETE', '/v1/model-prices', { provider: 'openai', model: 'gpt-4o' }))).toEqual({
      provider: 'openai',
      model: 'gpt-4o',
      deleted: 1,
    })
  })
})

describe('the gateway prices calls by the organisation', () => {
  let fake: FakeProvider
  let g: Harness
  beforeAll(async () => {
    fake = await startFakeProvider()
    g = await createHarness({ providers: providersAt(fake) })
  })
  afterAll(async () => {
    await g.close()
    await fake.close()
  })

  const call = async (org: Org, model: string) => {
    const response = await g.request('POST', '/v1/chat/completions', {
      token: org.apiKey,
      body: { model, messages: [{ role: 'user', content: 'hi' }] },
    })
    expect(response.status).toBe(200)
    await g.requestLog.flush()
    return g.store.requests.get(org.orgId, response.headers.get('gw-id') as string)
  }
  const funded = async () => {
    const org = await g.org('growth')
    await g.services.organizations.addCredits(org.orgId, 100)
    return org
  }

  test("a call is priced by the override, and its record names it; another organisation's calls are not", async () => {
    const org = await funded()
    const override = await data<PriceView>(
      await g.request('PUT', '/v1/model-prices', {
        token: org.ownerSession,
        body: { ...gpt4o, inputPerMillion: 1, outputPerMillion: 2 },
      }),
    )
    // The fake reports 1,000 prompt and 500 completion tokens: 1,000 x $1/M + 500 x $2/M.
    expect(await call(org, 'gpt-4o-2024-08-06')).toMatchObject({ costNano: 2_000_000, priceSource: `override:${override.id}` })
    // The table's price: 1,000 x $2.50/M + 500 x $10/M.
    expect(await call(await funded(), 'gpt-4o')).toMatchObject({ costNano: 7_500_000, priceSource: 'builtin' })
  })

  test('a self-hosted model gw has no price for is priced by its override, its fee per call included', async () => {
    const org = await funded()
    expect(await call(org, 'openai/local-llama')).toMatchObject({ costNano: null, priceSource: null })
    const override = await data<PriceView>(
      await g.request('PUT', '/v1/model-prices', {
        token: org.ownerSession,
        body: {
          provider: 'openai',
          model: 'local-llama',
          inputPerMillion: 0.1,
          outputPerMillion: 0.2,
          perRequest: 0.001,
          maxOutputTokens: 1_000,
        },
      }),
    )
    // 1,000 x $0.10/M + 500 x $0.20/M + $0.001.
    const record = await call(org, 'openai/local-llama')
    expect(record).toMatchObject({ costNano: 1_200_000, priceSource: `override:${override.id}` })
    expect(record?.estimatedCostNano).toBeGreaterThan(1_000_000)
  })
})
