import { describe, expect, test } from 'bun:test'
import { getTableConfig } from 'drizzle-orm/sqlite-core'
import { tables } from '../src/store/schema.sqlite'
import { madeOnFirstRead } from '../src/util/made-on-first-read'

describe('made on first read', () => {
  test('a property is made when it is first read, once, and is a plain value after', () => {
    const made: string[] = []
    const lazy = madeOnFirstRead({
      a: () => {
        made.push('a')
        return { name: 'a' }
      },
      b: () => {
        made.push('b')
        return { name: 'b' }
      },
    })
    expect(made).toEqual([])
    const first = lazy.a
    expect(lazy.a).toBe(first)
    expect(made).toEqual(['a'])
    expect(Object.getOwnPropertyDescriptor(lazy, 'a')).toMatchObject({ value: first, writable: false })
    expect(Object.keys(lazy)).toEqual(['a', 'b'])
    expect(made).toEqual(['a'])
  })

  test("the schema's tables are drizzle's own tables, the same object at every read", () => {
    expect(tables.apiKeys).toBe(tables.apiKeys)
    // A foreign key names its table through the lazy object and reaches that table's own column.
    const keys = getTableConfig(tables.apiKeys).foreignKeys.map((key) => key.reference())
    const toProviderKeys = keys.find((key) => key.foreignTable === tables.providerKeys)
    expect(toProviderKeys?.foreignColumns).toEqual([tables.providerKeys.id])
  })
})
