/**
 * A UUID (version 7) that sorts after every one this process made before, the same millisecond
 * included: rows listed newest first by (time, id) keep their order when two share a millisecond.
 */
export const orderedId = (): string => Bun.randomUUIDv7()
