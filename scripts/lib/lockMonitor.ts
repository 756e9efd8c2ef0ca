import pg from "pg"

/**
 * Every `intervalMs`, the sessions of this database waiting for a lock (`pg_locks`, since when:
 * `waitstart`) and who blocks them (`pg_blocking_pids`): a wait counts against the migration when
 * the migrator's session (`application_name` = `migrator`) holds the lock, or is queued for it ahead
 * of the waiter, or blocks a session that blocks it (a queue behind a queue). Each wait is known by
 * its session and start, and kept at the longest it was seen; `take` hands over the longest since
 * the last `take`, with what waited, for which lock, and what the migrator was running when the
 * wait was first seen (a lock taken earlier in its transaction is held until it commits).
 */
export interface BlockingWait {
  readonly ms: number
  readonly lock: string
  readonly waiter: string
  /** The migrator's statement when the wait was first seen, or its last one when it was between statements. */
  readonly migratorStatement: string
  /** Whether the migrator held (or awaited) the lock itself, rather than blocking a session ahead of the waiter. */
  readonly direct: boolean
}

export interface Window {
  readonly longest: BlockingWait | undefined
  /** The longest the migrator itself waited for a lock another session held (behind it, the queue grows). */
  readonly migratorWaitedMs: number
  /** The lock, and the migrator's statement that waited for it. */
  readonly migratorWaitedFor: string | undefined
  readonly polls: number
  /** Polls that failed (the monitor's connection lost): the longest wait may be missing. */
  readonly failedPolls: number
}

export interface LockMonitor {
  readonly take: () => Window
  readonly stop: () => Promise<void>
}

interface WaitRow {
  readonly pid: number
  readonly waitstart: string
  readonly waited_ms: number
  readonly lock: string
  readonly query: string
  readonly blockers: ReadonlyArray<number>
}

const oneLine = (text: string, length = 120) => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat
}

export const startLockMonitor = async (options: {
  readonly url: string
  readonly migrator: string
  readonly intervalMs: number
}): Promise<LockMonitor> => {
  const client = new pg.Client({
    connectionString: options.url,
    application_name: "lead-intake-rehearse/monitor"
  })
  await client.connect()
  let longest: BlockingWait | undefined
  /** What the migrator was running when each wait was first seen, by session and start of the wait. */
  const firstSeen = new Map<string, string>()
  let migratorWaitedMs = 0
  let migratorWaitedFor: string | undefined
  let polls = 0
  let failedPolls = 0
  let stopped = false

  const poll = async () => {
    const { rows } = await client.query<{
      waits: ReadonlyArray<WaitRow> | null
      migrator: ReadonlyArray<{ pid: number; query: string; state: string }> | null
    }>(
      `SELECT
         (SELECT json_agg(json_build_object(
                   'pid', a.pid, 'waitstart', l.waitstart,
                   'waited_ms', extract(epoch FROM clock_timestamp() - l.waitstart) * 1000,
                   'lock', l.mode || ' on ' || CASE WHEN l.relation IS NOT NULL THEN l.relation::regclass::text
                                                  ELSE l.locktype END,
                   'query', a.query,
                   'blockers', pg_blocking_pids(a.pid)))
          FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
          WHERE NOT l.granted AND a.datname = current_database() AND l.waitstart IS NOT NULL) AS waits,
         (SELECT json_agg(json_build_object('pid', pid, 'query', query, 'state', state))
          FROM pg_stat_activity WHERE application_name = $1 AND datname = current_database()) AS migrator`,
      [options.migrator]
    )
    polls++
    const waits = rows[0]?.waits ?? []
    const migrators = rows[0]?.migrator ?? []
    const migratorPids = new Set(migrators.map((row) => row.pid))
    const statement = oneLine(
      migrators
        .map((row) => (row.state === "active" ? row.query : `(${row.state}, after) ${row.query}`))
        .join(" | ")
    )
    for (const wait of waits) {
      if (migratorPids.has(wait.pid) && wait.waited_ms > migratorWaitedMs) {
        migratorWaitedMs = wait.waited_ms
        migratorWaitedFor = `${wait.lock}: ${oneLine(wait.query)}`
      }
    }
    // The sessions the migrator holds up: those it blocks, then those they block, and so on.
    const blocked = new Set(migratorPids)
    const direct = new Set<number>()
    for (let grew = true; grew; ) {
      grew = false
      for (const wait of waits) {
        if (blocked.has(wait.pid) || !wait.blockers.some((pid) => blocked.has(pid))) continue
        blocked.add(wait.pid)
        if (wait.blockers.some((pid) => migratorPids.has(pid))) direct.add(wait.pid)
        grew = true
      }
    }
    for (const wait of waits) {
      if (migratorPids.has(wait.pid) || !blocked.has(wait.pid)) continue
      const key = `${wait.pid} ${wait.waitstart}`
      if (!firstSeen.has(key)) firstSeen.set(key, statement)
      if (longest !== undefined && wait.waited_ms <= longest.ms) continue
      longest = {
        ms: wait.waited_ms,
        lock: wait.lock,
        waiter: oneLine(wait.query),
        migratorStatement: firstSeen.get(key)!,
        direct: direct.has(wait.pid)
      }
    }
  }

  const running = (async () => {
    while (!stopped) {
      const began = performance.now()
      await poll().catch(() => failedPolls++)
      const wait = options.intervalMs - (performance.now() - began)
      if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait))
    }
  })()

  return {
    take: () => {
      const window = { longest, migratorWaitedMs, migratorWaitedFor, polls, failedPolls }
      longest = undefined
      firstSeen.clear()
      migratorWaitedMs = 0
      migratorWaitedFor = undefined
      polls = 0
      failedPolls = 0
      return window
    },
    stop: async () => {
      stopped = true
      await running
      await client.end()
    }
  }
}
