import { Effect, Option } from "effect"
import { CurrentOperator } from "../../AdminApi/AdminApi.ts"
import { type Rejected, UnknownEntity } from "../../Domain/Errors.ts"
import { RequestLog } from "../../Intake/RequestLog.ts"
import { Audit } from "../Audit.ts"
import { type OrganizationRow, type OwnedEntity, organizationFor, owns } from "../Organizations.ts"
import { adminFail } from "./RequestContext.ts"

export const notFound = (what: string) => adminFail("not_found", `No such ${what}`)

export const unknownToNotFound = (error: UnknownEntity) => adminFail("not_found", `No such ${error.entity}`)

/** A service call's unknown entity (an id that names nothing) is the console's 404. */
export const orNotFound = <A, E, R>(effect: Effect.Effect<A, E | UnknownEntity, R>) =>
  Effect.catchIf(effect, (error) => error instanceof UnknownEntity, unknownToNotFound)

export const rejectedToConflict = (field?: string) => (error: Rejected) =>
  adminFail("conflict", error.reason, field)

/** What the handlers of every organization's group share: its scope, ownership checks, the audit record. */
export const organizationScope = Effect.gen(function* () {
  const audit = yield* Audit
  const requestLog = yield* RequestLog

  /** Requests just answered are queued for the log; reading it waits for them to be written. */
  const logWritten = requestLog.flush

  /** The organization the request acts on; another organization's id, or none, is a 404. */
  const organizationOf = Effect.fn("Admin.organization")(function* (requested: string | undefined) {
    const operator = yield* CurrentOperator
    const organization = yield* organizationFor(operator, requested)
    if (Option.isNone(organization)) return yield* notFound("organization")
    return organization.value
  })

  const requireOwned = Effect.fn("Admin.requireOwned")(function* (
    organization: OrganizationRow,
    entity: OwnedEntity,
    id: string
  ) {
    if (!(yield* owns(organization.id, entity, id))) return yield* notFound(entity)
  })

  /** The organization the request acts on, once it is known to own the entity (else a 404). */
  const organizationOwning = Effect.fnUntraced(function* (
    requested: string | undefined,
    entity: OwnedEntity,
    id: string
  ) {
    const organization = yield* organizationOf(requested)
    yield* requireOwned(organization, entity, id)
    return organization
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

  return { logWritten, organizationOf, organizationOwning, requireOwned, record } as const
})
