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

  test('in the last quarter of its time a held value is answered at once and reloaded once, in the background; the reload is held a whole time', async () => {
    clock = 0
    const values = cache()
    let loads = 0
    let finish: (value: number) => void = () => undefined
    const load = () => {
      loads += 1
      return loads === 1 ? Promise.resolve(1) : new Promise<number>((resolve) => (finish = resolve))
    }
    expect(await values.held('a', load)).toBe(1)
    clock = 700
    expect(values.held('a', load)).toBe(1)
    expect(loads).toBe(1)
    clock = 800
    expect(values.held('a', load)).toBe(1)
    expect(values.held('a', load)).toBe(1)
    expect(loads).toBe(2)
    finish(2)
    await Bun.sleep(0)
    expect(values.held('a', load)).toBe(2)
    // Held from 800 until 1,800, reloaded ahead from 1,550.
    clock = 1_500
    expect(values.held('a', load)).toBe(2)
    expect(loads).toBe(2)
  })

  test('a reload never serves a value past its time: when none came in time, the caller waits for a load', async () => {
    clock = 0
    const values = cache()
    let loads = 0
    const load = async () => ++loads
    expect(await values.held('a', load)).toBe(1)
    clock = 1_000
    const waited = values.held('a', load)
    expect(waited).toBeInstanceOf(Promise)
    expect(await waited).toBe(2)
  })

  test('a failed reload leaves the value until its time is up and is tried again; one overtaken by a delete is not kept', async () => {
    clock = 0
    const values = cache()
    let fail = true
    let loads = 0
    const load = async () => {
      loads += 1
      if (loads > 1 && fail) throw new Error('down')
      return loads
    }
    expect(await values.held('a', load)).toBe(1)
    clock = 800
    expect(values.held('a', load)).toBe(1)
    await Bun.sleep(0)
    expect(values.held('a', load)).toBe(1)
    await Bun.sleep(0)
    expect(loads).toBe(3)
    fail = false
    let finish: (value: number) => void = () => undefined
    const slow = () => new Promise<number>((resolve) => (finish = resolve))
    expect(values.held('a', slow)).toBe(1)
    values.delete('a')
    finish(99)
    await Bun.sleep(0)
    expect(await values.held('a', async () => 5)).toBe(5)
  })

  test('a loader that throws at once during a reload leaves the held value', async () => {
    clock = 0
    const values = cache()
    expect(await values.held('a', async () => 1)).toBe(1)
    clock = 900
    expect(
      values.held('a', () => {
        throw new Error('thrown at once')
      }),
    ).toBe(1)
    await Bun.sleep(0)
    expect(values.held('a', async () => 2)).toBe(1)
  })
})
