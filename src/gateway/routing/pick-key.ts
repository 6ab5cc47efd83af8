/**
 * The key for the next attempt of a call, among one provider's keys of an organisation:
 * - weighted at random among the keys neither cooling down nor tried by this call yet;
 * - when none of those has a weight, a standby key (weight 0), at random among them;
 * - when every untried key is cooling down, the untried key of the highest weight (the first of those
 *   in `keys`' order): a cool-down is a hint, and trying a key that may have recovered is better than
 *   failing a call without trying any;
 * - undefined when every key was tried.
 * `random` answers in [0, 1), as Math.random does; tests pass a seeded one.
 */
export function pickKey<T extends { id: string; weight: number }>(
  keys: readonly T[],
  cooling: ReadonlySet<string>,
  tried: ReadonlySet<string>,
  random: () => number = Math.random,
): T | undefined {
  // Most providers of an organisation have one key: every rule below picks it unless it was tried.
  if (keys.length === 1) {
    const only = keys[0] as T
    return tried.has(only.id) ? undefined : only
  }
  const untried = keys.filter((key) => !tried.has(key.id))
  if (untried.length === 0) return undefined
  const ready = untried.filter((key) => !cooling.has(key.id))
  // `weight > 0` is false for NaN too: a weight that is no positive number makes a standby key, never a favourite.
  const weighted = ready.filter((key) => key.weight > 0)
  if (weighted.length > 0) return weightedPick(weighted, random)
  if (ready.length > 0) return ready[Math.min(ready.length - 1, Math.floor(random() * ready.length))]
  return untried.reduce((best, key) => (weightOf(key) > weightOf(best) ? key : best))
}

const weightOf = (key: { weight: number }): number => Math.max(0, key.weight || 0)

function weightedPick<T extends { weight: number }>(keys: readonly T[], random: () => number): T | undefined {
  const total = keys.reduce((sum, key) => sum + key.weight, 0)
  let point = random() * total
  for (const key of keys) {
    point -= key.weight
    if (point < 0) return key
  }
  // Rounding can leave the point at the very end of the range: it belongs to the last key.
  return keys.at(-1)
}
