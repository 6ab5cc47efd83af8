import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { auditEntry } from '../src/audit/entry'
import { csvField, csvRow } from '../src/modules/audit/csv'
import { createHarness, type Harness, type Org } from './support/harness'

describe('CSV quoting (RFC 4180)', () => {
  const cases: Array<[string | number | null, string]> = [
    ['plain', 'plain'],
    ['a,b', '"a,b"'],
    ['say "hi"', '"say ""hi"""'],
    ['two\nlines', '"two\nlines"'],
    ['cr\r\nlf', '"cr\r\nlf"'],
    ['=HYPERLINK("x")', '"\'=HYPERLINK(""x"")"'],
    ['+1', "'+1"],
    ['-2', "'-2"],
    ['@cmd', "'@cmd"],
    [42, '42'],
    [-3, '-3'],
    [null, ''],
  ]
  for (const [value, expected] of cases) {
    test(`${JSON.stringify(value)} -> ${JSON.stringify(expected)}`, () => {
      expect(csvField(value)).toBe(expected)
    })
  }
  test('rows end in CRLF', () => {
    expect(csvRow(['a', 'b,c'])).toBe('a,"b,c"\r\n')
  })
})

describe('GET /v1/organization/{id}/audit and audit.csv', () => {
  let h: Harness
  let org: Org
  beforeAll(async () => {
    h = await createHarness()
    org = await h.org('growth')
    const actor = { kind: 'session' as const, id: org.ownerId, orgId: org.orgId }
    for (let i = 0; i < 5; i++) {
      await h.store.audit.append({
        ...auditEntry(actor, i % 2 === 0 ? 'thing.create' : 'thing.delete', `thing:${i}`),
        createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
      })
    }
    await h.store.audit.append({
      ...auditEntry(actor, 'thing.create', 'name, with "quotes"\nand a newline', { detail: { note: '=SUM(A1)' } }),
      createdAt: new Date(Date.UTC(2026, 0, 2)),
    })
  })
  afterAll(() => h.close())

  const url = (query = '') => `/v1/organization/${org.orgId}/audit${query}`
  type Page = { data: { entries: Array<{ action: string; target: string; createdAt: string }>; nextCursor: string | null } }

  test('newest first, in pages that join up without gaps or repeats', async () => {
    const seen: string[] = []
    let cursor: string | null = null
    do {
      const response = await h.request('GET', url(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`), { token: org.ownerSession })
      expect(response.status).toBe(200)
      const page = (await response.json()) as Page
      seen.push(...page.data.entries.map((e) => e.target))
      cursor = page.data.nextCursor
    } while (cursor)
    const all = await h.store.audit.listForOrg(org.orgId, 1_000)
    expect(seen).toEqual(all.map((e) => e.target as string))
    expect(new Set(seen).size).toBe(seen.length)
  })

  test('filters by action and time', async () => {
    const page = (await (await h.request('GET', url('?action=thing.delete'), { token: org.ownerSession })).json()) as Page
    expect(page.data.entries.map((e) => e.target)).toEqual(['thing:3', 'thing:1'])
    const window = (await (
      await h.request('GET', url('?from=2026-01-01T00:01:00Z&to=2026-01-01T00:02:00Z'), { token: org.ownerSession })
    ).json()) as Page
    expect(window.data.entries.map((e) => e.target)).toEqual(['thing:2', 'thing:1'])
  })

  test('bad input: 400 naming it', async () => {
    for (const query of ['?from=yesterday', '?cursor=bm9wZQ', '?limit=0', '?limit=5000', '?unknown=1']) {
      expect((await h.request('GET', url(query), { token: org.ownerSession })).status).toBe(400)
    }
  })

  test('a Member cannot read it: 403', async () => {
    expect((await h.request('GET', url(), { token: org.apiKey })).status).toBe(403)
    expect((await h.request('GET', `/v1/organization/${org.orgId}/audit.csv`, { token: org.apiKey })).status).toBe(403)
  })

  test('the CSV export: a header, every entry, fields quoted so that they survive commas, quotes and newlines', async () => {
    const response = await h.request('GET', `/v1/organization/${org.orgId}/audit.csv`, { token: org.ownerSession })
    expect(response.status).toBe(200)
    expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
    const text = await response.text()
    expect(text.startsWith('id,created_at,actor_id,principal_kind,action,target,source_ip,outcome,detail\r\n')).toBe(true)
    expect(text).toContain(',"name, with ""quotes""\nand a newline",')
    expect(text).toContain('"{""note"":""=SUM(A1)""}"')
    const rows = parseCsv(text)
    expect(rows.length).toBe(1 + (await h.store.audit.listForOrg(org.orgId, 1_000)).length)
    expect(rows.map((r) => r[5])).toContain('name, with "quotes"\nand a newline')
  })
})

/** A small RFC 4180 reader, to check that the export parses back into what was stored. */
function parseCsv(text: string): string[][] {
  const rows: string[][] = []
  let row: string[] = []
  let field = ''
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i] as string
    if (quoted) {
      if (c === '"' && text[i + 1] === '"') {
        field += '"'
        i++
      } else if (c === '"') quoted = false
      else field += c
    } else if (c === '"') quoted = true
    else if (c === ',') {
      row.push(field)
      field = ''
    } else if (c === '\r' && text[i + 1] === '\n') {
      row.push(field)
      rows.push(row)
      row = []
      field = ''
      i++
    } else field += c
  }
  return rows
}
