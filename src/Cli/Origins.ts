import { Effect } from "effect"
import { Flag } from "effect/cli"
import { KeyStore } from "../Accounts/KeyStore.ts"
import * as Input from "./Input.ts"
import { emit, emitTable, orDash } from "./Output.ts"
import { withOperator } from "./Services.ts"

const originId = Input.id("origin", "origin")

const originCreate = Input.command(
  "create",
  "Create an origin and its key (the only time the full key is printed)",
  {
    org: Input.org,
    label: Input.text("label").pipe(Flag.withDescription("The origin's name, unique in the organization")),
    rateLimit: Input.rateLimit.pipe(Flag.withDefault(60))
  },
  Effect.fn("Cli.originCreate")(function* ({ org, label, rateLimit }) {
    const origin = yield* KeyStore.use((keys) => keys.createOrigin({ organizationId: org, label, rateLimit }))
    yield* emit(
      {
        id: origin.id,
        label: origin.label,
        key: origin.key,
        prefix: origin.prefix,
        rate_limit: origin.rateLimit
      },
      (o) =>
        [
          `Created origin "${o.label}": ${o.id} (${o.rate_limit} requests per minute)`,
          `Key (shown this once, store it now): ${o.key}`,
          `Prefix: ${o.prefix}`
        ].join("\n")
    )
  }, withOperator)
)

const originSetLimit = Input.command(
  "set-limit",
  "Set the requests per minute allowed for the origin's key",
  { origin: originId, rateLimit: Input.rateLimit },
  Effect.fn("Cli.originSetLimit")(function* ({ origin, rateLimit }) {
    yield* KeyStore.use((keys) => keys.setRateLimit(origin, rateLimit))
    yield* emit(
      { id: origin, rate_limit: rateLimit },
      (o) => `Origin ${o.id} now allows ${o.rate_limit} requests per minute`
    )
  }, withOperator)
)

const originList = Input.command(
  "list",
  "List the organization's origins with their key prefixes (live, and test when active)",
  { org: Input.org },
  Effect.fn("Cli.originList")(function* ({ org }) {
    const origins = yield* KeyStore.use((keys) => keys.listOrigins(org))
    yield* emitTable(
      origins.map((o) => ({
        id: o.id,
        label: o.label,
        prefix: o.prefix,
        revoked: o.revoked,
        test_prefix: o.test_prefix
      })),
      [
        ["ID", (o) => o.id],
        ["LABEL", (o) => o.label],
        ["KEY PREFIX", (o) => orDash(o.prefix)],
        ["REVOKED", (o) => (o.revoked ? "yes" : "no")],
        ["TEST KEY PREFIX", (o) => orDash(o.test_prefix)]
      ],
      "No origins."
    )
  }, withOperator)
)

export const origin = Input.group("origin", "Origins: the named sources that send leads, one key each", [
  originCreate,
  originSetLimit,
  originList
])

/** Issues the origin's new live or test key and prints it with what the operator must know about it. */
const issueKey = (kind: "live" | "test", notes: ReadonlyArray<string>) =>
  Effect.fn(kind === "live" ? "Cli.keyRotate" : "Cli.keyCreateTest")(function* ({
    origin
  }: {
    origin: string
  }) {
    const issued = yield* KeyStore.use((keys) => keys.rotate(origin, kind))
    yield* emit({ key: issued.key, prefix: issued.prefix }, (k) =>
      [
        `New ${kind === "live" ? "key" : "test key"} (shown this once, store it now): ${k.key}`,
        `Prefix: ${k.prefix}`,
        ...notes
      ].join("\n")
    )
  }, withOperator)

const keyRotate = Input.command(
  "rotate",
  "Issue a new key for the origin; the old one is revoked at that instant",
  { origin: originId },
  issueKey("live", ["The previous key no longer works."])
)

const keyCreateTest = Input.command(
  "create-test",
  "Issue a test key (lk_test_…) for the origin; an earlier test key is revoked at that instant",
  { origin: originId },
  issueKey("test", [
    "What it sends is test data: never assigned, no tasks, apart from the live leads.",
    "A previous test key of this origin no longer works."
  ])
)

const keyRevoke = Input.command(
  "revoke",
  "Revoke the origin's key (--test: its test key)",
  {
    origin: originId,
    test: Input.toggle("test", "Revoke the origin's test key instead of its live key")
  },
  Effect.fn("Cli.keyRevoke")(function* ({ origin, test }) {
    const revoked = yield* KeyStore.use((keys) => keys.revoke(origin, test ? "test" : "live"))
    yield* emit(
      { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() },
      (k) => `Revoked ${test ? "test key" : "key"} ${k.prefix} at ${k.revoked_at}`
    )
  }, withOperator)
)

export const key = Input.group("key", "API keys: each origin has a live key and may have a test key", [
  keyRotate,
  keyRevoke,
  keyCreateTest
])
