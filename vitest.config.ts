import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/browser/**", "**/node_modules/**"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Servers started by tests open no console listener unless a test asks for one (8081 would clash).
    env: { ADMIN_PORT: "off" },
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
