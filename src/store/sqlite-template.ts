import { closeSync, existsSync, fsyncSync, linkSync, openSync, rmSync, writeFileSync } from 'node:fs'
import { sqliteMigrationTags } from './migration-tags.generated'

/** Where linking a staged file into place is not possible, a new database is made by its statements instead. */
const NO_LINKS = new Set(['EPERM', 'ENOTSUP', 'EOPNOTSUPP', 'EXDEV', 'ENOSYS'])

/**
 * Makes a new SQLite database at `path` as a copy of the one every migration ends at, embedded in the
 * binary (scripts/generate-migrations.ts makes it with the fresh schema's own statements): running
 * those 80 statements was 3-6 ms of a first start's 24. Answers the migrations the copy records, or
 * `undefined` when it placed nothing and the database is to be opened and migrated as before: one is
 * there already, or what is left of one is (a write-ahead log or journal beside it would be replayed
 * into the copy), or another process placed its copy first.
 *
 * The copy is written beside the database, synced, and linked into place: a process starting beside
 * this one finds either no database or a whole one, never part of a file.
 */
export async function placeSqliteTemplate(path: string): Promise<readonly string[] | undefined> {
  if (existsSync(path) || existsSync(`${path}-wal`) || existsSync(`${path}-journal`)) return undefined
  // Read only here: a start on an existing database does not evaluate the copy's text.
  const { sqliteTemplate } = await import('./sqlite-template.generated')
  // Not the process id: replicas in containers sharing a volume are all process 1.
  const staged = `${path}.${crypto.randomUUID()}.new`
  const fd = openSync(staged, 'wx', 0o644)
  try {
    try {
      writeFileSync(fd, templateBytes(sqliteTemplate))
      fsyncSync(fd)
    } finally {
      closeSync(fd)
    }
    linkSync(staged, path)
    return sqliteMigrationTags
  } catch (error) {
    const code = (error as { code?: unknown }).code
    if (code === 'EEXIST' || (typeof code === 'string' && NO_LINKS.has(code))) return undefined
    throw error
  } finally {
    rmSync(staged, { force: true })
  }
}

function templateBytes(template: { size: number; runs: ReadonlyArray<readonly [number, string]> }): Buffer {
  const bytes = Buffer.alloc(template.size)
  for (const [offset, data] of template.runs) bytes.write(data, offset, 'base64')
  return bytes
}
