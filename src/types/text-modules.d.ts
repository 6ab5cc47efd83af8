// Migrations are embedded as text imports (`with { type: 'text' }`), bundled by `bun build --compile`.
declare module '*.sql' {
  const text: string
  export default text
}

// The console's HTML entry: Bun bundles it, and its scripts and styles, into the executable.
declare module '*.html' {
  const bundle: import('bun').HTMLBundle
  export default bundle
}
