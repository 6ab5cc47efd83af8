import { writeSync } from 'node:fs'

export const LOG_LEVELS = ['debug', 'info', 'warn', 'error'] as const
export type LogLevel = (typeof LOG_LEVELS)[number]

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 }

export type Fields = Record<string, string | number | boolean | null | undefined>

export interface Logger {
  /** Whether debug lines are written: callers on the hot path skip building their fields otherwise. */
  readonly debugging: boolean
  debug(message: string, fields?: Fields): void
  info(message: string, fields?: Fields): void
  warn(message: string, fields?: Fields): void
  error(message: string, fields?: Fields): void
}

/**
 * One JSON object per line on stderr (stdout belongs to the CLI's JSON answers). Callers pass
 * fields, never a credential: a key appears in a log line only as its display prefix.
 */
export function createLogger(level: LogLevel, write: (line: string) => void = writeToStderr): Logger {
  const at =
    (lineLevel: LogLevel) =>
    (message: string, fields: Fields = {}): void => {
      if (ORDER[lineLevel] < ORDER[level]) return
      write(`${JSON.stringify({ time: new Date().toISOString(), level: lineLevel, message, ...fields })}\n`)
    }
  return { debugging: level === 'debug', debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') }
}

export const silentLogger: Logger = { debugging: false, debug() {}, info() {}, warn() {}, error() {} }

/** Set once a line has gone to the stream: from then on every line does, so none overtakes another. */
let throughStream = false

/**
 * A line to stderr, written straight to its file descriptor. `process.stderr` is a Node stream that
 * Bun builds when it is first read, about 2 ms of a start, and at the default level `gw serve` logs
 * before it answers its first request; Node writes stderr synchronously to pipes and files too. When
 * the descriptor would block (a non-blocking pipe that is full) or fails, the stream takes what is
 * left of the line, and every line after it.
 */
export function writeToStderr(line: string): void {
  if (throughStream) {
    process.stderr.write(line)
    return
  }
  const bytes = Buffer.from(line)
  let written = 0
  try {
    while (written < bytes.length) written += writeSync(2, bytes, written)
  } catch {
    throughStream = true
    process.stderr.write(bytes.subarray(written))
  }
}
