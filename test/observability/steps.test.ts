import { assert, describe, it } from "@effect/vitest"
import { Effect, Option, References } from "effect"
import { step } from "../../src/Platform/Observability/Steps.ts"

/** The span and the stack frame a step body runs in: what a traced step pays for on every call. */
const inside = Effect.gen(function* () {
  const fn = yield* step
  return yield* fn("Probe.step")(function* () {
    const span = yield* Effect.option(Effect.currentSpan)
    const frame = yield* References.CurrentStackFrame
    return { span: Option.map(span, (s) => s.name), frame: frame?.name }
  })()
})

describe("request-path steps", () => {
  it.effect("are spans and stack frames named like Effect.fn while the tracer is on", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* inside, { span: Option.some("Probe.step"), frame: "Probe.step" })
    })
  )

  it.effect("open no span and capture no stack frame when the tracer is off", () =>
    Effect.gen(function* () {
      assert.deepStrictEqual(yield* inside, { span: Option.none(), frame: undefined })
    }).pipe(Effect.provideService(References.TracerEnabled, false))
  )
})
