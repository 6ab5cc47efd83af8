/**
 * Generates the migrations of both dialects with drizzle-kit, then writes the module that embeds
 * them in the binary (`bun build --compile` bundles static text imports, not a folder read at run time),
 * with the SQLite schema they end at, which a new database is given at once instead of replaying them,
 * and a SQLite database made with it, which a new data directory is given as a copy (sqlite-template.ts).
 * Their tags go to a module of their own, and so does the database copy: a start on a database that
 * has them all reads only the tags, and a start on a new data directory only the tags and the copy.
 *
 *   bun run db:generate -- <name>     e.g. bun run db:generate -- add_request_retention
 *   bun run db:generate               checks that the migrations match the schema (what CI runs)
 *
 * A new migration is named for what it does, not by drizzle-kit's random words: its file name
 * (`0023_add_request_retention.sql`) is the tag that `gw_migrations` records and the start-up log shows.
 * That tag is how a database knows the migration was applied, so a migration file is never renamed.
 * Without a name, a schema change is refused and drizzle-kit's files for it are removed again.
 */
import { Database as Sqlite } from 'bun:sqlite'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { LEDGER_DDL, SQLITE_SCHEMA_DUMP, statementsOf } from '../src/store/migrate'

const DIALECTS = ['sqlite', 'pg'] as const
const NAME = /^[a-z][a-z0-9]*(_[a-z0-9]+)*$/
const USAGE = 'usage: bun run db:generate [-- <name>]   (name: lower-case words joined by _, e.g. add_request_retention)'

function fail(message: string): never {
  console.error(message)
  process.exit(1)
}

/** The migration's name, from `<name>` or `--name <name>`; undefined when none is given. */
function nameFromArgs(args: readonly string[]): string | undefined {
  const rest = [...args]
  const flag = rest.indexOf('--name')
  if (flag >= 0) rest.splice(flag, 1)
  if (rest.length > 1 || rest.some((a) => a.startsWith('-'))) fail(USAGE)
  const name = rest[0]
  if (name !== undefined && !NAME.test(name)) fail(`"${name}" is not a migration name\n${USAGE}`)
  if (flag >= 0 && name === undefined) fail(USAGE)
  return name
}

/** Every file drizzle-kit writes for a dialect: the migrations and, under meta/, snapshots and the journal. */
function filesOf(dialect: string): string[] {
  const dir = join('drizzle', dialect)
  const meta = join(dir, 'meta')
  return [...readdirSync(dir).map((f) => join(dir, f)), ...(existsSync(meta) ? readdirSync(meta).map((f) => join(meta, f)) : [])]
}

const name = nameFromArgs(process.argv.slice(2))

const created: string[] = []
const journals = new Map<string, string>()
for (const dialect of DIALECTS) {
  const journal = join('drizzle', dialect, 'meta', '_journal.json')
  journals.set(journal, readFileSync(journal, 'utf8'))
  const before = new Set(filesOf(dialect))
  const run = Bun.spawnSync(
    ['bunx', 'drizzle-kit', 'generate', '--config', `drizzle/${dialect}.config.ts`, ...(name ? ['--name', name] : [])],
    { stdout: 'inherit', stderr: 'inherit' },
  )
  if (run.exitCode !== 0) process.exit(run.exitCode ?? 1)
  created.push(...filesOf(dialect).filter((f) => !before.has(f)))
}

if (name === undefined && created.length > 0) {
  for (const file of created) rmSync(file)
  for (const [journal, text] of journals) writeFileSync(journal, text)
  fail(
    [
      '',
      'The schema changed, but a migration needs a name that says what it does: the files drizzle-kit',
      'wrote above were removed again. Run it with one, e.g.: bun run db:generate -- add_request_retention',
    ].join('\n'),
  )
}

/** A dialect's migration files, in the order they apply. */
const migrationFiles = (dialect: string) =>
  readdirSync(join('drizzle', dialect))
    .filter((f) => f.endsWith('.sql'))
    .sort()

const tagOf = (file: string) => file.replace(/\.sql$/, '')
const imports: string[] = []
const lists: string[] = []
const tagLists: string[] = []
for (const dialect of DIALECTS) {
  lists.push(`export const ${dialect}Migrations: EmbeddedMigration[] = [`)
  migrationFiles(dialect).forEach((file, i) => {
    imports.push(`import ${dialect}${i} from '../../drizzle/${dialect}/${file}' with { type: 'text' }`)
    lists.push(`  { tag: '${tagOf(file)}', sql: ${dialect}${i} },`)
  })
  lists.push(']', '')
  tagLists.push(
    `export const ${dialect}MigrationTags: readonly string[] = ${JSON.stringify(migrationFiles(dialect).map(tagOf))}`,
    '',
  )
}

/** The schema the SQLite migrations end at, read back from a database they were replayed on. */
function sqliteSchemaAfterReplay(): string[] {
  const db = new Sqlite(':memory:')
  for (const file of migrationFiles('sqlite')) {
    const sql = readFileSync(join('drizzle', 'sqlite', file), 'utf8')
    for (const statement of statementsOf({ tag: file, sql })) db.run(statement)
  }
  const schema = db.query<{ sql: string }, []>(SQLITE_SCHEMA_DUMP).all()
  db.close()
  return schema.map((r) => r.sql)
}
/** Zero bytes shorter than this between two runs of data are kept inside one run. */
const ZERO_GAP = 32

/**
 * A SQLite database file with that schema and every migration recorded (at time 0), in WAL mode: a
 * new data directory is given a copy instead of running the statements. It is 94 % zero bytes (a page
 * per table and index, mostly empty), so only its runs of data are kept, each at its offset in base64;
 * gunzip took 1-2.3 ms at start-up where filling the runs in takes a tenth of that.
 */
function sqliteTemplate(schema: readonly string[]): { size: number; runs: Array<[number, string]> } {
  const dir = mkdtempSync(join(tmpdir(), 'gw-template-'))
  const file = join(dir, 'gw.db')
  const db = new Sqlite(file, { create: true })
  db.run('PRAGMA journal_mode = WAL')
  db.transaction(() => {
    for (const statement of schema) db.run(statement)
    db.run(LEDGER_DDL)
    for (const name of migrationFiles('sqlite'))
      db.run('INSERT INTO gw_migrations (tag, applied_at) VALUES (?, 0)', [name.replace(/\.sql$/, '')])
  })()
  db.close()
  const bytes = readFileSync(file)
  rmSync(dir, { recursive: true, force: true })
  const runs: Array<[number, string]> = []
  let at = 0
  while (at < bytes.length) {
    while (at < bytes.length && bytes[at] === 0) at++
    if (at === bytes.length) break
    let end = at
    let zeros = 0
    while (end + zeros < bytes.length && zeros < ZERO_GAP) {
      if (bytes[end + zeros] === 0) zeros++
      else {
        end += zeros + 1
        zeros = 0
      }
    }
    runs.push([at, bytes.subarray(at, end).toString('base64')])
    at = end
  }
  return { size: bytes.length, runs }
}
const freshSchema = sqliteSchemaAfterReplay()
lists.push(
  '/** What every SQLite migration above ends at, created at once on a database that has none of them (see migrate.ts). */',
  `export const sqliteFreshSchema: readonly string[] = ${JSON.stringify(freshSchema, null, 2)}`,
  '',
)
const lines = [
  '// Generated by scripts/generate-migrations.ts from drizzle/<dialect>/*.sql. Do not edit.',
  "import type { EmbeddedMigration } from './migrate'",
  ...imports,
  '',
  ...lists,
]
const OUT = 'src/store/migrations.generated.ts'
writeFileSync(OUT, lines.join('\n'))
const TEMPLATE_OUT = 'src/store/sqlite-template.generated.ts'
writeFileSync(
  TEMPLATE_OUT,
  [
    '// Generated by scripts/generate-migrations.ts from drizzle/sqlite/*.sql. Do not edit.',
    '// Apart from the migrations: a new data directory reads this and not their statements (sqlite-template.ts).',
    '',
    '/** A new SQLite database with the fresh schema and every migration recorded: its size, and its runs of data at their offsets. */',
    `export const sqliteTemplate: { size: number; runs: ReadonlyArray<readonly [number, string]> } = ${JSON.stringify(sqliteTemplate(freshSchema))}`,
    '',
  ].join('\n'),
)
const TAGS_OUT = 'src/store/migration-tags.generated.ts'
writeFileSync(
  TAGS_OUT,
  [
    '// Generated by scripts/generate-migrations.ts from drizzle/<dialect>/*.sql. Do not edit.',
    '// The tags of migrations.generated.ts, in order, apart from their statements (see Database.migrationTags).',
    '',
    ...tagLists,
  ].join('\n'),
)
// Formatted as the rest of the tree, so CI can tell a stale file from a regenerated one.
Bun.spawnSync(['bunx', 'biome', 'check', '--write', OUT, TEMPLATE_OUT, TAGS_OUT])
