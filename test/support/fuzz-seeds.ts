/**
 * The seeds of the hostile-input suite's random calls.
 *
 * CI sets GW_FUZZ_SEED (.ci/run), so that a landing is decided by the code and not by the draw; a local
 * run without it draws a fresh seed, which is how new inputs get tried at all. A seed that once found a
 * defect is kept below and replayed by every run, CI's included, next to the run's own seed: the
 * defect it found stays fixed. A kept seed replays the calls it drew only while the generators stay as
 * they were, so the defect's own input goes into the fixed corpus too (QUERY_VALUES, RAW_BODIES, ...),
 * which does not depend on any seed.
 *
 * Each kept seed costs one more round of random calls per route (a few seconds per dialect): keep the
 * ones that found something, not every seed that was tried.
 */
export const DEFECT_SEEDS: readonly number[] = [
  // CI's default: the seed every landing has replayed.
  20261124,
  // A string field given an object whose `toString` is not a function: Elysia's validator threw while
  // describing it, a 500 on every route with a body (POST /v1/integration found it).
  1934774991,
  // Reported to fail the suite on another run (2026-11-27, sqlite's dispatch paths named beside the
  // report). Not reproduced here: each passed alone, twice, beside two busy cores, at four times the
  // random calls, and in the whole suite. Replayed by every run, so a failure of theirs is caught
  // where it happens, with the input fast-check shrinks it to.
  632493518, 849538493,
  // Reported the same way on 2026-11-27 (the run before named POST /v1/responses and POST
  // /v1/moderations on sqlite). Not reproduced here either: each passed alone and with Postgres, beside
  // three busy cores, and every call they draw was answered here within 0.5 s in its SDK's shape (the
  // calls' statuses, times and bodies were dumped and read). Replayed by every run for the same reason.
  884745901, 821688705,
  // Reported the same way on 2026-11-27, after the request record began keeping a call's single attempt
  // (its provider, model and error). Not reproduced here: each passed alone on both dialects, and at
  // four times the random calls beside a second run. Looking for it found a defect of that change: an
  // attempt whose text held NUL made Postgres refuse the whole record (set aside, the call missing from
  // the log). The writer now stores such text with U+FFFD, as it did for the record's own text; the
  // input is pinned, whatever the seed, in log-writer.test.ts.
  658552265, 713565238,
  // Reported on 2026-11-28. Alone at the default scale both passed; at GW_FUZZ_SCALE=4 they (and the
  // two above) failed POST /v1/feedback on Postgres with a 503, after Postgres's reads by id had been
  // made prepared statements. Those reads are built each time again on Postgres; the cause of the 503
  // is not yet understood (the suite's connections stayed at 16, far from Postgres's 100).
  482781770, 506107439,
  // Reported on 2026-11-28 (thirteenth session), the failing test not named beside the report (sqlite's
  // management routes and the deep-body test passed in it). Not reproduced here: each passed the whole
  // suite alone on both dialects, and its sqlite half at GW_FUZZ_SCALE=4 with the other seed's running
  // beside it; the other suites that draw from these seeds (Bedrock's signing and event stream, the
  // relays) passed with them too. Replayed by every run, so a failure of theirs is caught where it happens.
  1022144817, 234533580,
  // Reported on 2026-11-28 (fourteenth session) with sqlite's POST /v1/auth/login, the deep-body test
  // and dispatch's embeddings and responses named as passing beside the report, the failing test not
  // named. Not reproduced here: each passed the sqlite and the Postgres halves alone, and 944398589 its
  // sqlite half at GW_FUZZ_SCALE=4 beside the two Postgres runs. Replayed by every run for that reason.
  944398589, 597256257,
  // Reported on 2026-11-28 (fifteenth session), sqlite's POST /v1/auth/login quoted beside the report
  // as passing, the failing test not named. Not reproduced here: each passed the hostile-input suite
  // alone (both dialects), the whole `bun test` with its seed, the suite's sqlite half with two busy
  // loops on both cores, and both seeds' suites at once beside a whole run of the other. The slowest
  // calls they draw are sign-ins (argon2id, 240-880 ms each here), far under the 3 s a call may take.
  // Replayed by every run, so a failure of theirs is caught where it happens.
  379384099, 15740057,
  // Reported on 2026-11-28 (sixteenth session), with sqlite's POST /v1/chat/completions and POST
  // /v1/auth/login quoted beside the reports as passing, the failing tests not named. Not reproduced
  // here: each passed the hostile-input suite alone on both dialects, and 697652179 the whole `bun test`.
  // The sign-in test, the suite's slowest (8.5-13.8 s here), is some 45 sign-ins of 190 ms each (argon2id;
  // the slowest 491 ms, under the 3 s a call may take), and the tests after the two quoted passed in
  // every run. Replayed by every run, so a failure of theirs is caught where it happens.
  697652179, 532621379,
]

function runSeed(): number {
  const given = process.env.GW_FUZZ_SEED
  if (given === undefined || given === '') return Math.floor(Math.random() * 2 ** 31)
  const seed = Number(given)
  if (!Number.isSafeInteger(seed)) throw new Error(`GW_FUZZ_SEED must be a whole number, not ${JSON.stringify(given)}`)
  return seed
}

/** This run's own seed: GW_FUZZ_SEED, or a fresh one. */
export const RUN_SEED = runSeed()

/** Every seed this run tries: the kept ones, then its own (once, when it is not one of them). */
export const FUZZ_SEEDS: readonly number[] = [...new Set([...DEFECT_SEEDS, RUN_SEED])]

/** How to replay a seed's random calls (the kept seeds run as well; their calls do not change). */
export const replayCommand = (seed: number, file: string): string => `GW_FUZZ_SEED=${seed} bun test ${file}`
