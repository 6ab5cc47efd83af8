// Migrations are embedded as text imports (`with { type: 'text' }`), bundled by `bun build --compile`.
declare module '*.sql' {
  const text: string
  export default text
}
