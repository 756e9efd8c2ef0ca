import { Context, Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { writeOrFail } from "../../src/Platform/Sql/Sql.ts"
import type { FuzzTarget } from "../fuzz/support.ts"
import { freshDatabaseUrl, inspector, sleep, startPostgresTarget } from "./support.ts"

/**
 * `writeOrFail` on the service's own pool: what each way a sent write can end answers, and what
 * becomes of its connection.
 */
describe("fault: a write's outcome", () => {
  let target: FuzzTarget
  let db: ReturnType<typeof inspector>

  beforeAll(async () => {
    const url = await freshDatabaseUrl()
    target = await startPostgresTarget(url, 2)
    db = inspector(url)
  }, 60_000)

  afterAll(async () => {
    await target?.close()
    await db?.close()
  })

  const serviceSql = () =>
    Context.get(target.context as unknown as Context.Context<SqlClient.SqlClient>, SqlClient.SqlClient)

  const write = async (statement: string) => {
    const sql = serviceSql()
    const started = performance.now()
    const exit = await Effect.runPromise(
      Effect.exit(sql.unsafe(statement).pipe(writeOrFail(sql, "test.write")))
    )
    return { exit, elapsed: performance.now() - started }
  }

  const failureTag = (exit: Exit.Exit<unknown, { readonly _tag: string }>) =>
    Exit.isFailure(exit) ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error._tag : undefined

  const backendOf = async (marker: string) => {
    for (let attempt = 0; attempt < 50; attempt++) {
      const [row] = await db.query<{ pid: number }>(
        "SELECT pid FROM pg_stat_activity WHERE query LIKE $1 AND pid <> pg_backend_pid()",
        [`%${marker}%`]
      )
      if (row !== undefined) return row.pid
      await sleep(20)
    }
    throw new Error(`no backend runs ${marker}`)
  }

  it("a statement cancelled at the deadline: its confirmed cancel answers 503 (rolled back)", async () => {
    const { exit, elapsed } = await write("SELECT pg_sleep(8) /* cancelled */")
    expect(failureTag(exit)).toBe("StoreUnavailable")
    expect(elapsed).toBeGreaterThan(1_900)
    expect(elapsed).toBeLessThan(2_750)
  }, 20_000)

  it("a connection lost after the statement was sent: the outcome is unknown (500), not 503", async () => {
    const { exit } = await write("SELECT pg_terminate_backend(pg_backend_pid())")
    expect(failureTag(exit)).toBe("OutcomeUnknown")
    const { exit: next } = await write("SELECT 1")
    expect(Exit.isSuccess(next), "the pool replaced the connection").toBe(true)
  }, 20_000)

  it("a backend that stops answering, its cancel included: abandoned with an unknown outcome, its connection destroyed", async () => {
    const pending = write("SELECT pg_sleep(6) /* frozen backend */")
    const pid = await backendOf("frozen backend")
    process.kill(pid, "SIGSTOP")
    let result: Awaited<typeof pending>
    try {
      result = await pending
    } finally {
      process.kill(pid, "SIGCONT")
    }
    expect(failureTag(result.exit)).toBe("OutcomeUnknown")
    expect(result.elapsed).toBeGreaterThan(2_600)
    expect(result.elapsed).toBeLessThan(3_500)
    // Its socket was closed: the thawed backend finds its client gone and ends, never to be reused.
    const gone = async () => {
      for (let attempt = 0; attempt < 100; attempt++) {
        const rows = await db.query("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])
        if (rows.length === 0) return true
        await sleep(100)
      }
      return false
    }
    expect(await gone(), "the abandoned backend ended").toBe(true)
    const sql = serviceSql()
    const pids = await Effect.runPromise(
      Effect.all(
        Array.from({ length: 4 }, () => sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`),
        { concurrency: 2 }
      ).pipe(Effect.orDie)
    )
    expect(pids.flat().map((row) => row.pid)).not.toContain(pid)
  }, 30_000)
})
