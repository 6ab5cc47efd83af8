import { describe, expect, test } from 'bun:test'
import { chargeBucket, drawBucket, slideWindow } from '../src/limits/algorithms'
import { type LimitVerdict, RateLimiter, type RuleSource } from '../src/limits/limiter'
import { formatPolicy, parsePolicyHeader } from '../src/limits/policy'
import { MemoryLimiterStore } from '../src/limits/store'

describe('the Gw-RateLimit-Policy header', () => {
  const valid: Array<[string, string]> = [
    ['100', '100;w=3600;u=request;s=global'],
    ['100;w=60', '100;w=60;u=request;s=global'],
    ['500;w=3600;u=cents', '500;w=3600;u=cents;s=global'],
    ['10;w=3600;u=request;s=user', '10;w=3600;u=request;s=user'],
    [' 10 ; s=model ; w=5 ', '10;w=5;u=request;s=model'],
    ['2.5;u=cents', '2.5;w=3600;u=cents;s=global'],
    ['7;s=prop;p=Customer', '7;w=3600;u=request;s=prop;p=customer'],
  ]
  for (const [header, normalized] of valid) {
    test(`"${header}" -> ${normalized}`, () => {
      expect(formatPolicy(parsePolicyHeader(header))).toBe(normalized)
    })
  }

  const invalid: Array<[string, string]> = [
    ['', 'positive quota'],
    ['abc', 'positive quota'],
    ['-5', 'positive quota'],
    ['0', 'quota must be a positive number'],
    ['2.5', 'whole number'],
    ['10;w=0', 'w must be a whole number of seconds from 1'],
    ['10;w=1.5', 'w must be a whole number'],
    ['10;w=abc', 'w must be a whole number'],
    ['10;u=tokens', 'u (unit) must be request or cents'],
    ['10;s=team', 's (segment) must be global, user, prop or model'],
    ['10;x=1', 'unknown part "x"'],
    ['10;w=60;w=60', '"w" is given twice'],
    ['10;w', '"w" is not <key>=<value>'],
    ['10;s=prop', 's=prop needs p=<property name>'],
    ['10;s=user;p=x', 'p=<property> applies only to s=prop'],
    ['10;s=prop;p=bad name', 's=prop needs p='],
  ]
  for (const [header, message] of invalid) {
    test(`"${header}" is refused: ${message}`, () => {
      expect(() => parsePolicyHeader(header)).toThrow(message)
    })
  }
})

// The arithmetic itself, at exact instants. What every limiter store promises (the in-process one and
// Redis's Lua alike: counting, refusing, refilling, atomic decisions) is in limiter-store.contract.test.ts.
describe('sliding window arithmetic (injected clock)', () => {
  test('the limit-th request passes, the next is refused with Retry-After until the full window weighs one less', () => {
    let state: ReturnType<typeof slideWindow>['state'] | undefined
    const windowMs = 60_000
    const at = 120_000 // the start of a window
    for (let i = 1; i <= 5; i++) {
      const step = slideWindow(state, 5, windowMs, at + i)
      expect(step.decision).toMatchObject({ allowed: true, remaining: 5 - i })
      state = step.state
    }
    const refused = slideWindow(state, 5, windowMs, at + 10_000)
    // 50 s to the window's end, where its five still weigh in full; they weigh 4 a fifth (12 s) into the next.
    expect(refused.decision).toMatchObject({ allowed: false, remaining: 0, retryAfterSeconds: 62 })
    expect(slideWindow(state, 5, windowMs, at + 10_000 + 61_999).decision.allowed).toBe(false)
    expect(slideWindow(state, 5, windowMs, at + 10_000 + 62_000).decision.allowed).toBe(true)
  })

  test('the previous window still weighs in proportion to its overlap', () => {
    let state = slideWindow(undefined, 10, 1_000, 0).state
    for (let i = 0; i < 9; i++) state = slideWindow(state, 10, 1_000, 500).state
    // 10 in the previous window; at 250 ms into the next, 75% of them still count: 7.5 used.
    const next = slideWindow(state, 10, 1_000, 1_250)
    expect(next.decision).toMatchObject({ allowed: true, remaining: 1 })
    const again = slideWindow(next.state, 10, 1_000, 1_250)
    expect(again.decision.allowed).toBe(true)
    expect(slideWindow(again.state, 10, 1_000, 1_250).decision.allowed).toBe(false)
    // Two windows later nothing of it is left.
    expect(slideWindow(again.state, 10, 1_000, 3_000).decision).toMatchObject({ allowed: true, remaining: 9 })
  })
})

describe('token bucket arithmetic (injected clock)', () => {
  test('capacity = quota; the quota-th request passes, the next is refused; refill restores exactly quota/window', () => {
    let state: ReturnType<typeof drawBucket>['state'] | undefined
    for (let i = 1; i <= 3; i++) {
      const step = drawBucket(state, 3, 3_000, 1, 1, 0)
      expect(step.decision).toMatchObject({ allowed: true, remaining: 3 - i })
      state = step.state
    }
    const refused = drawBucket(state, 3, 3_000, 1, 1, 0)
    expect(refused.decision).toMatchObject({ allowed: false, retryAfterSeconds: 1 })
    // 1 token per second: after 999 ms not yet, after 1000 ms exactly one.
    expect(drawBucket(refused.state, 3, 3_000, 1, 1, 999).decision.allowed).toBe(false)
    const refilled = drawBucket(refused.state, 3, 3_000, 1, 1, 1_000)
    expect(refilled.decision).toMatchObject({ allowed: true, remaining: 0 })
    // Never more than the capacity, however long it rests.
    expect(drawBucket(refilled.state, 3, 3_000, 1, 1, 1_000_000).decision.remaining).toBe(2)
  })

  test('cents: refused when the estimate cannot be covered; the real cost is taken after; a negative balance blocks until refilled', () => {
    const capacity = 100 // cents per hour
    const hour = 3_600_000
    expect(drawBucket(undefined, capacity, hour, 150, 0, 0).decision.allowed).toBe(false)
    const passed = drawBucket(undefined, capacity, hour, 60, 0, 0)
    expect(passed.decision.allowed).toBe(true)
    const charged = chargeBucket(passed.state, capacity, hour, 130, 0)
    expect(charged.tokens).toBe(-30)
    const blocked = drawBucket(charged, capacity, hour, 0, 0, 0)
    // 30 cents owed at 100 an hour is 1,080 s to pay off, when the balance is 0, still refused: a retry passes after 1,081.
    expect(blocked.decision).toMatchObject({ allowed: false, retryAfterSeconds: 1_081 })
    expect(drawBucket(charged, capacity, hour, 0, 0, 1_080_000).decision.allowed).toBe(false)
    expect(drawBucket(charged, capacity, hour, 0, 0, 1_080_001).decision.allowed).toBe(true)
  })
})

describe('the limiter answers at once when it can', () => {
  const request = { orgId: 'org-1', properties: {}, model: 'gpt-4o' }
  const limiter = (rulesFor: RuleSource['rulesFor']) =>
    new RateLimiter(new MemoryLimiterStore(() => 0), { requests: 2, windowSeconds: 60 }, { rulesFor })

  test('with a header and the in-process store: a verdict, no promise; past the limit, a refusal', () => {
    const limits = limiter(() => [])
    const first = limits.check({ ...request, policyHeader: '5;w=60' }) as LimitVerdict
    expect(first).not.toBeInstanceOf(Promise)
    expect(first.allowed).toBe(true)
    limits.check({ ...request, policyHeader: '5;w=60' })
    expect((limits.check({ ...request, policyHeader: '5;w=60' }) as LimitVerdict).allowed).toBe(false)
  })

  test('rules still being read: a promise of the same verdict', async () => {
    const limits = limiter(async () => [parsePolicyHeader('1;w=60')])
    const pending = limits.check(request)
    expect(pending).toBeInstanceOf(Promise)
    expect((await pending).allowed).toBe(true)
    expect((await limits.check(request)).allowed).toBe(false)
  })

  test('a malformed header is refused at once, as a 400', () => {
    const limits = limiter(() => [])
    expect(() => limits.check({ ...request, policyHeader: 'lots' })).toThrow(expect.objectContaining({ status: 400 }))
    expect(() => limits.check({ ...request, policyHeader: '5;w=60;s=user' })).toThrow(/has no Gw-User-Id header/)
  })
})

describe('the in-process limiter store, full', () => {
  const window = (key: string) => ({ kind: 'window' as const, key, limit: 3, windowMs: 60_000 })

  test('a flood of new keys pushes out idle ones, not the count of a key in use', () => {
    const store = new MemoryLimiterStore(() => 0, 4)
    const busy = { ...window('busy'), limit: 1_000 }
    for (let i = 0; i < 50; i++) {
      store.decide([busy])
      store.decide([window(`new-${i}`)])
    }
    // Fifty calls counted, none lost to the flood; the first of the new keys is long gone.
    expect(store.decide([busy])[0]?.remaining).toBe(1_000 - 51)
    expect(store.decide([window('new-0')])[0]?.remaining).toBe(2)
  })

  test('a key nobody used since the last pass is the one that goes', () => {
    const store = new MemoryLimiterStore(() => 0, 2)
    store.decide([window('a')])
    store.decide([window('b')])
    store.decide([window('a')])
    store.decide([window('c')])
    // b went; a kept its two calls.
    expect(store.decide([window('a')])[0]?.remaining).toBe(0)
    expect(store.decide([window('b')])[0]?.remaining).toBe(2)
  })
})
