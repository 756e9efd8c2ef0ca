import * as fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { isStorableText } from "../../src/AdminApi/StoredText.ts"
import { anyCharacter } from "../fuzz/arbitraries.ts"
import { announceSeed, fuzzParameters } from "../fuzz/support.ts"
import {
  actsOnOrganization,
  type EndpointInfo,
  endpoints,
  type Harness,
  makeHarness,
  type Organization,
  pathFor,
  type Signed,
  send,
  signIn,
  validBody
} from "./support.ts"

type Place = "path" | "query" | "body"

/** Every text input of every console route: where it goes and its name (the field a 400 must name). */
const textInputs: Record<string, ReadonlyArray<readonly [Place, string]>> = {
  login: [
    ["body", "email"],
    ["body", "password"]
  ],
  current: [],
  logout: [],
  revokeAll: [],
  setLanguage: [],
  organization: [["query", "org"]],
  setTimeZone: [
    ["query", "org"],
    ["body", "time_zone"]
  ],
  organizations: [],
  overview: [["query", "org"]],
  webhookAlerts: [["query", "org"]],
  origins: [["query", "org"]],
  createOrigin: [
    ["query", "org"],
    ["body", "label"]
  ],
  rotateKey: [
    ["path", "id"],
    ["query", "org"]
  ],
  revokeKey: [
    ["path", "id"],
    ["query", "org"]
  ],
  rotateTestKey: [
    ["path", "id"],
    ["query", "org"]
  ],
  revokeTestKey: [
    ["path", "id"],
    ["query", "org"]
  ],
  purgeTestData: [["query", "org"]],
  setRateLimit: [
    ["path", "id"],
    ["query", "org"]
  ],
  requests: [
    ["query", "org"],
    ["query", "origin"],
    ["query", "unattributed"],
    ["query", "status_class"],
    ["query", "outcome"],
    ["query", "from"],
    ["query", "to"],
    ["query", "request_id"],
    ["query", "idempotency_key"],
    ["query", "test"],
    ["query", "cursor"]
  ],
  request: [
    ["path", "request_id"],
    ["query", "org"]
  ],
  keptBody: [
    ["path", "request_id"],
    ["query", "org"]
  ],
  rescue: [
    ["path", "request_id"],
    ["query", "org"],
    ["body", "body"]
  ],
  leads: [
    ["query", "org"],
    ["query", "cursor"],
    ["query", "q"],
    ["query", "test"]
  ],
  lead: [
    ["path", "id"],
    ["query", "org"]
  ],
  exportLead: [
    ["path", "id"],
    ["query", "org"]
  ],
  exportLeads: [
    ["query", "org"],
    ["query", "q"],
    ["query", "test"]
  ],
  exportRequests: [
    ["query", "org"],
    ["query", "origin"],
    ["query", "unattributed"],
    ["query", "status_class"],
    ["query", "outcome"],
    ["query", "from"],
    ["query", "to"],
    ["query", "request_id"],
    ["query", "idempotency_key"],
    ["query", "test"]
  ],
  erasures: [["query", "org"]],
  eraseLead: [
    ["path", "id"],
    ["query", "org"],
    ["body", "reason"]
  ],
  properties: [
    ["query", "org"],
    ["query", "q"]
  ],
  createProperty: [
    ["query", "org"],
    ["body", "codigo"],
    ["body", "external_code"]
  ],
  archiveProperty: [
    ["path", "id"],
    ["query", "org"]
  ],
  restoreProperty: [
    ["path", "id"],
    ["query", "org"]
  ],
  agents: [["query", "org"]],
  createAgent: [
    ["query", "org"],
    ["body", "name"]
  ],
  rules: [["query", "org"]],
  createRule: [
    ["query", "org"],
    ["body", "origin_id"],
    ["body", "property_id"],
    ["body", "agent_ids.0"]
  ],
  deleteRule: [
    ["path", "id"],
    ["query", "org"]
  ],
  webhooks: [["query", "org"]],
  createWebhook: [
    ["query", "org"],
    ["body", "url"]
  ],
  deleteWebhook: [
    ["path", "id"],
    ["query", "org"]
  ],
  disableWebhook: [
    ["path", "id"],
    ["query", "org"]
  ],
  enableWebhook: [
    ["path", "id"],
    ["query", "org"]
  ],
  rotateWebhookSecret: [
    ["path", "id"],
    ["query", "org"]
  ],
  testWebhook: [
    ["path", "id"],
    ["query", "org"]
  ],
  webhookDeliveries: [
    ["path", "id"],
    ["query", "org"]
  ],
  resendWebhookDelivery: [
    ["path", "id"],
    ["path", "event_id"],
    ["query", "org"]
  ],
  webhookAttempts: [
    ["path", "id"],
    ["path", "event_id"],
    ["query", "org"]
  ],
  resendFailedWebhookDeliveries: [
    ["path", "id"],
    ["query", "org"],
    ["body", "since"]
  ],
  audit: [
    ["query", "org"],
    ["query", "cursor"]
  ],
  openapi: []
}

/** Percent-encoding as a client would send it; a lone surrogate as the UTF-8 bytes a naive encoder writes for it. */
const encode = (value: string) =>
  Array.from(value, (character) => {
    const unit = character.charCodeAt(0)
    if (character.length === 1 && unit >= 0xd800 && unit <= 0xdfff) {
      return [0xe0 | (unit >> 12), 0x80 | ((unit >> 6) & 0x3f), 0x80 | (unit & 0x3f)]
        .map((byte) => `%${byte.toString(16).toUpperCase()}`)
        .join("")
    }
    return encodeURIComponent(character)
  }).join("")

/**
 * What the server reads: a body's JSON string as sent; a query value or path segment decoded, or
 * left as sent when its bytes are not UTF-8 (the router's decoding gives up on the whole value).
 */
const receivedAs = (place: Place, value: string) => {
  if (place === "body") return value
  try {
    return decodeURIComponent(encode(value))
  } catch {
    return encode(value)
  }
}

const setIn = (body: Record<string, unknown>, name: string, value: string) => {
  const [key, index] = name.split(".")
  if (index === undefined) return { ...body, [key!]: value }
  const list = [...((body[key!] as Array<unknown> | undefined) ?? [])]
  list[Number(index)] = value
  return { ...body, [key!]: list }
}

const pathParam = (name: string) => new RegExp(`/:${name}(?=/|$)`)

/** The request for `endpoint` with `value` in one input and valid values everywhere else (`?org=` A's). */
const requestWith = (
  endpoint: EndpointInfo,
  org: Organization,
  [place, name]: readonly [Place, string],
  value: string
) => {
  const path =
    place === "path"
      ? pathFor({ ...endpoint, path: endpoint.path.replace(pathParam(name), `/${encode(value)}`) }, org)
      : pathFor(endpoint, org)
  const query = place === "query" ? { [name]: encode(value) } : {}
  const withOrg = actsOnOrganization(endpoint) ? { org: org.organizationId, ...query } : query
  const search = Object.entries(withOrg)
    .map(([key, encoded]) => `${key}=${encoded}`)
    .join("&")
  const body = validBody(endpoint, org) as Record<string, unknown> | undefined
  return {
    path: search === "" ? path : `${path}?${search}`,
    body: place === "body" ? setIn(body ?? {}, name, value) : body
  }
}

const nulOrSurrogate = fc
  .tuple(
    fc.string({ unit: anyCharacter, maxLength: 12 }),
    fc.constantFrom("\u0000", "\ud800", "\udfff", "\udc00x", "a\u0000b"),
    fc.string({ unit: anyCharacter, maxLength: 12 })
  )
  .map(([before, bad, after]) => `${before}${bad}${after}`)

const anyText = fc.oneof(
  nulOrSurrogate,
  fc.string({ unit: anyCharacter, maxLength: 30 }),
  fc.string({ maxLength: 30 }),
  fc.uuid()
)

describe("console routes: text PostgreSQL cannot store is a 400 naming the field, never a 500", {
  timeout: 600_000
}, () => {
  let harness: Harness
  let admin: Signed

  beforeAll(async () => {
    announceSeed("console stored text")
    harness = await makeHarness()
    admin = await signIn(harness, harness.platform)
  }, 120_000)
  afterAll(() => harness?.close())

  it("lists every text input of every route of the contract", () => {
    expect(Object.keys(textInputs).sort()).toEqual(endpoints.map((endpoint) => endpoint.name).sort())
    for (const endpoint of endpoints) {
      for (const name of endpoint.path.match(/:[a-z_]+/g) ?? []) {
        expect(textInputs[endpoint.name], `${endpoint.name} ${name}`).toContainEqual(["path", name.slice(1)])
      }
    }
  })

  for (const endpoint of endpoints) {
    for (const input of textInputs[endpoint.name] ?? []) {
      it(`${endpoint.method} ${endpoint.path}: ${input[0]} ${input[1]}`, async () => {
        await fc.assert(
          fc.asyncProperty(anyText, async (value) => {
            const { path, body } = requestWith(endpoint, harness.a, input, value)
            const answer =
              endpoint.group === "session"
                ? await send(harness.admin, endpoint.method, path, body === undefined ? {} : { body })
                : await admin.call(endpoint.method, path, body === undefined ? {} : { body })
            expect(answer.status, `${value}: ${answer.text}`).toBeLessThan(500)
            expect(answer.body?.error?.code, answer.text).not.toBe("internal_error")
            const received = receivedAs(input[0], value)
            if (!isStorableText(received)) {
              expect(answer.status, answer.text).toBe(400)
              expect(answer.body.error.code).toBe("validation_error")
              expect(answer.body.error.field).toBe(input[1])
            }
          }),
          fuzzParameters(12)
        )
      })
    }
  }
})
