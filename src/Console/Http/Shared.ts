import { Effect, Option } from "effect"
import { type HttpApi, HttpApiBuilder, type HttpApiGroup } from "effect/http-api"
import { AdminApi, CurrentOperator } from "../../AdminApi/AdminApi.ts"
import type { AuditAction } from "../../AdminApi/Audit.ts"
import { type Rejected, UnknownEntity } from "../../Domain/Errors.ts"
import { RequestLog } from "../../Intake/RequestLog.ts"
import { Audit } from "../AuditLog.ts"
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
    action: AuditAction,
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

  /** A handler that reads or does one thing to the organization the request acts on. */
  const forOrganization = <A, E, R>(
    span: string,
    run: (organization: OrganizationRow) => Effect.Effect<A, E, R>
  ) =>
    Effect.fn(span)(function* ({ query }: { readonly query: { readonly org?: string | undefined } }) {
      return yield* run(yield* organizationOf(query.org))
    })

  /** A list handler: `{ items }` of the organization the request acts on. */
  const organizationItems = <A, E, R>(
    span: string,
    list: (organizationId: string) => Effect.Effect<ReadonlyArray<A>, E, R>
  ) => forOrganization(span, (organization) => Effect.map(list(organization.id), (items) => ({ items })))

  return {
    logWritten,
    organizationOf,
    organizationOwning,
    requireOwned,
    record,
    forOrganization,
    organizationItems
  } as const
})

export type OrganizationScope = Effect.Success<typeof organizationScope>

type AdminGroups = typeof AdminApi extends HttpApi.HttpApi<string, infer Groups> ? Groups : never

/** What building a group needs once the organization scope is built for it too. */
type WithScope<Return> =
  Return extends Effect.Effect<infer A, infer E, infer R>
    ? Effect.Effect<A, E, R | Audit | RequestLog>
    : Return

/**
 * The handlers of a group that acts on an organization: `build` gets them with the organization
 * scope, and the compiler still refuses a group that leaves an endpoint unhandled.
 */
export const organizationGroup = <const Identifier extends HttpApiGroup.Identifier<AdminGroups>, Return>(
  identifier: Identifier,
  build: (
    handlers: HttpApiBuilder.Handlers.FromGroup<HttpApiGroup.WithIdentifier<AdminGroups, Identifier>>,
    scope: OrganizationScope
  ) => HttpApiBuilder.Handlers.ValidateReturn<Return>
) =>
  HttpApiBuilder.group(
    AdminApi,
    identifier,
    (handlers) =>
      Effect.flatMap(
        organizationScope,
        (scope) => build(handlers, scope) as Effect.Effect<unknown>
      ) as HttpApiBuilder.Handlers.ValidateReturn<WithScope<Return>>
  )
