/**
 * Scenario (a): one request at a time over a kept-alive connection, so each figure is the arm's own
 * latency with nothing queued. Arms take turns in blocks, so background noise on a shared machine
 * lands on all of them rather than on whichever ran during it.
 */
import type { Target } from './arms'
import { timeFirstByte, timePlain } from './calls'
import type { Settings } from './config'

export interface SequentialTimings {
  plain: number[]
  firstByte: number[]
}

/**
 * `orderOf` gives the arms' order in each block (`block` counts from 0); the order given, every block,
 * when absent. An arm that always follows the same one inherits what that one leaves behind (a busy
 * server's trailing work keeps the cores awake: on a VM, the next round trips skip the wake-ups), so
 * `ab.ts`, with many arms, changes the order from block to block.
 */
export async function runSequential<T extends Target>(
  arms: T[],
  settings: Settings['sequential'],
  orderOf: (block: number) => T[] = () => arms,
): Promise<Map<T['name'], SequentialTimings>> {
  const timings = new Map<T['name'], SequentialTimings>(arms.map((arm) => [arm.name, { plain: [], firstByte: [] }]))
  for (const arm of arms) {
    for (let i = 0; i < settings.warmup; i++) {
      await timePlain(arm)
      await timeFirstByte(arm)
    }
  }
  for (let done = 0, block = 0; done < settings.requests; done += settings.block, block++) {
    const size = Math.min(settings.block, settings.requests - done)
    for (const arm of orderOf(block)) {
      const into = timings.get(arm.name) as SequentialTimings
      for (let i = 0; i < size; i++) into.plain.push(await timePlain(arm))
      for (let i = 0; i < size; i++) into.firstByte.push(await timeFirstByte(arm))
    }
  }
  return timings
}
