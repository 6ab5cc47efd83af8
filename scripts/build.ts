/**
 * Builds the single executable `dist/gw`: minified (the authz macro is written to survive it, see
 * DESIGN.md section 6), with the migrations embedded as text imports. A worker's file must be an
 * entrypoint of its own to be in the executable: the request log's writer thread is one.
 *
 *   bun run build [--outfile <path>]    (dist/gw by default)
 */
const ENTRYPOINTS = ['src/main.ts', 'src/gateway/log-writer.worker.ts']
const at = process.argv.indexOf('--outfile')
const outfile = at > 0 ? (process.argv[at + 1] ?? 'dist/gw') : 'dist/gw'
// --bytecode: the executable starts from compiled bytecode instead of parsing its source, which
// halves the time to the first healthy /healthcheck (bench/results, issue 8).
const result = Bun.spawnSync(
  ['bun', 'build', '--compile', '--minify', '--bytecode', '--target=bun', ...ENTRYPOINTS, '--outfile', outfile],
  {
    stdout: 'inherit',
    stderr: 'inherit',
  },
)
process.exit(result.exitCode ?? 1)
