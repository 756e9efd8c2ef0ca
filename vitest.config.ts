import { availableParallelism, tmpdir } from "node:os"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

/**
 * Files whose tests measure time (a bound on how long something takes, a timeout that must fire,
 * comparable answer times, a stopped or frozen PostgreSQL): they run one at a time, after the
 * others, so no other test file competes with them for the CPU. Every fault file is one but
 * write-failure's, whose failures are raised by triggers and bound no time. And the plan-cache test
 * on Citus: its 5,000 creates took the cluster from the files beside it (in CI's Citus phase 40
 * concurrent creates of another file waited past the write's 2.75 s and answered 500).
 */
const timed = [
  "test/faults/**/!(write-failure).test.ts",
  "test/cluster/**/*.test.ts",
  "test/admin/sign-in-timing.test.ts",
  "test/admin/limits.test.ts",
  "test/integration/failure.test.ts",
  "test/integration/health.test.ts",
  "test/integration/citus-plan-cache.test.ts",
  "test/unit/entry.test.ts",
  "test/unit/WebhookSender.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/resilience.test.ts"
]

/**
 * Files a run leaves out (`TEST_EXCLUDE`, comma-separated paths or globs): CI's runs on other
 * servers. Each project takes them, since vitest's own `--exclude` does not reach a project's list.
 */
const excluded = (process.env.TEST_EXCLUDE ?? "")
  .split(",")
  .map((glob) => glob.trim())
  .filter((glob) => glob !== "")

/**
 * Most test files wait on PostgreSQL and on the processes they start more than they compute: one
 * file more than the cores keeps the CPU busy (TEST_WORKERS sets another number).
 */
const workers = Number(process.env.TEST_WORKERS ?? availableParallelism() + 1)

// Node caches the code it compiles for every process a test starts (the CLI, `serve`), and for the
// test workers: each start after the first compiles the sources and dependencies no more.
process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), "lead-intake-node-compile-cache")

// One seed for every generator of the run (test/support/fastCheck.ts, test/fuzz), printed here:
// `FUZZ_SEED=<seed> npm test` replays the run.
process.env.FUZZ_SEED ??= String((Math.random() * 2 ** 31) | 0)
process.stdout.write(
  `[fast-check] seed ${process.env.FUZZ_SEED} (replay with FUZZ_SEED=${process.env.FUZZ_SEED})\n`
)

export default defineConfig({
  test: {
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/cpu.ts", "test/support/fastCheck.ts", "test/support/databases.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Servers started by tests open no console or health listener unless a test asks for one (8081
    // and 8082 would clash).
    // and the bin runs src/main.ts whether or not dist/ is fresh: tests are of the sources
    // (test/e2e/bundle.test.ts builds and runs the bundle on its own).
    env: { ADMIN_PORT: "off", HEALTH_PORT: "off", LEAD_INTAKE_ENTRY: "src" },
    reporters: ["default", "./test/support/summaryReporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "parallel",
          include: ["test/**/*.test.ts"],
          exclude: ["test/browser/**", "**/node_modules/**", ...timed, ...excluded],
          maxWorkers: workers,
          sequence: { groupOrder: 0 }
        }
      },
      {
        extends: true,
        test: {
          name: "timed",
          include: timed,
          exclude: ["**/node_modules/**", ...excluded],
          fileParallelism: false,
          sequence: { groupOrder: 1 }
        }
      }
    ]
  }
})
