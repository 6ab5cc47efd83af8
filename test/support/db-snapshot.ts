import type { Database } from '../../src/store/database'

/**
 * The whole database as data: every table, every row, each row as canonical JSON (keys sorted, dates
 * as ISO strings), read through raw SQL so that no repository decides what is seen. Two snapshots
 * compare byte for byte, whatever the dialect returns for a column.
 */
export type DatabaseSnapshot = ReadonlyMap<string, readonly string[]>

export type Row = Record<string, unknown>

export interface RowChange {
  table: string
  change: 'added' | 'removed'
  row: Row
}

/** Every table of the database, schema-qualified on Postgres (the migration runner's own table included). */
async function tables(db: Database): Promise<string[]> {
  if (db.dialect === 'sqlite') {
    const rows = await db.query<{ name: string }>(
      "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name",
    )
    return rows.map((r) => `"${r.name}"`)
  }
  const rows = await db.query<{ schema: string; name: string }>(
    `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
     WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')
     ORDER BY table_schema, table_name`,
  )
  return rows.map((r) => (r.schema === 'public' ? `"${r.name}"` : `"${r.schema}"."${r.name}"`))
}

function canonical(value: unknown): unknown {
  if (value instanceof Date) return value.toISOString()
  if (value instanceof Uint8Array) return `bytes:${Buffer.from(value).toString('hex')}`
  if (typeof value === 'bigint') return value.toString()
  if (Array.isArray(value)) return value.map(canonical)
  if (typeof value === 'object' && value !== null) {
    const record = value as Record<string, unknown>
    return Object.fromEntries(
      Object.keys(record)
        .sort()
        .map((key) => [key, canonical(record[key])]),
    )
  }
  return value
}

/** A table's name as a diff shows it: without the quotes the queries need. */
const plain = (table: string) => table.replaceAll('"', '')

export async function snapshot(db: Database): Promise<DatabaseSnapshot> {
  const names = await tables(db)
  const out = new Map<string, string[]>(names.map((table) => [plain(table), []]))
  if (db.dialect === 'sqlite') {
    for (const table of names) {
      for (const row of await db.query<Row>(`SELECT * FROM ${table}`)) out.get(plain(table))?.push(JSON.stringify(canonical(row)))
    }
  } else {
    // One round trip for the whole database: a snapshot per request stays cheap on a networked server.
    const statement = names
      .map((table) => `SELECT '${plain(table)}' AS t, row_to_json(x)::text AS r FROM ${table} x`)
      .join(' UNION ALL ')
    for (const { t, r } of await db.query<{ t: string; r: string }>(statement))
      out.get(t)?.push(JSON.stringify(canonical(JSON.parse(r))))
  }
  for (const rows of out.values()) rows.sort()
  return out
}

/** Rows in `from` that `to` lacks, counting duplicates (a table without a key may hold equal rows). */
function missing(from: readonly string[], to: readonly string[]): string[] {
  const left = new Map<string, number>()
  for (const row of to) left.set(row, (left.get(row) ?? 0) + 1)
  const out: string[] = []
  for (const row of from) {
    const n = left.get(row) ?? 0
    if (n > 0) left.set(row, n - 1)
    else out.push(row)
  }
  return out
}

/** What changed between two snapshots: a changed row is its old version removed and its new one added. */
export function rowChanges(before: DatabaseSnapshot, after: DatabaseSnapshot): RowChange[] {
  const out: RowChange[] = []
  for (const table of new Set([...before.keys(), ...after.keys()])) {
    const was = before.get(table) ?? []
    const is = after.get(table) ?? []
    for (const row of missing(was, is)) out.push({ table, change: 'removed', row: JSON.parse(row) as Row })
    for (const row of missing(is, was)) out.push({ table, change: 'added', row: JSON.parse(row) as Row })
  }
  return out
}

/** The organisation a row belongs to: its `org_id`, or its own id for an organisation; none for the rest. */
export function ownerOf(table: string, row: Row): string | undefined {
  const owner = table === 'organizations' ? row.id : row.org_id
  return typeof owner === 'string' ? owner : undefined
}
