import * as NodeRuntime from "@effect/platform-node/NodeRuntime"
import { main, teardown } from "./Cli/Main.ts"

NodeRuntime.runMain(main, { disableErrorReporting: true, teardown })
