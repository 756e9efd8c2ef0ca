import { Effect, Layer, Option, type Schema } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder, OpenApi } from "effect/http-api"
import { KeyStore } from "../../Accounts/KeyStore.ts"
import {
  AdminApi,
  CurrentOperator,
  type OperatorIdentity,
  sessionCookieName,
  sessionSecurity
} from "../../AdminApi/AdminApi.ts"
import type { Rejected, UnknownEntity } from "../../Domain/Errors.ts"
import { eventTypes } from "../../Domain/WebhookPayload.ts"
import { CaptureRules } from "../../Intake/CaptureRules.ts"
import { LeadRepository } from "../../Intake/LeadRepository.ts"
import { PropertyCatalog } from "../../Intake/PropertyCatalog.ts"
import { RequestLog } from "../../Intake/RequestLog.ts"
import { PersonalData } from "../../PersonalData/PersonalData.ts"
import { WebhookDeliveries } from "../../Webhooks/Deliveries.ts"
import { type WebhookEndpoint, WebhookEndpoints } from "../../Webhooks/Endpoints.ts"
import { Audit } from "../Audit.ts"
import { ConsoleQueries, isValidCursor, type OrganizationRow, type RequestScope } from "../ConsoleQueries.ts"
import { LoginThrottle } from "../LoginThrottle.ts"
import type { Operator } from "../Operators.ts"
import { normalizeEmail, Operators } from "../Operators.ts"
import { Sessions } from "../Sessions.ts"
import { AdminRequest, type AdminRequestShape, adminFail, setResponseHeaders } from "./RequestContext.ts"

const operatorView = (operator: Operator) => ({
  id: operator.id,
  email: operator.email,
  role: operator.role,
  organization_id: operator.organizationId
})

/** `Secure` when the browser's connection is HTTPS (behind a proxy: as a trusted proxy says). */
const cookieOptions = (request: AdminRequestShape) => ({
  httpOnly: true,
  sameSite: "strict" as const,
  path: "/",
  secure: request.https
})

const notFound = (what: string) => adminFail("not_found", `No such ${what}`)

const unknownToNotFound = (error: UnknownEntity) => adminFail("not_found", `No such ${error.entity}`)

const uuidPattern = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

const webhookView = (endpoint: WebhookEndpoint) => ({
  id: endpoint.id,
  url: endpoint.url,
  events: endpoint.events,
  test_events: endpoint.testEvents,
  disabled: endpoint.disabled,
  created_at: endpoint.createdAt.toISOString()
})

const rejectedToConflict = (field?: string) => (error: Rejected) => adminFail("conflict", error.reason, field)

export const layerSessionHandlers = HttpApiBuilder.group(
  AdminApi,
  "session",
  Effect.fn(function* (handlers) {
    const operators = yield* Operators
    const sessions = yield* Sessions
    const throttle = yield* LoginThrottle
    const audit = yield* Audit
    const signedOut = Effect.gen(function* () {
      const { sameSite, path, secure, httpOnly } = cookieOptions(yield* AdminRequest)
      return yield* HttpServerResponse.empty({ status: 204 }).pipe(
        HttpServerResponse.expireCookie(sessionCookieName, { sameSite, path, secure, httpOnly })
      )
    }).pipe(Effect.orDie)
    const record = (operator: OperatorIdentity, action: string) =>
      audit.record({
        organizationId: operator.organizationId,
        operatorId: operator.id,
        operatorEmail: operator.email,
        action,
        target: null,
        ip: operator.ip
      })
    /** A failure that makes the next attempt wait is audited (the refusals while it waits are not: they cost nothing). */
    const auditThrottling = Effect.fnUntraced(function* (attempt: {
      readonly email: string
      readonly ip: string
    }) {
      const wait = yield* throttle.check(attempt).pipe(Effect.orElseSucceed(() => 0))
      if (wait === 0) return
      const account = yield* operators.find(attempt.email)
      const email = normalizeEmail(attempt.email)
      yield* audit.record({
        organizationId: Option.match(account, { onNone: () => null, onSome: (o) => o.organizationId }),
        operatorId: Option.match(account, { onNone: () => null, onSome: (o) => o.id }),
        operatorEmail: email,
        action: "session.sign_in_throttled",
        target: `${email} from ${attempt.ip}: next attempt in ${wait} s`,
        ip: attempt.ip
      })
    })
    return handlers
      .handle(
        "login",
        Effect.fn("Admin.login")(function* ({ payload }) {
          const { ip } = yield* AdminRequest
          const attempt = { email: payload.email, ip }
          const wait = yield* throttle
            .admit(attempt)
            .pipe(
              Effect.catchTag("StoreUnavailable", () =>
                adminFail("temporarily_unavailable", "The database could not be reached")
              )
            )
          if (wait > 0) {
            yield* setResponseHeaders({ "retry-after": String(wait) })
            return yield* adminFail("rate_limited", "Too many failed sign-ins; try again later")
          }
          const operator = yield* operators.authenticate(payload.email, payload.password)
          if (Option.isNone(operator)) {
            yield* auditThrottling(attempt)
            return yield* adminFail("unauthenticated", "Invalid email or password")
          }
          yield* throttle.recordSuccess(attempt)
          const session = yield* sessions.create({ operatorId: operator.value.id, ip })
          yield* HttpApiBuilder.securitySetCookie(
            sessionSecurity,
            session.token,
            cookieOptions(yield* AdminRequest)
          )
          yield* audit.record({
            organizationId: operator.value.organizationId,
            operatorId: operator.value.id,
            operatorEmail: operator.value.email,
            action: "session.sign_in",
            target: null,
            ip
          })
          return { operator: operatorView(operator.value), csrf_token: session.csrfToken }
        })
      )
      .handle("current", () =>
        Effect.map(Effect.service(CurrentOperator), (operator) => ({
          operator: operatorView(operator),
          csrf_token: operator.csrfToken
        }))
      )
      .handle(
        "logout",
        Effect.fn("Admin.logout")(function* () {
          const operator = yield* CurrentOperator
          yield* sessions.revoke(operator.sessionId)
          yield* record(operator, "session.sign_out")
          return yield* signedOut
        })
      )
      .handle(
        "revokeAll",
        Effect.fn("Admin.revokeAll")(function* () {
          const operator = yield* CurrentOperator
          yield* sessions.revokeAll(operator.id)
          yield* record(operator, "session.sign_out_everywhere")
          return yield* signedOut
        })
      )
  })
)

export const layerConsoleHandlers = HttpApiBuilder.group(
  AdminApi,
  "console",
  Effect.fn(function* (handlers) {
    const queries = yield* ConsoleQueries
    const keys = yield* KeyStore
    const catalog = yield* PropertyCatalog
    const rules = yield* CaptureRules
    const audit = yield* Audit
    const requestLog = yield* RequestLog
    const webhooks = yield* WebhookEndpoints
    const deliveries = yield* WebhookDeliveries
    const personalData = yield* PersonalData
    const leads = yield* LeadRepository

    /** Requests just answered are queued for the log; reading it waits for them to be written. */
    const logWritten = requestLog.list({ unattributed: true }, 0).pipe(Effect.ignore)

    /** The organization the request acts on; another organization's id, or none, is a 404. */
    const organizationOf = Effect.fn("Admin.organization")(function* (requested: string | undefined) {
      const operator = yield* CurrentOperator
      const organization = yield* queries.organizationFor(operator, requested)
      if (Option.isNone(organization)) return yield* notFound("organization")
      return organization.value
    })

    const requireOwned = Effect.fn("Admin.requireOwned")(function* (
      organization: OrganizationRow,
      entity: "origin" | "property" | "agent" | "rule" | "lead",
      id: string
    ) {
      if (!(yield* queries.owns(organization.id, entity, id))) return yield* notFound(entity)
    })

    const record = Effect.fn("Admin.audit")(function* (
      organization: OrganizationRow,
      action: string,
      target: string
    ) {
      const operator = yield* CurrentOperator
      yield* audit.record({
        organizationId: organization.id,
        operatorId: operator.id,
        operatorEmail: operator.email,
        action,
        target,
        ip: operator.ip
      })
    })

    /** The organization's endpoint with this id; any other id, malformed included, is a 404. */
    const ownedWebhook = Effect.fn("Admin.ownedWebhook")(function* (
      organization: OrganizationRow,
      id: string
    ) {
      const listed = yield* webhooks
        .list(organization.id)
        .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
      const endpoint = listed.find((item) => item.id === id)
      if (endpoint === undefined) return yield* notFound("webhook")
      return endpoint
    })

    const ruleView = Effect.fn("Admin.rule")(function* (organization: OrganizationRow, id: string) {
      const all = yield* queries.rules(organization.id)
      const rule = all.find((item) => item.id === id)
      if (rule === undefined) return yield* notFound("rule")
      return rule
    })

    const propertyView = Effect.fn("Admin.property")(function* (organization: OrganizationRow, id: string) {
      const property = yield* queries.property(organization.id, id)
      if (Option.isNone(property)) return yield* notFound("property")
      return property.value
    })

    return handlers
      .handle("organizations", () =>
        Effect.flatMap(Effect.service(CurrentOperator), (operator) => queries.organizationsFor(operator))
      )
      .handle(
        "overview",
        Effect.fn("Admin.overview")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          return yield* queries.overview(organization.id)
        })
      )
      .handle(
        "origins",
        Effect.fn("Admin.origins")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          return { items: yield* queries.origins(organization.id) }
        })
      )
      .handle(
        "createOrigin",
        Effect.fn("Admin.createOrigin")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const origin = yield* keys
            .createOrigin({
              organizationId: organization.id,
              label: payload.label.trim(),
              rateLimit: payload.rate_limit ?? 60
            })
            .pipe(
              Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict("label") })
            )
          yield* record(
            organization,
            "origin.create",
            `origin ${origin.id} "${origin.label}" key ${origin.prefix}`
          )
          return {
            id: origin.id,
            label: origin.label,
            key: origin.key,
            prefix: origin.prefix,
            rate_limit: origin.rateLimit
          }
        })
      )
      .handle(
        "rotateKey",
        Effect.fn("Admin.rotateKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const issued = yield* keys
            .rotate(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "key.rotate", `origin ${params.id} new key ${issued.prefix}`)
          return { key: issued.key, prefix: issued.prefix }
        })
      )
      .handle(
        "revokeKey",
        Effect.fn("Admin.revokeKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const revoked = yield* keys
            .revoke(params.id)
            .pipe(Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict() }))
          yield* record(organization, "key.revoke", `origin ${params.id} key ${revoked.prefix}`)
          return { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() }
        })
      )
      .handle(
        "rotateTestKey",
        Effect.fn("Admin.rotateTestKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const issued = yield* keys
            .rotate(params.id, "test")
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "key.test_rotated", `origin ${params.id} new test key ${issued.prefix}`)
          return { key: issued.key, prefix: issued.prefix }
        })
      )
      .handle(
        "revokeTestKey",
        Effect.fn("Admin.revokeTestKey")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          const revoked = yield* keys
            .revoke(params.id, "test")
            .pipe(Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict() }))
          yield* record(organization, "key.test_revoked", `origin ${params.id} test key ${revoked.prefix}`)
          return { prefix: revoked.prefix, revoked_at: revoked.revokedAt.toISOString() }
        })
      )
      .handle(
        "purgeTestData",
        Effect.fn("Admin.purgeTestData")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const purged = yield* leads
            .purgeTest(organization.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(
            organization,
            "test_data.purged",
            `${purged} test lead${purged === 1 ? "" : "s"} of organization ${organization.id}`
          )
          return { purged }
        })
      )
      .handle(
        "setRateLimit",
        Effect.fn("Admin.setRateLimit")(function* ({ query, params, payload }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "origin", params.id)
          yield* keys
            .setRateLimit(params.id, payload.rate_limit)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(
            organization,
            "origin.set_rate_limit",
            `origin ${params.id} rate limit ${payload.rate_limit}`
          )
          return { id: params.id, rate_limit: payload.rate_limit }
        })
      )
      .handle(
        "requests",
        Effect.fn("Admin.requests")(function* ({ query }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOf(query.org)
          let scope: RequestScope = { _tag: "organization", organizationId: organization.id }
          if (query.origin !== undefined && query.unattributed === "true") {
            return yield* adminFail(
              "validation_error",
              "origin and unattributed exclude each other",
              "unattributed"
            )
          }
          if (query.origin !== undefined) {
            yield* requireOwned(organization, "origin", query.origin)
            scope = { _tag: "origin", originId: query.origin }
          } else if (query.unattributed === "true") {
            if (operator.organizationId !== null) {
              return yield* adminFail("forbidden", "Only platform administrators see unattributed requests")
            }
            scope = { _tag: "unattributed" }
          }
          const from = query.from === undefined ? undefined : new Date(query.from)
          const to = query.to === undefined ? undefined : new Date(query.to)
          if (from !== undefined && Number.isNaN(from.getTime()))
            return yield* adminFail("validation_error", "from: expected an ISO-8601 instant", "from")
          if (to !== undefined && Number.isNaN(to.getTime()))
            return yield* adminFail("validation_error", "to: expected an ISO-8601 instant", "to")
          if (!isValidCursor(query.cursor, "request"))
            return yield* adminFail("validation_error", "cursor: not a cursor this API returned", "cursor")
          yield* logWritten
          const page = yield* queries.requests(
            scope,
            {
              statusClass: query.status_class,
              outcome: query.outcome,
              from,
              to,
              requestId: query.request_id,
              idempotencyKey: query.idempotency_key,
              livemode: query.test !== "true"
            },
            { cursor: query.cursor, limit: query.limit ?? 50 }
          )
          return { items: page.items, next_cursor: page.nextCursor }
        })
      )
      .handle(
        "request",
        Effect.fn("Admin.request")(function* ({ query, params }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          const row = yield* queries.request(
            organization.id,
            params.request_id,
            operator.organizationId === null
          )
          if (Option.isNone(row)) return yield* notFound("request")
          return row.value
        })
      )
      .handle(
        "leads",
        Effect.fn("Admin.leads")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          if (!isValidCursor(query.cursor, "lead"))
            return yield* adminFail("validation_error", "cursor: not a cursor this API returned", "cursor")
          const page = yield* queries.leads(
            organization,
            query.q ?? "",
            { cursor: query.cursor, limit: 50 },
            query.test !== "true"
          )
          return { items: page.items, next_cursor: page.nextCursor }
        })
      )
      .handle(
        "lead",
        Effect.fn("Admin.lead")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* logWritten
          const lead = yield* queries.lead(organization.id, params.id)
          if (Option.isNone(lead)) return yield* notFound("lead")
          return lead.value
        })
      )
      .handle(
        "properties",
        Effect.fn("Admin.properties")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          return { items: yield* queries.properties(organization.id, query.q ?? "") }
        })
      )
      .handle(
        "createProperty",
        Effect.fn("Admin.createProperty")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const externalCode = payload.external_code?.trim() ?? null
          const property = yield* catalog
            .add({
              organizationId: organization.id,
              codigo: payload.codigo.trim().toUpperCase(),
              externalCode: externalCode === "" ? null : externalCode,
              archived: false
            })
            .pipe(
              Effect.catchTags({ UnknownEntity: unknownToNotFound, Rejected: rejectedToConflict("codigo") })
            )
          yield* record(organization, "property.create", `property ${property.id} ${property.codigo}`)
          return yield* propertyView(organization, property.id)
        })
      )
      .handle(
        "archiveProperty",
        Effect.fn("Admin.archiveProperty")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "property", params.id)
          const property = yield* catalog
            .archive(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "property.archive", `property ${property.id} ${property.codigo}`)
          return yield* propertyView(organization, params.id)
        })
      )
      .handle(
        "restoreProperty",
        Effect.fn("Admin.restoreProperty")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "property", params.id)
          const property = yield* catalog
            .restore(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "property.restore", `property ${property.id} ${property.codigo}`)
          return yield* propertyView(organization, params.id)
        })
      )
      .handle(
        "agents",
        Effect.fn("Admin.agents")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          return { items: yield* queries.agents(organization.id) }
        })
      )
      .handle(
        "createAgent",
        Effect.fn("Admin.createAgent")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const agent = yield* rules
            .addAgent({ organizationId: organization.id, name: payload.name.trim() })
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "agent.create", `agent ${agent.id} "${agent.name}"`)
          return agent
        })
      )
      .handle(
        "rules",
        Effect.fn("Admin.rules")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          return { items: yield* queries.rules(organization.id) }
        })
      )
      .handle(
        "createRule",
        Effect.fn("Admin.createRule")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const agentIds = [...new Set(payload.agent_ids)]
          if (!payload.round_robin && agentIds.length !== 1) {
            return yield* adminFail(
              "validation_error",
              "agent_ids: exactly one agent unless round_robin is true",
              "agent_ids"
            )
          }
          const created = yield* rules
            .addRule({
              organizationId: organization.id,
              originId: payload.origin_id ?? null,
              propertyId: payload.property_id ?? null,
              agentIds,
              roundRobin: payload.round_robin,
              priority: payload.priority ?? 100
            })
            .pipe(
              Effect.catchTags({
                UnknownEntity: unknownToNotFound,
                Rejected: (error) => adminFail("validation_error", error.reason, "agent_ids")
              })
            )
          yield* record(organization, "rule.create", `rule ${created.id}`)
          return yield* ruleView(organization, created.id)
        })
      )
      .handle(
        "deleteRule",
        Effect.fn("Admin.deleteRule")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          if (!(yield* queries.deleteRule(organization.id, params.id))) return yield* notFound("rule")
          yield* record(organization, "rule.delete", `rule ${params.id}`)
        })
      )
      .handle(
        "exportLead",
        Effect.fn("Admin.exportLead")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "lead", params.id)
          const document = yield* personalData
            .export(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "lead.export", `lead ${params.id}`)
          return document as unknown as Record<string, Schema.Json>
        })
      )
      .handle(
        "eraseLead",
        Effect.fn("Admin.eraseLead")(function* ({ query, params, payload }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOf(query.org)
          yield* requireOwned(organization, "lead", params.id)
          const erased = yield* personalData
            .erase({ leadId: params.id, reason: payload.reason.trim(), actor: operator.email })
            .pipe(
              Effect.catchTags({
                UnknownEntity: unknownToNotFound,
                Rejected: (error) => adminFail("validation_error", `reason: ${error.reason}`, "reason")
              })
            )
          if (!erased.already_erased) yield* record(organization, "lead.erase", `lead ${params.id}`)
          return erased
        })
      )
      .handle(
        "erasures",
        Effect.fn("Admin.erasures")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const rows = yield* personalData
            .erasures(organization.id, 200)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          return {
            items: rows.map((row) => ({
              lead_id: row.lead_id,
              erased_at: row.erased_at,
              erased_by: row.erased_by,
              reason: row.reason
            }))
          }
        })
      )
      .handle(
        "webhooks",
        Effect.fn("Admin.webhooks")(function* ({ query }) {
          const organization = yield* organizationOf(query.org)
          const listed = yield* webhooks
            .list(organization.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          return { items: listed.map(webhookView) }
        })
      )
      .handle(
        "createWebhook",
        Effect.fn("Admin.createWebhook")(function* ({ query, payload }) {
          const organization = yield* organizationOf(query.org)
          const added = yield* webhooks
            .add({
              organizationId: organization.id,
              url: payload.url.trim(),
              events: [...new Set(payload.events ?? eventTypes)],
              testEvents: payload.test_events ?? false
            })
            .pipe(
              Effect.catchTags({
                UnknownEntity: unknownToNotFound,
                Rejected: (error) => adminFail("validation_error", `url: ${error.reason}`, "url")
              })
            )
          yield* record(
            organization,
            "webhook.create",
            `webhook ${added.endpoint.id} ${added.endpoint.url} (${added.endpoint.events.join(", ")})`
          )
          return { endpoint: webhookView(added.endpoint), secret: added.secret }
        })
      )
      .handle(
        "deleteWebhook",
        Effect.fn("Admin.deleteWebhook")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          const endpoint = yield* ownedWebhook(organization, params.id)
          yield* webhooks.remove(endpoint.id).pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "webhook.remove", `webhook ${endpoint.id} ${endpoint.url}`)
        })
      )
      .handle(
        "enableWebhook",
        Effect.fn("Admin.enableWebhook")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* ownedWebhook(organization, params.id)
          const enabled = yield* webhooks
            .enable(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "webhook.enable", `webhook ${enabled.id} ${enabled.url}`)
          return webhookView(enabled)
        })
      )
      .handle(
        "rotateWebhookSecret",
        Effect.fn("Admin.rotateWebhookSecret")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* ownedWebhook(organization, params.id)
          const rotated = yield* webhooks
            .rotateSecret(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "webhook.rotate_secret", `webhook ${params.id}`)
          return rotated
        })
      )
      .handle(
        "webhookDeliveries",
        Effect.fn("Admin.webhookDeliveries")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* ownedWebhook(organization, params.id)
          const rows = yield* deliveries
            .list(params.id, query.limit ?? 50)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          return { items: rows }
        })
      )
      .handle(
        "testWebhook",
        Effect.fn("Admin.testWebhook")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* ownedWebhook(organization, params.id)
          const queued = yield* deliveries
            .sendTest(params.id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "webhook.test", `webhook ${params.id} event ${queued.eventId}`)
          return { event_id: queued.eventId, type: "webhook.test" as const, state: "pending" as const }
        })
      )
      .handle(
        "resendWebhookDelivery",
        Effect.fn("Admin.resendWebhookDelivery")(function* ({ query, params }) {
          const organization = yield* organizationOf(query.org)
          yield* ownedWebhook(organization, params.id)
          if (!uuidPattern.test(params.event_id)) return yield* notFound("event")
          yield* deliveries
            .resend(params.id, params.event_id)
            .pipe(Effect.catchTag("UnknownEntity", unknownToNotFound))
          yield* record(organization, "webhook.resend", `webhook ${params.id} event ${params.event_id}`)
          return { event_id: params.event_id, state: "pending" as const }
        })
      )
      .handle(
        "audit",
        Effect.fn("Admin.audit.list")(function* ({ query }) {
          const operator = yield* CurrentOperator
          const organization = yield* organizationOf(query.org)
          const page = yield* audit.list(
            { organizationId: organization.id, includePlatform: operator.organizationId === null },
            { ...(query.cursor === undefined ? {} : { cursor: query.cursor }), limit: 50 }
          )
          return {
            items: page.items.map((entry) => ({
              id: entry.id,
              at: entry.at.toISOString(),
              operator_email: entry.operatorEmail,
              action: entry.action,
              target: entry.target,
              ip: entry.ip
            })),
            next_cursor: page.nextCursor
          }
        })
      )
  })
)

export const adminOpenApiDocument = () => OpenApi.fromApi(AdminApi)

export const layerAdminDocsHandlers = HttpApiBuilder.group(AdminApi, "adminDocs", (handlers) => {
  const document = JSON.stringify(adminOpenApiDocument())
  return handlers.handle("openapi", () =>
    Effect.succeed(HttpServerResponse.text(document, { contentType: "application/json" }))
  )
})

export const layerAdminHandlers = Layer.mergeAll(
  layerSessionHandlers,
  layerConsoleHandlers,
  layerAdminDocsHandlers
)
