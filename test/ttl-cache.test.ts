import { describe, expect, test } from 'bun:test'
import { TtlCache } from '../src/util/ttl-cache'

describe('a value held once loaded', () => {
  let clock = 0
  const cache = () => new TtlCache<string, number | Promise<number>>(10, 1_000, () => clock)

  test('callers while it loads share one load; once loaded it is answered at once, until its time is up', async () => {
    const values = cache()
    let loads = 0
    const load = async () => ++loads
    const first = values.held('a', load)
    const second = values.held('a', load)
    expect(first).toBe(second)
    expect(await first).toBe(1)
    expect(values.held('a', load)).toBe(1)
    clock += 1_001
    expect(await values.held('a', load)).toBe(2)
    expect(loads).toBe(2)
  })

  test('a load that fails is not kept, and one overtaken by a delete is not held', async () => {
    const values = cache()
    await expect(values.held('a', () => Promise.reject(new Error('down'))) as Promise<number>).rejects.toThrow('down')
    expect(await values.held('a', async () => 7)).toBe(7)
    let finish: (value: number) => void = () => undefined
    const slow = values.held('b', () => new Promise<number>((resolve) => (finish = resolve)))
    values.delete('b')
    finish(8)
    expect(await slow).toBe(8)
    expect(values.held('b', async () => 9)).toBeInstanceOf(Promise)
  })
})
