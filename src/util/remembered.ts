/**
 * A pure function's answers, kept for the few inputs a deployment uses (its model ids, its paths);
 * cleared whole when a flood of others fills it, so memory stays bounded. `undefined` answers are
 * kept too.
 */
export function remembered<T>(compute: (input: string) => T, max = 1024): (input: string) => T {
  const known = new Map<string, T>()
  return (input) => {
    const found = known.get(input)
    if (found !== undefined || known.has(input)) return found as T
    if (known.size >= max) known.clear()
    const answer = compute(input)
    known.set(input, answer)
    return answer
  }
}
