/**
 * The request log's writer thread (see ThreadedLogWriter): it opens its own connection to the
 * database, then writes each batch it is sent with `writeEntries`, and answers with the balances the
 * batch's charges left and the records it set aside, or with why it failed (the server keeps the batch
 * and retries it).
 */
import { type Database, openDatabase } from '../../store/database'
import { errorMessage } from '../../store/faults'
import { createStore, type Store } from '../../store/store'
import type { LogWriter } from './request-log'
import { entriesOf, type Pacing, type WriterReply, type WriterRequest, writeEntries } from './writer'

declare const self: Worker

let db: Database | undefined
let write: LogWriter | undefined

const reply = (message: WriterReply) => self.postMessage(message)

/**
 * With SQLite the inserts run on this thread, so it is paced (see `Pacing`); with Postgres they run in
 * the database's own processes. A pause is a wait on a cell nothing ever signals: the thread sleeps for
 * about 20 µs (plus the kernel's timer slack) while the kernel runs whatever waits for its core. A timer
 * cannot pause for less than a millisecond, which would hold the open transaction's lock that long.
 */
const idle = new Int32Array(new SharedArrayBuffer(4))
const SQLITE_PACING: Pacing = { every: 8, upTo: 200, pause: () => void Atomics.wait(idle, 0, 0, 0.02) }

self.addEventListener('message', async (event: MessageEvent<WriterRequest>) => {
  const request = event.data
  try {
    if ('open' in request) {
      db = await openDatabase({ database: request.open })
      const store: Store = createStore(db)
      write = writeEntries(store, Date.now, db.dialect === 'sqlite' ? SQLITE_PACING : undefined)
      return reply({ id: request.id })
    }
    if ('close' in request) {
      await db?.close()
      db = undefined
      return reply({ id: request.id })
    }
    if (!write) throw new Error('the log writer has no database open')
    const outcome = await write(entriesOf(request.entries))
    reply({ id: request.id, balances: [...(outcome?.balances ?? [])], setAside: [...(outcome?.setAside ?? [])] })
  } catch (error) {
    reply({ id: request.id, error: errorMessage(error) })
  }
})
