import { describe, expect, test } from 'bun:test'
import { formatMs, formatMsAxis, formatUsd } from '../src/console/format'

/** The console's one money formatter, read as en-US (the locale bun and CI's chromium run in). */
describe("the console's money", () => {
  test('from a cent up: at least two decimals, up to four, with thousands separators', () => {
    expect(formatUsd(0.01)).toBe('$0.01')
    expect(formatUsd(0.015)).toBe('$0.015')
    expect(formatUsd(0.01125)).toBe('$0.0113')
    expect(formatUsd(2.5)).toBe('$2.50')
    expect(formatUsd(1234.5)).toBe('$1,234.50')
    expect(formatUsd(1_234_567.891)).toBe('$1,234,567.891')
  })

  test('below a cent: two significant digits, trailing zeros trimmed, never $0.00', () => {
    expect(formatUsd(0.00002)).toBe('$0.00002')
    expect(formatUsd(0.0034)).toBe('$0.0034')
    expect(formatUsd(0.0075)).toBe('$0.0075')
    expect(formatUsd(0.003)).toBe('$0.003')
    expect(formatUsd(0.000123456)).toBe('$0.00012')
    // One nano-dollar, the least gw counts.
    expect(formatUsd(1e-9)).toBe('$0.000000001')
    // Rounding up to a cent reads as the cent.
    expect(formatUsd(0.009999)).toBe('$0.01')
  })

  test('zero is $0.00, whatever its sign; negative amounts read as the positive ones do', () => {
    expect(formatUsd(0)).toBe('$0.00')
    expect(formatUsd(-0)).toBe('$0.00')
    expect(formatUsd(-0.00002)).toBe('-$0.00002')
    expect(formatUsd(-0.0034)).toBe('-$0.0034')
    expect(formatUsd(-1234.5)).toBe('-$1,234.50')
  })

  test('exact: every digit of a price as it was set, to the nano-dollar', () => {
    expect(formatUsd(0.00125, { exact: true })).toBe('$0.00125')
    expect(formatUsd(0.000002, { exact: true })).toBe('$0.000002')
    expect(formatUsd(0.123456789, { exact: true })).toBe('$0.123456789')
    expect(formatUsd(2.5, { exact: true })).toBe('$2.50')
    expect(formatUsd(0, { exact: true })).toBe('$0.00')
  })
})

describe("the console's milliseconds", () => {
  test('a figure is whole milliseconds; a chart step under one keeps its digits, so no two ticks read alike', () => {
    expect(formatMs(2.4)).toBe('2 ms')
    expect(formatMs(null)).toBe('-')
    expect([0, 0.5, 1].map(formatMsAxis)).toEqual(['0 ms', '0.5 ms', '1 ms'])
    expect(formatMsAxis(0.25)).toBe('0.25 ms')
    expect(formatMsAxis(1500)).toBe('1,500 ms')
  })
})
