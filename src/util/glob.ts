/**
 * Whether `value` matches `glob`, where `*` is any run of characters (none included) and every other
 * character is itself. Matched by one pass that returns to the last `*` on a mismatch, never by a
 * regular expression: `*a*a*a*a*b` against a long run of `a`s costs a regular expression exponential
 * backtracking, this at most the product of the two lengths.
 */
export function globMatches(glob: string, value: string): boolean {
  let g = 0
  let v = 0
  let star = -1
  let resume = 0
  while (v < value.length) {
    if (g < glob.length && glob[g] === '*') {
      star = g
      g += 1
      resume = v
    } else if (g < glob.length && glob[g] === value[v]) {
      g += 1
      v += 1
    } else if (star >= 0) {
      g = star + 1
      resume += 1
      v = resume
    } else return false
  }
  while (g < glob.length && glob[g] === '*') g += 1
  return g === glob.length
}
