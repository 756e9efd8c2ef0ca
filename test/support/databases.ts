import { Effect } from "effect"
import { afterAll } from "vitest"
import { dropCreatedDatabases } from "./Database.ts"

// After each test file, the databases it created go (its own `afterAll` hooks, which stop the servers
// it started, run first).
afterAll(() => Effect.runPromise(dropCreatedDatabases), 60_000)
