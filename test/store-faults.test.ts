import { describe, expect, test } from 'bun:test'
import { errorMessage, storeFault } from '../src/store/faults'

const coded = (code: string, message = code) => Object.assign(new Error(message), { code })
/** How the query builder wraps a driver's error: the statement and its values, the driver's error as cause. */
const wrapped = (cause: Error) =>
  new Error('Failed query: insert into "requests" values ($1)\nparams: a prompt with a secret in it', { cause })

describe('what a failed statement says about its cause', () => {
  test('unreachable or unable to work now: unavailable', () => {
    for (const code of [
      'ECONNREFUSED',
      'CONNECTION_CLOSED',
      'CONNECT_TIMEOUT',
      '08006',
      '57P01',
      '53300',
      'SQLITE_BUSY',
      'SQLITE_FULL',
    ])
      expect(storeFault(coded(code))).toBe('unavailable')
  })

  test('values the database refuses: rejected', () => {
    for (const code of ['22021', '22003', '22P05', '23505', '23502', '54000', 'SQLITE_CONSTRAINT_PRIMARYKEY', 'SQLITE_TOOBIG'])
      expect(storeFault(coded(code))).toBe('rejected')
    expect(storeFault(new TypeError('Do not know how to serialize a BigInt'))).toBe('rejected')
  })

  test('read through the wrappers, and nothing for what is not the database', () => {
    expect(storeFault(wrapped(coded('ECONNREFUSED')))).toBe('unavailable')
    expect(storeFault(new Error('outer', { cause: wrapped(coded('22021')) }))).toBe('rejected')
    expect(storeFault(new Error('a bug of ours'))).toBeUndefined()
    expect(storeFault(coded('42P01'))).toBeUndefined()
    expect(storeFault('a string')).toBeUndefined()
  })

  test("a message for the log is the driver's, never the statement with its values", () => {
    const message = errorMessage(wrapped(coded('22021', 'invalid byte sequence for encoding "UTF8": 0x00')))
    expect(message).toBe('invalid byte sequence for encoding "UTF8": 0x00')
    expect(errorMessage(new Error('plain'))).toBe('plain')
    expect(errorMessage('text')).toBe('text')
  })
})
