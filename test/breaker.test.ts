import { describe, expect, test } from 'bun:test'
import { CircuitBreaker } from '../src/util/breaker'

/** A breaker on a hand-moved clock, with every transition it reported and a primary that counts its calls. */
function setup(cooldownMs = 1_000) {
  const clock = { now: 0 }
  const changes: Array<{ open: boolean; cause?: unknown }> = []
  const breaker = new CircuitBreaker({
    cooldownMs,
    now: () => clock.now,
    onChange: (open, cause) => changes.push({ open, cause }),
  })
  const calls = { primary: 0 }
  const ok = async () => {
    calls.primary += 1
    return 'primary'
  }
  const failing = async (): Promise<string> => {
    calls.primary += 1
    throw new Error('refused')
  }
  const fallback = async () => 'fallback'
  return { clock, changes, breaker, calls, ok, failing, fallback }
}

/** A call that has not answered yet, settled by hand. */
function pending() {
  let settle: { resolve: (value: string) => void; reject: (error: Error) => void } | undefined
  const promise = new Promise<string>((resolve, reject) => {
    settle = { resolve, reject }
  })
  return { promise, settle: settle as { resolve: (value: string) => void; reject: (error: Error) => void } }
}

describe('the circuit breaker', () => {
  test('closed: every call goes to the primary', async () => {
    const { breaker, calls, ok, fallback, changes } = setup()
    expect(await breaker.run(ok, fallback)).toBe('primary')
    expect(await breaker.run(ok, fallback)).toBe('primary')
    expect(calls.primary).toBe(2)
    expect(breaker.state).toBe('closed')
    expect(breaker.isOpen).toBe(false)
    expect(changes).toEqual([])
  })

  test('a failure opens it: that call answers from the fallback, and the change is reported once with its cause', async () => {
    const { breaker, failing, fallback, changes } = setup()
    expect(await breaker.run(failing, fallback)).toBe('fallback')
    expect(breaker.state).toBe('open')
    expect(breaker.isOpen).toBe(true)
    expect(changes).toHaveLength(1)
    expect(changes[0]?.open).toBe(true)
    expect(String(changes[0]?.cause)).toContain('refused')
  })

  test('open: calls never reach the primary until the cooldown is over', async () => {
    const { breaker, clock, calls, ok, failing, fallback, changes } = setup()
    await breaker.run(failing, fallback)
    for (let i = 0; i < 100; i++) expect(await breaker.run(ok, fallback)).toBe('fallback')
    clock.now = 999
    expect(await breaker.run(ok, fallback)).toBe('fallback')
    expect(calls.primary).toBe(1)
    expect(changes).toHaveLength(1)
  })

  test('after the cooldown one probe goes through while the others keep falling back; its success closes it', async () => {
    const { breaker, clock, calls, failing, fallback, changes } = setup()
    await breaker.run(failing, fallback)
    clock.now = 1_000
    expect(breaker.state).toBe('half_open')
    const probe = pending()
    const probing = breaker.run(() => {
      calls.primary += 1
      return probe.promise
    }, fallback)
    expect(await breaker.run(failing, fallback)).toBe('fallback')
    expect(calls.primary).toBe(2)
    expect(breaker.isOpen).toBe(true)
    probe.settle.resolve('primary')
    expect(await probing).toBe('primary')
    expect(breaker.state).toBe('closed')
    expect(changes.map((c) => c.open)).toEqual([true, false])
  })

  test('a failed probe starts another cooldown, and says nothing', async () => {
    const { breaker, clock, calls, ok, failing, fallback, changes } = setup()
    await breaker.run(failing, fallback)
    clock.now = 1_500
    expect(await breaker.run(failing, fallback)).toBe('fallback')
    expect(breaker.state).toBe('open')
    clock.now = 2_499
    expect(await breaker.run(ok, fallback)).toBe('fallback')
    expect(calls.primary).toBe(2)
    clock.now = 2_500
    expect(await breaker.run(ok, fallback)).toBe('primary')
    expect(changes.map((c) => c.open)).toEqual([true, false])
  })

  test('a call begun before the breaker closed cannot reopen it by failing late', async () => {
    const { breaker, clock, ok, failing, fallback, changes } = setup()
    const late = pending()
    const lateCall = breaker.run(() => late.promise, fallback)
    await breaker.run(failing, fallback)
    clock.now = 1_000
    await breaker.run(ok, fallback)
    expect(breaker.state).toBe('closed')
    late.settle.reject(new Error('timed out'))
    expect(await lateCall).toBe('fallback')
    expect(breaker.state).toBe('closed')
    expect(changes.map((c) => c.open)).toEqual([true, false])
  })

  test('trip opens it without a call, once however often it is told', async () => {
    const { breaker, calls, ok, fallback, changes } = setup()
    breaker.trip(new Error('no connection'))
    breaker.trip(new Error('no connection'))
    expect(await breaker.run(ok, fallback)).toBe('fallback')
    expect(calls.primary).toBe(0)
    expect(changes).toHaveLength(1)
  })

  test("the fallback's own failure reaches the caller", async () => {
    const { breaker, failing } = setup()
    const broken = async (): Promise<string> => {
      throw new Error('fallback broke')
    }
    await expect(breaker.run(failing, broken)).rejects.toThrow('fallback broke')
    await expect(breaker.run(failing, broken)).rejects.toThrow('fallback broke')
  })
})
