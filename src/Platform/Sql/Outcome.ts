import { PgConnection } from "@effect/sql-pg"
import { Cause, Context, Deferred, Duration, Effect, Exit, Fiber, Predicate, Schema, Scope } from "effect"
import type { SqlClient, SqlConnection, SqlError } from "effect/sql"

/** The store could not be reached in bounded time: the request may be retried, nothing was written. */
export class StoreUnavailable extends Schema.TaggedError<StoreUnavailable>()("StoreUnavailable", {
  operation: Schema.String
}) {}

/**
 * A write was sent and its answer never came: abandoned at `writeAbandonAfter`, or its connection
 * was lost (a crash mid-commit included). It may have committed, so it is not `StoreUnavailable`:
 * a write that holds an Idempotency-Key is settled by asking the database (`IdempotencyStore.settle`);
 * one that cannot be asked in time answers 500, and a retry with the same key tells which it was.
 */
export class OutcomeUnknown extends Schema.TaggedError<OutcomeUnknown>()("OutcomeUnknown", {
  operation: Schema.String
}) {}

const unavailableReasons = new Set([
  "ConnectionError",
  "AuthenticationError",
  "StatementTimeoutError",
  "LockTimeoutError"
])

/**
 * A server shutting down, starting up (crash recovery), out of connections, a statement cancelled
 * (a pipelined statement shares its connection's cancel with its neighbours) or out of time waiting
 * for a lock: an outage, not a bug.
 */
const unavailableStates = new Set(["57P01", "57P02", "57P03", "53300", "57014", "55P03"])

/** The statement's own answer that it was rolled back: cancelled (by us or `statement_timeout`), or a lock wait ran out. */
const rolledBackStates = new Set(["57014", "55P03"])

export const sqlStateOf = (cause: unknown) =>
  typeof cause === "object" && cause !== null && "code" in cause ? String(cause.code) : ""

export const isOutage = (error: SqlError.SqlError) =>
  unavailableReasons.has(error.reason._tag) || unavailableStates.has(sqlStateOf(error.reason.cause))

/**
 * A Citus coordinator's answer that a connection to the node holding the rows failed (SQLSTATE
 * 08006, `connection to the remote node user@host:port failed with the following error: …`).
 */
const remoteNodeFailure =
  /^connection to the remote node (?:[^@\s]+@)?(\S+:\d+) failed with the following error: (.*)$/s

/**
 * What the node's connection failed with when it was being opened (the node stopped, not listening,
 * out of reach, starting up or shutting down): the statement never reached it. A connection lost
 * once open (`connection not open`, `server closed the connection unexpectedly`) may have carried it.
 */
const notOpened =
  /Connection refused|could not connect|timeout expired|No route to host|Network is unreachable|could not translate host name|the database system is (?:starting up|shutting down|in recovery mode|not yet accepting connections)/

/** The Citus node (`host:port`) a statement failed to reach, and whether it failed before anything was sent. */
export const remoteNodeOf = (
  error: SqlError.SqlError
): { readonly node: string; readonly notSent: boolean } | undefined => {
  const cause = error.reason.cause
  if (!sqlStateOf(cause).startsWith("08") || !(cause instanceof Error)) return undefined
  const match = remoteNodeFailure.exec(cause.message)
  return match === null ? undefined : { node: match[1]!, notSent: notOpened.test(match[2]!) }
}

/**
 * The line an SRE looks for when a Citus node is lost: which node, and what its organizations see.
 * One per failed statement, beside the request's own line.
 */
const logUnreachableNode = (error: SqlError.SqlError, operation: string) => {
  const remote = remoteNodeOf(error)
  return remote === undefined
    ? Effect.void
    : Effect.logWarning(
        "database node unreachable: the organizations it holds are answered 503 until it is back or its standby is promoted"
      ).pipe(Effect.annotateLogs({ database_node: remote.node, operation }))
}

/** Reads are abandoned, and writes cancelled, this long after they start. */
export const statementTimeout = Duration.seconds(2)
const statementTimeoutMillis = Duration.toMillis(statementTimeout)

/**
 * A write whose cancel got no answer is abandoned (its connection destroyed) this long after it
 * started, or sooner when its request's `AnswerBy` comes first.
 */
export const writeAbandonAfter = Duration.millis(2750)

/** What the README promises: a request answers within this, whatever the database does. */
export const answerWithin = Duration.seconds(5)

/**
 * When the current request must have answered (`performance.now()` milliseconds), so that the
 * store steps of one request together stay within `answerWithin`: each step's bounds shrink to
 * what is left. Unset (CLI, worker), each step has only its own bounds.
 */
export const AnswerBy = Context.Reference<number | undefined>("lead-intake/AnswerBy", {
  defaultValue: () => undefined
})

/** Time kept back from `AnswerBy` for what follows the last store step (encoding, sending). */
const answerMargin = 150

/** `bound` milliseconds, or less when the request's `AnswerBy` comes sooner. */
const boundedBy = (answerBy: number | undefined, bound: number) =>
  answerBy === undefined ? bound : Math.min(bound, answerBy - answerMargin - performance.now())

/**
 * How a read's deadline is kept: `self` raced against `millis`, answering `StoreUnavailable` for
 * `operation` once they pass.
 */
type Deadline = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  operation: string
) => Effect.Effect<A, E | StoreUnavailable, R>

/**
 * A read bounded by `statementTimeout`, or less when its request's `AnswerBy` comes sooner (with
 * no time left it is not sent). Connection loss and timeouts become `StoreUnavailable` (503);
 * every other SQL failure, and a row that does not decode, is a defect (500): it means a bug or a
 * broken schema rather than a transient outage.
 */
const boundedRead =
  (operation: string, deadline: Deadline) =>
  <A, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>
  ): Effect.Effect<A, StoreUnavailable, R> =>
    Effect.withFiber((parent) => {
      const millis = boundedBy(parent.getRef(AnswerBy), statementTimeoutMillis)
      return millis <= 0
        ? Effect.fail(new StoreUnavailable({ operation }))
        : deadline(self, millis, operation)
    }).pipe(outageOrDefect(operation))

/**
 * The deadline of a statement that may hold a pooled connection: past it `StoreUnavailable`
 * answers at once and `self` is interrupted without being awaited. `Effect.timeout` would await
 * it, and an interrupted statement on a frozen server drains for seconds (the driver's cancel and
 * drain timeouts) before it lets go. The statement runs in a detached fiber for that reason only:
 * the caller waits on its answer or the deadline, whichever completes `answered` first.
 */
const detached = <A, E, R>(
  self: Effect.Effect<A, E, R>,
  millis: number,
  operation: string
): Effect.Effect<A, E | StoreUnavailable, R> =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      const answered = yield* Deferred.make<A, E | StoreUnavailable>()
      const running = yield* Effect.forkDetach(
        Effect.onExit(restore(self), (exit) => Deferred.done(answered, exit)),
        { startImmediately: true }
      )
      // The error is made when the deadline passes, not before: an error captures a stack
      // trace, and building one for every statement was a tenth of a create's CPU.
      const deadline = yield* Effect.forkChild(
        Effect.andThen(Effect.sleep(millis), () =>
          Deferred.fail(answered, new StoreUnavailable({ operation }))
        ),
        { startImmediately: true }
      )
      const exit = yield* Effect.exit(restore(Deferred.await(answered)))
      yield* Fiber.interrupt(deadline)
      if (Exit.isFailure(exit)) yield* Effect.forkDetach(Fiber.interrupt(running))
      return yield* exit
    })
  )

/**
 * The deadline of a statement on the pipelined client (`Sql.PipelinedSql`): `Effect.timeoutOrElse`.
 * The race awaits its loser, and here that costs nothing: an interrupted pipelined statement is
 * only marked abandoned (its answer is read and dropped when it comes), so it ends at once even on
 * a frozen server, and it needs neither the detached fiber nor the `Deferred` of `detached`, whose
 * cost a bounded pipelined read would otherwise pay (docs/performance.md#findings).
 */
const raced: Deadline = (self, millis, operation) =>
  Effect.timeoutOrElse(self, {
    duration: millis,
    orElse: () => Effect.fail(new StoreUnavailable({ operation }))
  })

/** A read on the pool (or any client whose interrupted statements drain): see `detached`. */
export const availableOrFail = (operation: string) => boundedRead(operation, detached)

/** A read on the pipelined client: see `raced`. */
export const pipelinedOrFail = (operation: string) => boundedRead(operation, raced)

const outageOrDefect =
  (operation: string) =>
  <A, E extends StoreUnavailable | OutcomeUnknown, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError | E, R>
  ): Effect.Effect<A, StoreUnavailable | E, R> =>
    Effect.catch(self, (error): Effect.Effect<never, StoreUnavailable | E> => {
      if (error._tag === "SchemaError") return Effect.die(error)
      if (error._tag !== "SqlError") return Effect.fail(error as E)
      return isOutage(error)
        ? Effect.andThen(
            logUnreachableNode(error, operation),
            Effect.fail(new StoreUnavailable({ operation }))
          )
        : Effect.die(error)
    })

/**
 * An outage met by a statement already sent: PostgreSQL's own answer that it rolled back
 * (cancelled, out of time for a lock), or a Citus coordinator's that it could not open a connection
 * to the node holding the rows (the statement never reached it), means nothing was written; anything
 * else (the connection closed or failed, the server terminating the session, a node's connection
 * lost once open) may have come after the commit.
 */
const sentOutcome =
  (operation: string) =>
  <A, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>
  ): Effect.Effect<A, SqlError.SqlError | Schema.SchemaError | StoreUnavailable | OutcomeUnknown, R> =>
    Effect.catchIf(
      self,
      (error): error is SqlError.SqlError => error._tag === "SqlError" && isOutage(error),
      (error) =>
        Effect.andThen(
          logUnreachableNode(error, operation),
          Effect.fail(
            rolledBackStates.has(sqlStateOf(error.reason.cause)) || remoteNodeOf(error)?.notSent === true
              ? new StoreUnavailable({ operation })
              : new OutcomeUnknown({ operation })
          )
        )
    )

const isPgConnection = (u: unknown): u is PgConnection.PgConnection =>
  Predicate.hasProperty(u, PgConnection.TypeId)

/** A reserved `PgClient` connection carries its session, whose running statement a `CancelRequest` stops. */
const cancelRunning = (connection: SqlConnection.Connection): Effect.Effect<void> =>
  Predicate.hasProperty(connection, "connection") && isPgConnection(connection.connection)
    ? connection.connection.interrupt
    : Effect.void

const writeAbandonAfterMillis = Duration.toMillis(writeAbandonAfter)
/** The time a write's cancel is given to be answered before the write is abandoned. */
const cancelLead = writeAbandonAfterMillis - statementTimeoutMillis

/**
 * A write whose answer says what happened: `StoreUnavailable` (503) only when nothing was written,
 * `OutcomeUnknown` (500) when it may have been. The wait for a connection is bounded and may be
 * interrupted: nothing was sent. A sent statement is cancelled at `statementTimeout` and its answer
 * awaited until `writeAbandonAfter`: a write that committed first is a write, a confirmed cancel is
 * `StoreUnavailable`. A server that does not answer by then (frozen, partitioned) leaves the
 * outcome unknown: the connection's scope is closed under the statement, which destroys the
 * session (a pinned connection released with a statement in flight is closed, never returned to
 * the pool) and so ends the statement with a lost connection.
 *
 * Two fibers, children of the caller's: `sending` reserves the connection (interruptibly) and runs
 * the statement on it (uninterruptibly: once sent, only its answer or the abandonment ends it),
 * and the `watchdog` sleeps until the cancel, then until the abandonment. The caller waits for the
 * reservation interruptibly and for the outcome uninterruptibly.
 */
export const writeOrFail =
  (sql: SqlClient.SqlClient, operation: string) =>
  <A, R>(
    self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>
  ): Effect.Effect<A, StoreUnavailable | OutcomeUnknown, R> =>
    Effect.withFiber((parent) => {
      const abandonAfter = boundedBy(parent.getRef(AnswerBy), writeAbandonAfterMillis)
      // Too little time left to wait for a cancel's answer: nothing is sent.
      if (abandonAfter < cancelLead) return Effect.fail(new StoreUnavailable({ operation }))
      const cancelAfter = Math.min(statementTimeoutMillis, abandonAfter - cancelLead)
      return sendBounded(sql, self, operation, cancelAfter, abandonAfter - cancelAfter)
    }).pipe(outageOrDefect(operation))

const sendBounded = <A, R>(
  sql: SqlClient.SqlClient,
  self: Effect.Effect<A, SqlError.SqlError | Schema.SchemaError, R>,
  operation: string,
  cancelAfter: number,
  abandonAfterCancel: number
) =>
  Effect.uninterruptibleMask((restore) =>
    Effect.gen(function* () {
      type Failure = SqlError.SqlError | Schema.SchemaError | StoreUnavailable | OutcomeUnknown
      const connectionScope = yield* Scope.make()
      const reserved = yield* Deferred.make<SqlConnection.Connection | undefined>()
      const outcome = yield* Deferred.make<A, Failure>()
      const sending = yield* Effect.forkChild(
        Effect.interruptible(Scope.provide(sql.reserve, connectionScope)).pipe(
          Effect.tap((connection) => Deferred.succeed(reserved, connection)),
          Effect.flatMap((connection) =>
            Effect.provideService(self, sql.transactionService, [connection, 0]).pipe(sentOutcome(operation))
          ),
          Effect.onExit((exit) =>
            Effect.andThen(
              Scope.close(connectionScope, exit),
              // Interrupted while waiting for a connection (the deadline or the caller): nothing was sent.
              Deferred.done(
                outcome,
                Exit.isFailure(exit) && Cause.hasInterruptsOnly(exit.cause)
                  ? Exit.fail(new StoreUnavailable({ operation }))
                  : exit
              )
            ).pipe(Effect.andThen(Deferred.succeed(reserved, undefined)))
          )
        ),
        { uninterruptible: true, startImmediately: true }
      )
      const watchdog = yield* Effect.forkChild(
        Effect.gen(function* () {
          yield* Effect.sleep(cancelAfter)
          // Still waiting for a connection: the wait is given up (not awaited here, so that a
          // reservation that won the race by a hair still has its statement bounded below).
          if (!(yield* Deferred.isDone(reserved))) yield* Effect.forkChild(Fiber.interrupt(sending))
          const connection = yield* Deferred.await(reserved)
          if (connection === undefined) return
          yield* Effect.forkIn(cancelRunning(connection), connectionScope)
          yield* Effect.sleep(abandonAfterCancel)
          yield* Scope.close(connectionScope, Exit.fail(new OutcomeUnknown({ operation })))
        }),
        { startImmediately: true }
      )
      const waited = yield* Effect.exit(restore(Deferred.await(reserved)))
      if (Exit.isFailure(waited)) {
        yield* Fiber.interrupt(sending)
        yield* Fiber.interrupt(watchdog)
        return yield* Effect.failCause(waited.cause)
      }
      const exit = yield* Effect.exit(Deferred.await(outcome))
      yield* Fiber.interrupt(watchdog)
      return yield* exit
    })
  )
