/**
 * Builds the single executable `dist/gw`: minified (the authz macro is written to survive it, see
 * DESIGN.md section 6), with the migrations embedded as text imports. A worker's file must be an
 * entrypoint of its own to be in the executable: the request log's writer thread is one.
 *
 *   bun run build [--outfile <path>]    (dist/gw by default)
 */
const ENTRYPOINTS = ['src/main.ts', 'src/gateway/request-log/writer.worker.ts']
const at = process.argv.indexOf('--outfile')
const outfile = at > 0 ? (process.argv[at + 1] ?? 'dist/gw') : 'dist/gw'
// --bytecode: the executable starts from compiled bytecode instead of parsing its source, which
// halves the time to the first healthy /healthcheck (bench/results/2026-11-22-overhead-tuning.md).
// --compile-jit-policy: the executable starts with JavaScriptCore's tier-up thresholds 64 times the
// normal ones, and `gw serve` restores them once it listens (src/main.ts): what runs only at start-up
// is interpreted, not compiled. Time to healthy 84 -> 64 ms here; 64 and 1,000 measured the same
// (bench/results/2026-11-27-jit-threads-tail.md).
const START_UP_JIT_POLICY = '--compile-jit-policy=64'
// The executable takes its settings from the environment only (DESIGN.md): Bun's compiled programs
// would otherwise read a `.env` and a `bunfig.toml` from whatever directory they are started in, and a
// bunfig's `preload` runs code from there.
const FROM_ENVIRONMENT_ONLY = ['--no-compile-autoload-dotenv', '--no-compile-autoload-bunfig']
// --splitting: what is imported only on first use (the management API, the database and telemetry
// clients, protocol SDKs) goes to chunks of its own, evaluated when first imported. In one file, the
// node: modules those packages import were hoisted and evaluated at start-up, whether used or not.
// Splitting needs ES module output.
const LAZY_CHUNKS = ['--splitting', '--format=esm']
const result = Bun.spawnSync(
  [
    'bun',
    'build',
    '--compile',
    '--minify',
    '--bytecode',
    START_UP_JIT_POLICY,
    ...LAZY_CHUNKS,
    ...FROM_ENVIRONMENT_ONLY,
    '--target=bun',
    ...ENTRYPOINTS,
    '--outfile',
    outfile,
  ],
  {
    stdout: 'inherit',
    stderr: 'inherit',
  },
)
process.exit(result.exitCode ?? 1)
