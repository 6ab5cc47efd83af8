import { describe, expect, test } from 'bun:test'
import { newRequestId } from '../src/gateway/request-id'
import { UUID_V4 } from '../src/util/uuid'

describe('request ids', () => {
  test('are UUID v4 by the pattern of spec 4.2, and unique', () => {
    const ids = Array.from({ length: 10_000 }, newRequestId)
    for (const id of ids) expect(id).toMatch(new RegExp(UUID_V4))
    expect(new Set(ids).size).toBe(ids.length)
  })

  test('sort in the order they were made, within a millisecond and across them', async () => {
    const early = Array.from({ length: 1_000 }, newRequestId)
    await Bun.sleep(2)
    const late = Array.from({ length: 1_000 }, newRequestId)
    const made = [...early, ...late]
    expect(made.toSorted()).toEqual(made)
  })

  test('begin with the time they were made, in milliseconds', () => {
    const before = Date.now()
    const id = newRequestId()
    const at = Number.parseInt(id.replaceAll('-', '').slice(0, 12), 16)
    expect(at).toBeGreaterThanOrEqual(before)
    expect(at).toBeLessThanOrEqual(Date.now())
  })
})
