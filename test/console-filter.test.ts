import { describe, expect, test } from 'bun:test'
import {
  type Condition,
  emptyTree,
  FILTER_FIELDS,
  fromApiFilter,
  type Group,
  OPERATORS,
  PROPERTY_FIELD,
  toApiFilter,
} from '../src/console/filter-tree'
import { FIELDS, OPERATORS as SERVER_OPERATORS } from '../src/query/filter'

const condition = (field: string, operator: string, value: string, property = ''): Condition => ({
  kind: 'condition',
  field,
  property,
  operator,
  value,
})

describe("the console's filter tree", () => {
  test('offers exactly the fields and operators the server filters on', () => {
    expect(Object.keys(FILTER_FIELDS).sort()).toEqual(Object.keys(FIELDS).sort())
    for (const [field, { type }] of Object.entries(FILTER_FIELDS)) expect(type).toBe(FIELDS[field]?.type as typeof type)
    expect(OPERATORS).toEqual(SERVER_OPERATORS)
  })

  test('an empty tree, or one of unfinished conditions, is every request', () => {
    expect(toApiFilter(emptyTree())).toBe('all')
    expect(toApiFilter({ kind: 'group', operator: 'or', children: [condition('model', 'equals', '  ')] })).toBe('all')
    expect(fromApiFilter('all')).toEqual(emptyTree())
  })

  test('conditions fold into branches of their group, values typed as the API takes them', () => {
    const tree: Group = {
      kind: 'group',
      operator: 'and',
      children: [
        condition('model', 'equals', 'gpt-4o'),
        {
          kind: 'group',
          operator: 'or',
          children: [condition('latency_ms', 'gt', '250'), condition(PROPERTY_FIELD, 'contains', 'acme', 'customer')],
        },
        condition('ptb', 'equals', 'false'),
      ],
    }
    expect(toApiFilter(tree)).toEqual({
      left: {
        left: { request: { model: { equals: 'gpt-4o' } } },
        operator: 'and',
        right: {
          left: { request: { latency_ms: { gt: 250 } } },
          operator: 'or',
          right: { request: { properties: { customer: { contains: 'acme' } } } },
        },
      },
      operator: 'and',
      right: { request: { ptb: { equals: false } } },
    })
    // And a saved filter comes back as the same tree to edit.
    const back = fromApiFilter(toApiFilter(tree))
    expect(toApiFilter(back as Group)).toEqual(toApiFilter(tree))
    expect(back?.children).toHaveLength(3)
  })

  test('a leaf of several fields is a group of all of them; a filter the form cannot show is undefined', () => {
    expect(fromApiFilter({ request: { model: { equals: 'a' }, status: { equals: 'error' } } })).toEqual({
      kind: 'group',
      operator: 'and',
      children: [condition('model', 'equals', 'a'), condition('status', 'equals', 'error')],
    })
    expect(fromApiFilter(['not', 'a', 'filter'])).toBeUndefined()
    expect(fromApiFilter({ left: 'x', operator: 'and', right: 7 })).toBeUndefined()
  })
})
