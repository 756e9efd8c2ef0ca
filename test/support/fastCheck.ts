import * as fc from "fast-check"

/**
 * Every property and sample of the run draws from one seed (`FUZZ_SEED`, which vitest.config.ts
 * picks when it is not set and the run's first line prints), so any failure replays with
 * `FUZZ_SEED=<seed>`; fast-check also prints seed and path with a counterexample.
 */
const seed = Number(process.env.FUZZ_SEED)
if (!Number.isInteger(seed)) throw new Error(`FUZZ_SEED: expected an integer, got ${process.env.FUZZ_SEED}`)
fc.configureGlobal({ ...fc.readConfigureGlobal(), seed })
