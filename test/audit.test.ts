import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createApp } from '../src/app'
import { auditEntry } from '../src/audit/entry'
import type { Fields, Logger } from '../src/log'
import { silentLogger } from '../src/log'
import { AuditService, EXPORT_LIMITS, type ExportLimits } from '../src/modules/audit/service'
import type { AuditQuery } from '../src/store/repositories/audit'
import type { OrgRepositories, Store } from '../src/store/store'
import { csvField, csvRow } from '../src/util/csv'
import { createHarness, DIALECTS, type Harness, type Org } from './support/harness'

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
    ['\tcmd', "'\tcmd"],
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

const HEADER = 'id,created_at,actor_id,principal_kind,action,target,source_ip,outcome,detail'
/** The window of the seeded entries, named explicitly: the export's default window ends now. */
const JANUARY = '?from=2026-01-01T00:00:00Z&to=2026-01-31T00:00:00Z'

type Page = {
  data: { entries: Array<{ id: string; action: string; target: string; createdAt: string }>; nextCursor: string | null }
}
type ErrorBody = { data: null; error: { code: string; message: string } }

/** A store whose audit page reads are counted and can be made to fail; everything else is the real one. */
function spiedStore(store: Store, failOnRead?: number) {
  const reads: AuditQuery[] = []
  const spied: Store = {
    ...store,
    org(orgId) {
      const real = store.org(orgId)
      const audit: OrgRepositories['audit'] = {
        ...real.audit,
        async query(q: AuditQuery) {
          reads.push(q)
          if (reads.length === failOnRead) throw new Error('the database went away')
          return real.audit.query(q)
        },
      }
      // The real repositories are made on first use by getters; only the audit log is replaced.
      return Object.create(real, { audit: { value: audit } }) as OrgRepositories
    },
  }
  return { store: spied, reads }
}

const readAll = async (stream: ReadableStream<Uint8Array>) => new Response(stream).text()

for (const dialect of DIALECTS) {
  describe(`GET /v1/organization/{id}/audit and audit.csv (${dialect})`, () => {
    let h: Harness
    let org: Org
    /** An organisation whose entries share their timestamps: the keyset's tie-break on id is what pages them. */
    let ties: Org
    beforeAll(async () => {
      h = await createHarness({ dialect })
      org = await h.org('enterprise')
      const actor = { kind: 'session' as const, id: org.ownerId, orgId: org.orgId }
      for (let i = 0; i < 5; i++) {
        await h.store.org(org.orgId).audit.append({
          ...auditEntry(actor, i % 2 === 0 ? 'thing.create' : 'thing.delete', `thing:${i}`, { at: new Date() }),
          createdAt: new Date(Date.UTC(2026, 0, 1, 0, i)),
        })
      }
      await h.store.org(org.orgId).audit.append({
        ...auditEntry(actor, 'thing.create', 'name, with "quotes"\nand a newline', {
          at: new Date(),
          detail: { note: '=SUM(A1)' },
          sourceIp: '+1 spreadsheet',
        }),
        createdAt: new Date(Date.UTC(2026, 0, 2)),
      })
      ties = await h.org('growth')
      const tieActor = { kind: 'api_key' as const, id: ties.ownerId, orgId: ties.orgId }
      for (let i = 0; i < 11; i++) {
        // Seven entries in one millisecond, between two on either side of it.
        const minute = i < 2 ? 0 : i < 9 ? 1 : 2
        await h.store.org(ties.orgId).audit.append({
          ...auditEntry(tieActor, 'tie', `tie:${i}`, { at: new Date() }),
          createdAt: new Date(Date.UTC(2026, 0, 5, 0, minute)),
        })
      }
    })
    afterAll(() => h.close())

    const url = (query = '', o = org) => `/v1/organization/${o.orgId}/audit${query}`
    const csvUrl = (query = '', o = org) => `/v1/organization/${o.orgId}/audit.csv${query}`
    /** The seeded entries as the export must list them: newest first, ties by id, newest first. */
    const expected = async (o: Org, from = '2026-01-01T00:00:00Z', to = '2026-01-31T00:00:00Z') =>
      (await h.store.org(o.orgId).audit.query({ from: new Date(from), to: new Date(to), limit: 10_000 })).sort(
        (a, b) => b.createdAt.getTime() - a.createdAt.getTime() || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0),
      )

    describe('the JSON pages', () => {
      test('newest first, in pages that join up without gaps or repeats', async () => {
        const seen: string[] = []
        let cursor: string | null = null
        do {
          const response = await h.request('GET', url(`?limit=2${cursor ? `&cursor=${cursor}` : ''}`), {
            token: org.ownerSession,
          })
          expect(response.status).toBe(200)
          const page = (await response.json()) as Page
          seen.push(...page.data.entries.map((e) => e.target))
          cursor = page.data.nextCursor
        } while (cursor)
        const all = await h.store.org(org.orgId).audit.list(1_000)
        expect(seen).toEqual(all.map((e) => e.target as string))
        expect(new Set(seen).size).toBe(seen.length)
      })

      test('entries that share a timestamp are paged by id, none skipped or repeated', async () => {
        for (const limit of [1, 2, 3, 4]) {
          const seen: string[] = []
          let cursor: string | null = null
          do {
            const page = (await (
              await h.request('GET', url(`?action=tie&limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`, ties), {
                token: ties.ownerSession,
              })
            ).json()) as Page
            seen.push(...page.data.entries.map((e) => e.id))
            cursor = page.data.nextCursor
          } while (cursor)
          expect(seen).toEqual((await expected(ties)).map((e) => e.id))
        }
      })

      test('filters by action and time', async () => {
        const page = (await (await h.request('GET', url('?action=thing.delete'), { token: org.ownerSession })).json()) as Page
        expect(page.data.entries.map((e) => e.target)).toEqual(['thing:3', 'thing:1'])
        const window = (await (
          await h.request('GET', url('?from=2026-01-01T00:01:00Z&to=2026-01-01T00:02:00Z'), { token: org.ownerSession })
        ).json()) as Page
        expect(window.data.entries.map((e) => e.target)).toEqual(['thing:2', 'thing:1'])
      })

      test('bad input: 400 naming it, never a 500', async () => {
        const cases: Array<[string, string]> = [
          ['?from=yesterday', 'from must be an ISO 8601 date-time'],
          ['?from=March%203%202026', 'from must be an ISO 8601 date-time'],
          ['?to=2026-13-45T00:00:00Z', 'to must be an ISO 8601 date-time'],
          ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from must not be later than to'],
          ['?cursor=bm9wZQ', 'cursor is not one this API gave out'],
          [`?cursor=${Buffer.from('|x').toString('base64url')}`, 'cursor is not one this API gave out'],
          // A forged cursor: a time no date holds, an id with a NUL (which Postgres text cannot hold).
          [`?cursor=${Buffer.from('[99999999999999999999,"x"]').toString('base64url')}`, 'cursor is not one this API gave out'],
          [`?cursor=${Buffer.from('[1,"a\\u0000b"]').toString('base64url')}`, 'cursor is not one this API gave out'],
          ['?limit=0', 'limit must be a whole number from 1 to 1000'],
          ['?limit=5000', 'limit must be a whole number from 1 to 1000'],
          ['?limit=2.5', 'limit must be a whole number from 1 to 1000'],
          ['?limit=many', 'limit must be a whole number from 1 to 1000'],
          ['?unknown=1', 'unknown'],
          [`?action=${'a'.repeat(201)}`, 'action'],
        ]
        for (const [query, message] of cases) {
          const response = await h.request('GET', url(query), { token: org.ownerSession })
          expect({ query, status: response.status }).toEqual({ query, status: 400 })
          expect(((await response.json()) as ErrorBody).error.message).toContain(message)
        }
      })
    })

    describe('the CSV export', () => {
      test('a header, every entry of the window newest first, fields quoted to survive commas, quotes, newlines and spreadsheets', async () => {
        const response = await h.request('GET', csvUrl(JANUARY), { token: org.ownerSession })
        expect(response.status).toBe(200)
        expect(response.headers.get('content-type')).toBe('text/csv; charset=utf-8')
        expect(response.headers.get('content-disposition')).toBe(
          'attachment; filename="audit-20260101T000000Z-20260131T000000Z.csv"',
        )
        const text = await response.text()
        expect(text.startsWith(`${HEADER}\r\n`)).toBe(true)
        expect(text.endsWith('\r\n')).toBe(true)
        expect(text).toContain(',"name, with ""quotes""\nand a newline",')
        expect(text).toContain(",'+1 spreadsheet,")
        expect(text).toContain('"{""note"":""=SUM(A1)""}"')
        const rows = parseCsv(text)
        const entries = await expected(org)
        expect(rows.slice(1)).toEqual(
          entries.map((e) => [
            e.id,
            e.createdAt.toISOString(),
            e.actorId ?? '',
            e.principalKind,
            e.action,
            e.target ?? '',
            e.sourceIp === '+1 spreadsheet' ? "'+1 spreadsheet" : (e.sourceIp ?? ''),
            e.outcome,
            e.detail ? JSON.stringify(e.detail) : '',
          ]),
        )
        expect(rows.map((r) => r[5])).toEqual([
          'target',
          'name, with "quotes"\nand a newline',
          'thing:4',
          'thing:3',
          'thing:2',
          'thing:1',
          'thing:0',
        ])
      })

      test('filters by action and actor like the pages do; an empty window is the header alone', async () => {
        const deletes = parseCsv(
          await (await h.request('GET', csvUrl(`${JANUARY}&action=thing.delete`), { token: org.ownerSession })).text(),
        )
        expect(deletes.slice(1).map((r) => r[5])).toEqual(['thing:3', 'thing:1'])
        const nobody = await h.request('GET', csvUrl(`${JANUARY}&actorId=nobody`), { token: org.ownerSession })
        expect(await nobody.text()).toBe(`${HEADER}\r\n`)
      })

      test('by default the 30 days up to now, as the service is told the time', async () => {
        const at = (iso: string) => new AuditService(h.store, silentLogger, () => Date.parse(iso))
        const mid = await at('2026-01-15T00:00:00Z').export(principalOf(org), {})
        expect(mid.from.toISOString()).toBe('2025-12-16T00:00:00.000Z')
        expect(mid.to.toISOString()).toBe('2026-01-15T00:00:00.000Z')
        expect(parseCsv(await readAll(mid.body)).length).toBe(1 + 6)
        // 30 days before 2026-02-01T00:01 is 2026-01-02T00:01: past the last seeded entry.
        const later = await at('2026-02-01T00:01:00Z').export(principalOf(org), {})
        expect(await readAll(later.body)).toBe(`${HEADER}\r\n`)
        // Given only `to`, the window is the 30 days before it; given only `from`, it runs to now.
        const before = await at('2026-06-01T00:00:00Z').export(principalOf(org), { to: '2026-01-01T00:03:00Z' })
        expect(
          parseCsv(await readAll(before.body))
            .slice(1)
            .map((r) => r[5]),
        ).toEqual(['thing:3', 'thing:2', 'thing:1', 'thing:0'])
        const since = await at('2026-01-20T00:00:00Z').export(principalOf(org), { from: '2026-01-01T00:04:00Z' })
        expect(since.to.toISOString()).toBe('2026-01-20T00:00:00.000Z')
        expect(parseCsv(await readAll(since.body)).length).toBe(1 + 2)
      })

      test('paged through the repository: 5 entries in pages of 2 are 3 reads, and the same file as one page', async () => {
        const limits: ExportLimits = { ...EXPORT_LIMITS, pageSize: 2 }
        const { store, reads } = spiedStore(h.store)
        const small = await new AuditService(store, silentLogger, Date.now, limits).export(principalOf(org), {
          from: '2026-01-01T00:00:00Z',
          to: '2026-01-01T23:59:59Z',
        })
        const paged = await readAll(small.body)
        expect(reads.map((q) => q.limit)).toEqual([2, 2, 2])
        expect(reads[0]?.before).toBeUndefined()
        const whole = await h.request('GET', csvUrl('?from=2026-01-01T00:00:00Z&to=2026-01-01T23:59:59Z'), {
          token: org.ownerSession,
        })
        expect(paged).toBe(await whole.text())
        expect(parseCsv(paged).length).toBe(1 + 5)
      })

      test('entries that share a timestamp cross page boundaries without a skip or a repeat', async () => {
        const want = (await expected(ties)).map((e) => e.id)
        expect(want.length).toBe(11)
        for (const pageSize of [1, 2, 3, 4, 7, 11, 12]) {
          const service = new AuditService(h.store, silentLogger, Date.now, { ...EXPORT_LIMITS, pageSize })
          const { body } = await service.export(principalOf(ties), { from: '2026-01-01T00:00:00Z', to: '2026-01-31T00:00:00Z' })
          expect({
            pageSize,
            ids: parseCsv(await readAll(body))
              .slice(1)
              .map((r) => r[0]),
          }).toEqual({ pageSize, ids: want })
        }
      })

      test('the first byte is out before the pages are read, and a client that leaves stops the reading', async () => {
        const { store, reads } = spiedStore(h.store)
        const service = new AuditService(store, silentLogger, Date.now, { ...EXPORT_LIMITS, pageSize: 1 })
        const { body } = await service.export(principalOf(org), { from: '2026-01-01T00:00:00Z', to: '2026-01-31T00:00:00Z' })
        const reader = body.getReader()
        const first = await reader.read()
        expect(new TextDecoder().decode(first.value)).toBe(`${HEADER}\r\n`)
        expect(reads.length).toBeLessThanOrEqual(1)
        await reader.read()
        await reader.cancel()
        const readsAtCancel = reads.length
        await Bun.sleep(5)
        expect(reads.length).toBe(readsAtCancel)
        expect(readsAtCancel).toBeLessThan(6)
      })

      test('a failure after the first byte cuts the download with an error, and the server log says so', async () => {
        const lines: Array<{ message: string; fields?: Fields }> = []
        const log: Logger = { ...silentLogger, error: (message, fields) => lines.push({ message, fields }) }
        const { store } = spiedStore(h.store, 2)
        const app = createApp(h.deps, {
          ...h.services,
          audit: new AuditService(store, log, Date.now, { ...EXPORT_LIMITS, pageSize: 2 }),
        })
        const response = await app.handle(
          new Request(`http://localhost${csvUrl(JANUARY)}`, { headers: { authorization: `Bearer ${org.ownerSession}` } }),
        )
        expect(response.status).toBe(200)
        const reader = (response.body as ReadableStream<Uint8Array>).getReader()
        let received = ''
        const outcome = await (async () => {
          for (;;) {
            const { done, value } = await reader.read()
            if (done) return 'ended cleanly'
            received += new TextDecoder().decode(value)
          }
        })().catch((error: Error) => error.message)
        expect(outcome).toBe('the database went away')
        // The header and the first page made it out; the rest did not.
        expect(parseCsv(received).length).toBe(1 + 2)
        expect(lines).toEqual([
          {
            message: 'audit export failed after it had begun; the download was cut',
            fields: { orgId: org.orgId, rowsWritten: 2, error: 'the database went away' },
          },
        ])
      })
    })

    describe('the bounds of an export', () => {
      test('a window longer than 366 days: 400 saying so, before any byte', async () => {
        const response = await h.request('GET', csvUrl('?from=2025-01-01T00:00:00Z&to=2026-01-03T00:00:00Z'), {
          token: org.ownerSession,
        })
        expect(response.status).toBe(400)
        const body = (await response.json()) as ErrorBody
        expect(body.error.code).toBe('bad_request')
        expect(body.error.message).toBe('from and to may be at most 366 days apart in one export; export the range in parts')
        // A whole leap year is one export; so is a `from` long enough ago that its 366 days end now.
        expect(
          (await h.request('GET', csvUrl('?from=2024-01-01T00:00:00Z&to=2024-12-31T23:59:59Z'), { token: org.ownerSession }))
            .status,
        ).toBe(200)
        const tooOld = await h.request('GET', csvUrl('?from=2020-01-01T00:00:00Z'), { token: org.ownerSession })
        expect(tooOld.status).toBe(400)
      })

      test('more entries than one export holds: 400 naming the bound, and exactly as many is fine', async () => {
        const bounded = (maxRows: number) => {
          const app = createApp(h.deps, {
            ...h.services,
            audit: new AuditService(h.store, silentLogger, Date.now, { ...EXPORT_LIMITS, maxRows }),
          })
          return app.handle(
            new Request(`http://localhost${csvUrl(JANUARY)}`, { headers: { authorization: `Bearer ${org.ownerSession}` } }),
          )
        }
        const refused = await bounded(5)
        expect(refused.status).toBe(400)
        expect(((await refused.json()) as ErrorBody).error.message).toBe(
          'more than 5 entries match from 2026-01-01T00:00:00.000Z to 2026-01-31T00:00:00.000Z, the most one export holds; narrow from and to, or filter by action or actorId',
        )
        const fits = await bounded(6)
        expect(fits.status).toBe(200)
        expect(parseCsv(await fits.text()).length).toBe(1 + 6)
      })

      test('bad query parameters: 400 naming them, never a 500', async () => {
        const cases: Array<[string, string]> = [
          ['?from=yesterday', 'from must be an ISO 8601 date-time'],
          ['?to=soon', 'to must be an ISO 8601 date-time'],
          ['?from=2026-02-01T00:00:00Z&to=2026-01-01T00:00:00Z', 'from must not be later than to'],
          ['?from=2999-01-01T00:00:00Z', 'from must not be later than to (now, when to is not given)'],
          // Paging belongs to the JSON route; an export is bounded by its window.
          ['?limit=10', 'limit'],
          ['?cursor=abc', 'cursor'],
          ['?unknown=1', 'unknown'],
          [`?from=${'2'.repeat(65)}`, 'from'],
          [`?actorId=${'a'.repeat(201)}`, 'actorId'],
        ]
        for (const [query, message] of cases) {
          const response = await h.request('GET', csvUrl(query), { token: org.ownerSession })
          expect({ query, status: response.status }).toEqual({ query, status: 400 })
          expect(((await response.json()) as ErrorBody).error.message).toContain(message)
        }
      })
    })

    describe('who may read it', () => {
      test('audit.read is required: a Member or an API key gets 403 naming it, an Admin reads', async () => {
        const member = await h.member(org.orgId, 'member')
        for (const token of [org.apiKey, member.sessionToken]) {
          for (const path of [url(), csvUrl()]) {
            const response = await h.request('GET', path, { token })
            expect(response.status).toBe(403)
            expect(((await response.json()) as ErrorBody).error.message).toContain('audit.read')
          }
        }
        const admin = await h.member(org.orgId, 'admin')
        expect((await h.request('GET', url(), { token: admin.sessionToken })).status).toBe(200)
        expect((await h.request('GET', csvUrl(JANUARY), { token: admin.sessionToken })).status).toBe(200)
      })

      test('a custom role with audit.read alone may read it, one without may not', async () => {
        const role = async (permissions: string[]) => {
          const created = await h.request('POST', `/v1/organization/${org.orgId}/roles`, {
            token: org.ownerSession,
            body: { name: `auditor ${permissions.join(' ')}`, permissions },
          })
          const { id } = ((await created.json()) as { data: { id: string } }).data
          return (await h.member(org.orgId, id)).sessionToken
        }
        const auditor = await role(['audit.read'])
        const analyst = await role(['traffic.read', 'reports.read'])
        expect((await h.request('GET', csvUrl(JANUARY), { token: auditor })).status).toBe(200)
        expect((await h.request('GET', csvUrl(JANUARY), { token: analyst })).status).toBe(403)
      })

      test("another organisation's log is 404, and none of it is sent", async () => {
        for (const path of [url('', ties), csvUrl(JANUARY, ties)]) {
          const response = await h.request('GET', path, { token: org.ownerSession })
          expect(response.status).toBe(404)
          expect(await response.text()).not.toContain('tie:')
        }
      })
    })
  })
}

function principalOf(o: Org) {
  return {
    kind: 'session' as const,
    orgId: o.orgId,
    tier: 'enterprise' as const,
    actorId: o.ownerId,
    userId: o.ownerId,
    permissions: new Set(['audit.read' as const]),
  }
}

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
