import { hash } from "node:crypto"
import { Clock, Context, Duration, Effect, Exit, identity, Layer, Schema, Semaphore } from "effect"
import { SqlClient } from "effect/sql"
import { idempotencySlot, MemoryStore } from "../Platform/MemoryStore.ts"
import { step } from "../Platform/Observability/Steps.ts"
import {
  AnswerBy,
  answerWithin,
  availableOrFail,
  type OutcomeUnknown,
  StoreUnavailable,
  writeOrFail
} from "../Platform/Sql/Outcome.ts"

export const leaseMillis = 30_000
export const memoryMillis = 24 * 60 * 60 * 1000

/** What a completed request wrote, as the lead write stored it (rows before migration 0003 also hold `lead_url`). */
export const StoredResponse = Schema.Struct({
  lead_id: Schema.String,
  status: Schema.Literals(["created", "enriched"])
})
export type StoredResponse = typeof StoredResponse.Type

/**
 * A reservation as `idempotency_key_reserve` (migrations/functions.ts) reads it: `token` reserves
 * the key until `lease_expires_at` if it is free at `now` (a lease run out, a completion before
 * `forget_before` forgotten).
 */
export const ReservationDocument = Schema.Struct({
  livemode: Schema.Boolean,
  origin_id: Schema.String,
  key: Schema.String,
  fingerprint: Schema.String,
  token: Schema.String,
  now: Schema.DateFromString,
  lease_expires_at: Schema.DateFromString,
  forget_before: Schema.DateFromString
})
const encodeReservation = Schema.encodeEffect(ReservationDocument)

/** What `idempotency_key_reserve` answers: reserved, or the key's row as it stands. */
export const ReserveRow = Schema.Struct({
  reserved: Schema.Boolean,
  state: Schema.NullOr(Schema.Literals(["in_progress", "completed"])),
  fingerprint: Schema.NullOr(Schema.String),
  response: Schema.NullOr(StoredResponse)
})
const decodeReserveRow = Schema.decodeUnknownEffect(ReserveRow)

const SettleRow = Schema.Struct({
  state: Schema.Literals(["in_progress", "completed"]),
  response: Schema.NullOr(StoredResponse),
  lease_token: Schema.NullOr(Schema.String)
})
const decodeSettleRows = Schema.decodeUnknownEffect(Schema.Array(SettleRow))

/**
 * What became of a key whose write's answer was lost: `Committed`, the write's stored answer (the
 * key found completed by this very reservation; the retry replays it); `Released`, nothing of this
 * request was written (a write commits only with its key's completion, so a released reservation
 * can no longer commit; a key found reserved anew after the lease, or completed by that other
 * request, is not this one's); `Kept`, the database did not
 * answer in time: the key stays reserved while the instance keeps asking, its lease the last resort.
 */
export type Settled =
  | { readonly _tag: "Committed"; readonly response: StoredResponse }
  | { readonly _tag: "Released" }
  | { readonly _tag: "Kept" }

/** Between two questions to a database that does not answer. */
const settlePause = Duration.millis(200)
const settlePauseMillis = Duration.toMillis(settlePause)
/** Kept back from the request's `AnswerBy` for what follows the settling: the log line, the 500 sent. */
const settleMargin = 400

/** A key in a log line: a digest, since partners may put meaning in their keys. */
export const keyDigest = (key: string) => hash("sha256", key).slice(0, 12)

/** The `idempotency.result` span attribute for what a reservation found. */
const results = {
  Reserved: "new",
  Replay: "replay",
  Conflict: "conflict",
  InProgress: "in_progress"
} as const

/** `reservation` with the `idempotency.result` attribute set on the current span. */
export const annotated = <R extends Reservation>(reservation: R): Effect.Effect<R> =>
  Effect.as(Effect.annotateCurrentSpan({ "idempotency.result": results[reservation._tag] }), reservation)

/** What the first step of a request with an Idempotency-Key found. */
export type Reservation =
  | { readonly _tag: "Reserved"; readonly token: string }
  | { readonly _tag: "Replay"; readonly response: StoredResponse }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "InProgress" }

/** What a key that was not free holds, for a request with `fingerprint`; none is a key just released, still in progress. */
export const foundOf = (
  row: Pick<typeof ReserveRow.Type, "state" | "fingerprint" | "response"> | undefined,
  fingerprint: string
): Exclude<Reservation, { readonly _tag: "Reserved" }> =>
  row === undefined || row.state === "in_progress" || row.response === null
    ? { _tag: "InProgress" }
    : row.fingerprint !== fingerprint
      ? { _tag: "Conflict" }
      : { _tag: "Replay", response: row.response }

/** A reservation's row read as what it found: `token`'s when reserved, else {@link foundOf}. */
const reservationOf = (
  row: typeof ReserveRow.Type | undefined,
  token: string,
  fingerprint: string
): Reservation => (row?.reserved === true ? { _tag: "Reserved", token } : foundOf(row, fingerprint))

/** The times `idempotency_key_reserve` takes for a reservation made at `now` (clock millis). */
export const reservationTimes = (now: number) => ({
  now: new Date(now),
  leaseExpiresAt: new Date(now + leaseMillis),
  forgetBefore: new Date(now - memoryMillis)
})

/** Frees `token`'s reservation on the memory store, if it still holds the key: `release_idempotency_key`. */
export const releaseIn = (store: MemoryStore["Service"], slot: IdempotencySlot, token: string) => {
  const id = idempotencySlot(slot.originId, slot.livemode, slot.key)
  const existing = store.idempotency.get(id)
  if (existing?.state === "in_progress" && existing.token === token) store.idempotency.delete(id)
}

/** The same rule on the memory store: `token` reserves a free key, else what the key's entry holds. */
export const reserveIn = (
  store: MemoryStore["Service"],
  slot: IdempotencySlot,
  fingerprint: string,
  token: string,
  now: number
): Reservation => {
  const id = idempotencySlot(slot.originId, slot.livemode, slot.key)
  const existing = store.idempotency.get(id)
  const free =
    existing === undefined ||
    (existing.state === "in_progress" && existing.leaseExpiresAt <= now) ||
    (existing.state === "completed" && existing.completedAt <= now - memoryMillis)
  if (free) {
    store.idempotency.set(id, { state: "in_progress", fingerprint, token, leaseExpiresAt: now + leaseMillis })
    return { _tag: "Reserved", token }
  }
  if (existing.state === "in_progress") return { _tag: "InProgress" }
  if (existing.fingerprint !== fingerprint) return { _tag: "Conflict" }
  return { _tag: "Replay", response: existing.response }
}

export interface IdempotencySlot {
  readonly organizationId: string
  readonly originId: string
  /** A test key's idempotency keys are its own (docs/contract.md#10-test-mode). */
  readonly livemode: boolean
  readonly key: string
}

/**
 * Idempotency keys per origin. The request path reserves a key in its write's own transaction,
 * under the key's lock (`LeadRepository.createOrEnrichKeyed`, by the rule `reserve` runs:
 * `idempotency_key_reserve`); success is recorded by the lead write, in that transaction, and
 * remembered for 24 h; a write that fails rolls back with its reservation. A reservation `reserve`
 * commits on its own holds the key for a 30 s lease (an instance that dies frees it by itself). A
 * write whose answer was lost (`OutcomeUnknown`) is settled here, once it no longer holds its key:
 * releasing its reservation, or finding none, shows that the write did not commit; finding the key
 * completed by that reservation shows that it did. Asked within the request's deadline first, then,
 * if the database has not answered by then, in the background until it does (or the lease ends);
 * each key kept past its request, and how it ended, is logged.
 */
export class IdempotencyStore extends Context.Service<
  IdempotencyStore,
  {
    reserve(
      slot: IdempotencySlot,
      fingerprint: string
    ): Effect.Effect<Reservation, StoreUnavailable | OutcomeUnknown>
    /** A write's answer was lost: what came of it, `reservedAt` (clock millis) dating the key for the log. */
    settle(slot: IdempotencySlot, token: string, reservedAt: number): Effect.Effect<Settled>
  }
>()("lead-intake/IdempotencyStore") {
  static readonly layer = Layer.effect(
    IdempotencyStore,
    Effect.gen(function* () {
      const sql = yield* SqlClient.SqlClient
      const fn = yield* step
      const layerScope = yield* Effect.scope
      // The background's pauses run on the clock the layer was built with, not on the request's.
      const clock = yield* Clock.Clock
      const backgroundQuestions = yield* Semaphore.make(2)
      // Live and test keys are kept in tables of the same shape (migration 0015).
      const tableOf = (slot: IdempotencySlot) =>
        sql(slot.livemode ? "idempotency_keys" : "test_idempotency_keys")

      /**
       * One question: once no write holds the key's lock (a write still running is waited for), the
       * reservation deleted if it is still this write's, else the key read again, in a statement of
       * its own.
       */
      const settleOnce = (slot: IdempotencySlot, token: string) =>
        Effect.gen(function* () {
          const [released] = yield* sql<{ readonly released: boolean }>`
            SELECT release_idempotency_key(
              ${slot.organizationId}, ${slot.livemode}, ${slot.originId}, ${slot.key}, ${token}::uuid
            ) AS released`.pipe(availableOrFail("IdempotencyStore.settle"))
          if (released?.released === true) return { _tag: "Released" } as const
          const [row] = yield* sql`
            SELECT state, response, lease_token FROM ${tableOf(slot)}
            WHERE organization_id = ${slot.organizationId} AND origin_id = ${slot.originId} AND key = ${slot.key}`.pipe(
            Effect.flatMap(decodeSettleRows),
            availableOrFail("IdempotencyStore.settle")
          )
          // Not completed by this reservation: released before, or reserved anew after its lease (and
          // perhaps completed by that request); either way this write rolled back.
          return row?.state === "completed" && row.response !== null && row.lease_token === token
            ? ({ _tag: "Committed", response: row.response } as const)
            : ({ _tag: "Released" } as const)
        })

      /**
       * Asked again until answered, or until `until` (`performance.now()` milliseconds): then `Kept`.
       * Each question goes through `gate`: in the background, a few at a time, so that keys kept
       * through a long outage do not take the pool from the requests once the database is back.
       */
      const settleBy = (
        slot: IdempotencySlot,
        token: string,
        until: number,
        gate: <A, E>(question: Effect.Effect<A, E>) => Effect.Effect<A, E> = identity
      ): Effect.Effect<Settled> =>
        Effect.gen(function* () {
          while (true) {
            const exit = yield* Effect.exit(gate(settleOnce(slot, token)))
            if (Exit.isSuccess(exit)) return exit.value
            if (performance.now() + settlePauseMillis >= until) return { _tag: "Kept" } as const
            yield* Effect.sleep(settlePause)
          }
        })

      const keyAnnotations = (slot: IdempotencySlot, reservedAt: number, outcome: string, now: number) => ({
        origin_id: slot.originId,
        key_digest: keyDigest(slot.key),
        livemode: slot.livemode,
        outcome,
        held_ms: now - reservedAt
      })

      const logSettled = (slot: IdempotencySlot, reservedAt: number, outcome: string, kept: boolean) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) =>
          (kept ? Effect.logWarning : Effect.logInfo)(
            kept ? "idempotency key kept: the write's outcome is not known yet" : "idempotency key settled"
          ).pipe(Effect.annotateLogs(keyAnnotations(slot, reservedAt, outcome, now)))
        )

      /** In the layer's scope, unbounded by any request, until the database answers or the lease ends. */
      const settleInBackground = (slot: IdempotencySlot, token: string, reservedAt: number) =>
        Effect.gen(function* () {
          const now = yield* Clock.currentTimeMillis
          const settled = yield* settleBy(
            slot,
            token,
            performance.now() + (reservedAt + leaseMillis - now),
            backgroundQuestions.withPermits(1)
          )
          yield* logSettled(slot, reservedAt, settled._tag === "Kept" ? "lease_ended" : settled._tag, false)
        }).pipe(Effect.provideService(AnswerBy, undefined), Effect.provideService(Clock.Clock, clock))

      /** Within the request's deadline, then, if the database has not answered, in the background. */
      function* settling(
        slot: IdempotencySlot,
        token: string,
        reservedAt: number
      ): Effect.fn.Return<Settled> {
        const until =
          ((yield* AnswerBy) ?? performance.now() + Duration.toMillis(answerWithin)) - settleMargin
        // Each question is bounded by `until` too, not only the loop.
        const settled = yield* settleBy(slot, token, until).pipe(Effect.provideService(AnswerBy, until))
        yield* Effect.annotateCurrentSpan({ "idempotency.settled": settled._tag })
        yield* logSettled(slot, reservedAt, settled._tag, settled._tag === "Kept")
        if (settled._tag === "Kept")
          yield* Effect.forkIn(settleInBackground(slot, token, reservedAt), layerScope)
        return settled
      }
      const settle = Effect.fnUntraced(settling)

      return IdempotencyStore.of({
        reserve: fn("IdempotencyStore.reserve")(function* (slot, fingerprint) {
          const now = yield* Clock.currentTimeMillis
          const token = crypto.randomUUID()
          const times = reservationTimes(now)
          const reservation = yield* encodeReservation({
            livemode: slot.livemode,
            origin_id: slot.originId,
            key: slot.key,
            fingerprint,
            token,
            now: times.now,
            lease_expires_at: times.leaseExpiresAt,
            forget_before: times.forgetBefore
          }).pipe(Effect.orDie)
          const row = yield* sql<{ readonly answer: unknown }>`
            SELECT idempotency_key_reserve(${slot.organizationId}, ${JSON.stringify(reservation)}::jsonb) AS answer`.pipe(
            Effect.flatMap(([answer]) => decodeReserveRow(answer?.answer)),
            writeOrFail(sql, "IdempotencyStore.reserve"),
            // A reservation whose answer was lost is settled like a write: released (or never made),
            // nothing is held and the answer is 503; not answerable in time, it is kept and asked after.
            Effect.catchTag("OutcomeUnknown", (lost) =>
              Effect.flatMap(
                settle(slot, token, now),
                (settled): Effect.Effect<never, OutcomeUnknown | StoreUnavailable> =>
                  Effect.fail(
                    settled._tag === "Kept" ? lost : new StoreUnavailable({ operation: lost.operation })
                  )
              )
            )
          )
          return yield* annotated(reservationOf(row, token, fingerprint))
        }),
        settle: fn("IdempotencyStore.settle")(settling)
      })
    })
  )

  static readonly layerMemory = Layer.effect(
    IdempotencyStore,
    Effect.gen(function* () {
      const store = yield* MemoryStore
      return IdempotencyStore.of({
        reserve: Effect.fn("IdempotencyStore.reserve")(function* (slot, fingerprint) {
          const now = yield* Clock.currentTimeMillis
          return yield* annotated(reserveIn(store, slot, fingerprint, crypto.randomUUID(), now))
        }),
        settle: Effect.fn("IdempotencyStore.settle")(function* (slot, token) {
          const id = idempotencySlot(slot.originId, slot.livemode, slot.key)
          const existing = store.idempotency.get(id)
          if (existing?.state === "completed" && existing.token === token)
            return { _tag: "Committed", response: existing.response }
          releaseIn(store, slot, token)
          return { _tag: "Released" }
        })
      })
    })
  )
}
