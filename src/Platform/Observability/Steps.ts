import { Effect, References } from "effect"

/** What `Effect.fn(name)` and `Effect.fnUntraced` have in common: a generator made a function. */
export type Step = (name: string) => Effect.fn.Untraced

const traced: Step = (name) => Effect.fn(name)
const untraced: Step = () => Effect.fnUntraced

/**
 * The request path's step builder, chosen once when a layer is built: `Effect.fn(name)` while spans
 * are recorded, `Effect.fnUntraced` when the tracer is off, where a traced step would still capture
 * a call-site `Error` and open a no-op span on every call (docs/performance.md#findings).
 */
export const step: Effect.Effect<Step> = Effect.map(Effect.service(References.TracerEnabled), (enabled) =>
  enabled ? traced : untraced
)
