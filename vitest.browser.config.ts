import { tmpdir } from "node:os"
import * as path from "node:path"
import { defineConfig } from "vitest/config"

// As in vitest.config.ts: the servers the tests start compile the sources once for the run.
process.env.NODE_COMPILE_CACHE ??= path.join(tmpdir(), "lead-intake-node-compile-cache")

/** The console driven in a real Chromium (Debian's /usr/bin/chromium) against real `serve` processes. */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["test/support/globalSetup.ts"],
    setupFiles: ["test/support/cpu.ts"],
    testTimeout: 120_000,
    hookTimeout: 120_000,
    pool: "forks",
    // Two files at a time: each waits on its servers and Chromium more than it computes (alone, the
    // files used half of one core), and every server and page is its own (free ports).
    maxWorkers: 2,
    // A server opens a console only on the port its test names, and no health listener: 8081 and
    // 8082 may be taken on a shared machine (docs.test.ts once failed so on 8081).
    env: { ADMIN_PORT: "off", HEALTH_PORT: "off" },
    // a loaded 2-core machine: what a browser shows can take longer than vitest's 1 s default
    expect: { poll: { timeout: 15_000, interval: 100 } },
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
