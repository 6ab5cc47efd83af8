/**
 * Builds the single executable `dist/gw`: minified (the authz macro is written to survive it, see
 * DESIGN.md section 6), with the migrations embedded as text imports.
 */
const result = Bun.spawnSync(['bun', 'build', '--compile', '--minify', '--target=bun', 'src/main.ts', '--outfile', 'dist/gw'], {
  stdout: 'inherit',
  stderr: 'inherit',
})
process.exit(result.exitCode ?? 1)
