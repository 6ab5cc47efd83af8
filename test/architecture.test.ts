import { describe, expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

/**
 * Dependencies point one way (DESIGN.md, "Shape of the code"): main -> app -> http, modules, gateway
 * -> the services below them -> store. This reads every import of src/ and fails on one that points
 * the wrong way, naming the file, the import and the rule.
 */
const ROOT = resolve(import.meta.dir, '..')
const SRC = join(ROOT, 'src')

interface Import {
  from: string
  /** The imported file, relative to src/ and without its extension (`gateway/gateway`). */
  target: string
  typeOnly: boolean
}

const files = [...new Bun.Glob('**/*.{ts,tsx}').scanSync(SRC)].filter((file) => !file.endsWith('.d.ts'))

/** `import ... from`, `export ... from` and `import(...)` of a relative path, with whether only types come. */
const IMPORT = /(?:^|\n)\s*(import|export)\s+(type\s+)?([^'";]*?)\s*from\s*['"](\.[^'"]+)['"]|import\(\s*['"](\.[^'"]+)['"]\s*\)/g

function importsOf(file: string): Import[] {
  const text = readFileSync(join(SRC, file), 'utf8')
  const found: Import[] = []
  for (const match of text.matchAll(IMPORT)) {
    const spec = match[4] ?? match[5]
    if (spec === undefined) continue
    const names = match[3] ?? ''
    // `import { type A, type B }` brings types only, as `import type { A, B }` does.
    const braces = /^\{([^}]*)\}$/.exec(names.trim())
    const allTyped = braces?.[1]?.split(',').every((name) => name.trim() === '' || name.trim().startsWith('type ')) ?? false
    const target = relative(SRC, resolve(join(SRC, dirname(file)), spec)).replace(/\.tsx?$/, '')
    found.push({ from: file, target, typeOnly: match[2] !== undefined || (braces !== null && allTyped) })
  }
  return found
}

const IMPORTS = files.flatMap(importsOf)

/** The top folder (or file) of a path under src/: `gateway`, `modules`, `app`, ... */
const area = (path: string): string => path.split('/')[0]?.replace(/\.ts$/, '') ?? path
/** `modules/teams/routes` -> `teams`; a file at the root of modules/ is `''`. */
const moduleOf = (path: string): string => {
  const parts = path.replace(/\.ts$/, '').split('/')
  return parts.length > 2 ? (parts[1] ?? '') : ''
}

/** The composition: only these wire the layers together. */
const COMPOSITION = new Set(['app', 'services', 'serving', 'serve', 'runtime', 'config', 'main'])
/** Below the gateway and the HTTP layer: shared services and vocabulary. */
const LOWER = new Set([
  'util',
  'errors',
  'error-answers',
  'log',
  'version',
  'money',
  'query',
  'limits',
  'security',
  'audit',
  'auth',
  'store',
  'egress',
  'spend',
  'governance',
  'mcp',
  'a2a',
  'directory',
])

/** What of the gateway a module may name (as types): its paths, and the answers of its own routes besides dispatch. */
const GATEWAY_ENTRY_POINTS: ReadonlySet<string> = new Set(['gateway/dispatch-routes', 'gateway/info'])

/** Files outside the console that it may bundle: no server dependency, nothing but the language. */
const BROWSER_SAFE = new Set(['util/csv'])
/** A module's model: the console takes the types of the API's answers from it, which the bundle erases. */
const isModel = (path: string): boolean => /^modules\/[^/]+\/model$/.test(path)

type Rule = { name: string; broken: (i: Import) => boolean }

const RULES: Rule[] = [
  { name: 'nothing imports main', broken: (i) => i.target === 'main' },
  {
    name: 'only the composition (main, runtime) reads the configuration; others take the slice they need',
    broken: (i) => i.target === 'config' && !['main', 'runtime'].includes(area(i.from)),
  },
  {
    name: 'store imports neither the gateway, modules, http nor the composition',
    broken: (i) =>
      area(i.from) === 'store' && (['gateway', 'modules', 'http'].includes(area(i.target)) || COMPOSITION.has(area(i.target))),
  },
  {
    name: 'the layers below the gateway import neither it, http, modules nor the composition',
    broken: (i) =>
      LOWER.has(area(i.from)) && (['gateway', 'modules', 'http'].includes(area(i.target)) || COMPOSITION.has(area(i.target))),
  },
  {
    name: 'the gateway imports neither modules nor http',
    broken: (i) => area(i.from) === 'gateway' && ['modules', 'http'].includes(area(i.target)),
  },
  {
    name: 'http imports neither modules nor the composition',
    broken: (i) => area(i.from) === 'http' && (area(i.target) === 'modules' || COMPOSITION.has(area(i.target))),
  },
  {
    name: "a module imports no other module's files, nor the router that the composition uses",
    broken: (i) => area(i.from) === 'modules' && area(i.target) === 'modules' && moduleOf(i.target) !== moduleOf(i.from),
  },
  {
    name: 'a module takes only types from the gateway: what they share lives a layer down, or is wired by the composition',
    broken: (i) => area(i.from) === 'modules' && area(i.target) === 'gateway' && !i.typeOnly,
  },
  {
    name: "a module sees only the gateway's entry points: what a call reads per call (connections, chains, settings) is the directory's, below both, so a call never climbs back up into a module",
    broken: (i) => area(i.from) === 'modules' && area(i.target) === 'gateway' && !GATEWAY_ENTRY_POINTS.has(i.target),
  },
  {
    name: "the console runs in the browser: it imports only its own files, plain helpers of util/ and the types of the modules' models, never server code",
    broken: (i) =>
      area(i.from) === 'console' &&
      area(i.target) !== 'console' &&
      !BROWSER_SAFE.has(i.target) &&
      !(i.typeOnly && isModel(i.target)),
  },
  {
    name: 'the composition reaches modules only through app.ts and services.ts',
    broken: (i) => ['serve', 'runtime', 'main', 'config'].includes(area(i.from)) && area(i.target) === 'modules',
  },
]

describe('the architecture', () => {
  test('reads the imports of every source file', () => {
    expect(files.length).toBeGreaterThan(100)
    expect(IMPORTS.length).toBeGreaterThan(500)
    // The parser sees type-only imports for what they are, in both spellings.
    expect(IMPORTS.some((i) => i.from === 'gateway/steps/settle.ts' && i.target === 'gateway/call' && i.typeOnly)).toBe(true)
    expect(IMPORTS.some((i) => i.from === 'gateway/gateway.ts' && i.target === 'gateway/call' && !i.typeOnly)).toBe(true)
    // The console's answers are typed from the models it imports types of.
    expect(IMPORTS.some((i) => i.from === 'console/agents.tsx' && i.target === 'modules/a2a-agents/model' && i.typeOnly)).toBe(
      true,
    )
  })

  for (const rule of RULES) {
    test(rule.name, () => {
      const broken = IMPORTS.filter(rule.broken).map((i) => `${i.from} imports ${i.target}`)
      expect(broken).toEqual([])
    })
  }

  test('every rule catches what it is about', () => {
    const probe = (from: string, target: string, typeOnly = false): string[] =>
      RULES.filter((rule) => rule.broken({ from, target, typeOnly })).map((rule) => rule.name)
    expect(probe('store/store.ts', 'gateway/gateway')).not.toEqual([])
    expect(probe('gateway/gateway.ts', 'http/authz')).not.toEqual([])
    expect(probe('gateway/gateway.ts', 'modules/teams/service')).not.toEqual([])
    expect(probe('http/authz.ts', 'app')).not.toEqual([])
    expect(probe('modules/teams/routes.ts', 'modules/roles/service')).not.toEqual([])
    expect(probe('modules/teams/routes.ts', 'modules/router')).not.toEqual([])
    expect(probe('modules/teams/routes.ts', 'gateway/gateway')).not.toEqual([])
    expect(probe('modules/provider-keys/service.ts', 'gateway/providers/provider', true)).not.toEqual([])
    expect(probe('directory/connections.ts', 'gateway/providers/provider', true)).not.toEqual([])
    expect(probe('directory/chains.ts', 'modules/fallback-chains/service', true)).not.toEqual([])
    expect(probe('app.ts', 'main')).not.toEqual([])
    expect(probe('log.ts', 'config')).not.toEqual([])
    expect(probe('runtime.ts', 'modules/health/service', true)).not.toEqual([])
    expect(probe('serve.ts', 'modules/health/routes')).not.toEqual([])
    expect(probe('console/requests.tsx', 'query/filter')).not.toEqual([])
    // A model's values (its schemas, TypeBox and Elysia with them) would be bundled; its types are erased.
    expect(probe('console/agents.tsx', 'modules/a2a-agents/model')).not.toEqual([])
    expect(probe('console/agents.tsx', 'modules/a2a-agents/service', true)).not.toEqual([])
    expect(probe('console/agents.tsx', 'query/model', true)).not.toEqual([])
    // And lets through what the layering allows.
    expect(probe('modules/teams/routes.ts', 'modules/teams/service')).toEqual([])
    expect(probe('modules/traffic/gateway-test.ts', 'gateway/dispatch-routes', true)).toEqual([])
    expect(probe('modules/provider-keys/service.ts', 'directory/connections', true)).toEqual([])
    expect(probe('gateway/gateway.ts', 'money/cost')).toEqual([])
    expect(probe('app.ts', 'modules/teams/routes')).toEqual([])
    expect(probe('services.ts', 'modules/teams/service')).toEqual([])
    expect(probe('console/agents.tsx', 'modules/a2a-agents/model', true)).toEqual([])
    expect(probe('console/requests.tsx', 'util/csv')).toEqual([])
  })
})
