import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/browser/**", "**/node_modules/**"],
    globalSetup: ["test/support/globalSetup.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    pool: "forks",
    // Servers started by tests open no console or health listener unless a test asks for one (8081
    // and 8082 would clash).
    // and the bin runs src/main.ts whether or not dist/ is fresh: tests are of the sources
    // (test/e2e/bundle.test.ts builds and runs the bundle on its own).
    env: { ADMIN_PORT: "off", HEALTH_PORT: "off", LEAD_INTAKE_ENTRY: "src" },
    reporters: ["default", "./test/support/summaryReporter.ts"]
  }
})
