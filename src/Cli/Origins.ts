import { Effect } from "effect"
import { Command, Flag } from "effect/cli"
import { KeyStore } from "../Accounts/KeyStore.ts"
import * as Input from "./Input.ts"
import { emit, orDash, table } from "./Output.ts"
import { withOperator } from "./Services.ts"

const originCreate = Command.make(
  "create",
  {
    org: Input.id("org", "organization"),
    label: Input.text("label").pipe(Flag.withDescription("The origin's name, unique in the organization")),
    rateLimit: Input.rateLimit.pipe(Flag.withDefault(60))
  },
  Effect.fn("Cli.originCreate")(function* ({ org, label, rateLimit }) {
    const keys = yield* KeyStore
    const origin = yield* keys.createOrigin({ organizationId: org, label, rateLimit })
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
).pipe(Command.withDescription("Create an origin and its key (the only time the full key is printed)"))

const originSetLimit = Command.make(
  "set-limit",
  { origin: Input.id("origin", "origin"), rateLimit: Input.rateLimit },
  Effect.fn("Cli.originSetLimit")(function* ({ origin, rateLimit }) {
    const keys = yield* KeyStore
    yield* keys.setRateLimit(origin, rateLimit)
    yield* emit(
      { id: origin, rate_limit: rateLimit },
      (o) => `Origin ${o.id} now allows ${o.rate_limit} requests per minute`
    )
  }, withOperator)
).pipe(Command.withDescription("Set the requests per minute allowed for the origin's key"))

const originList = Command.make(
  "list",
  { org: Input.id("org", "organization") },
  Effect.fn("Cli.originList")(function* ({ org }) {
    const keys = yield* KeyStore
    const origins = yield* keys.listOrigins(org)
    yield* emit(
      origins.map((o) => ({
        id: o.id,
        label: o.label,
        prefix: o.prefix,
        revoked: o.revoked,
        test_prefix: o.test_prefix
      })),
      (rows) =>
        table(
          ["ID", "LABEL", "KEY PREFIX", "REVOKED", "TEST KEY PREFIX"],
          rows.map((o) => [o.id, o.label, orDash(o.prefix), o.revoked ? "yes" : "no", orDash(o.test_prefix)]),
          "No origins."
        )
    )
  }, withOperator)
).pipe(
  Command.withDescription(
    "List the organization's origins with their key prefixes (live, and test when active)"
  )
)

export const origin = Input.group("origin", "Origins: the named sources that send leads, one key each", [
  originCreate,
  originSetLimit,
  originList
])

const keyRotate = Command.make(
  "rotate",
  { origin: Input.id("origin", "origin") },
  Effect.fn("Cli.keyRotate")(function* ({ origin }) {
    const keys = yield* KeyStore
    const issued = yield* keys.rotate(origin)
    yield* emit({ key: issued.key, prefix: issued.prefix }, (k) =>
      [
        `New key (shown this once, store it now): ${k.key}`,
        `Prefix: ${k.prefix}`,
        "The previous key no longer works."
      ].join("\n")
    )
  }, withOperator)
).pipe(Command.withDescription("Issue a new key for the origin; the old one is revoked at that instant"))

const keyCreateTest = Command.make(
  "create-test",
  { origin: Input.id("origin", "origin") },
  Effect.fn("Cli.keyCreateTest")(function* ({ origin }) {
    const keys = yield* KeyStore
    const issued = yield* keys.rotate(origin, "test")
    yield* emit({ key: issued.key, prefix: issued.prefix }, (k) =>
      [
        `New test key (shown this once, store it now): ${k.key}`,
        `Prefix: ${k.prefix}`,
        "What it sends is test data: never assigned, no tasks, apart from the live leads.",
        "A previous test key of this origin no longer works."
      ].join("\n")
    )
  }, withOperator)
).pipe(
  Command.withDescription(
    "Issue a test key (lk_test_…) for the origin; an earlier test key is revoked at that instant"
  )
)

const keyRevoke = Command.make(
  "revoke",
  {
    origin: Input.id("origin", "origin"),
    test: Flag.Boolean("test").pipe(
      Flag.withDescription("Revoke the origin's test key instead of its live key"),
      Flag.withDefault(false)
    )
  },
  Effect.fn("Cli.keyRevoke")(function* ({ origin, test }) {
    const keys = yield* KeyStore
    const revoked = yield* keys.revoke(origin, test ? "test" : "live")
    yield* emit(
      { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() },
      (k) => `Revoked ${test ? "test key" : "key"} ${k.prefix} at ${k.revoked_at}`
    )
  }, withOperator)
).pipe(Command.withDescription("Revoke the origin's key (--test: its test key)"))

export const key = Input.group("key", "API keys: each origin has a live key and may have a test key", [
  keyRotate,
  keyRevoke,
  keyCreateTest
])
