import { Effect, Option, Schema, Stdio, Stream } from "effect"
import { SqlClient } from "effect/sql"
import type { AuditAction } from "../AdminApi/Audit.ts"
import { Organization } from "../AdminApi/Overview.ts"
import { Audit } from "../Console/AuditLog.ts"
import { csvFile, exportTarget, leadColumns, requestColumns } from "../Console/CsvExport.ts"
import { streamLeads } from "../Console/Leads/Queries.ts"
import { type RequestScope, streamRequests } from "../Console/Requests/Queries.ts"
import { decodeFirst } from "../Platform/Sql/Sql.ts"
import * as Input from "./Input.ts"

/** `--csv`: the whole list, every row its filters keep (no --limit), as a CSV file on stdout. */
export const csvFlag = Input.toggle(
  "csv",
  "Print every matching row (no --limit) as CSV for a spreadsheet: UTF-8 with BOM, CRLF, formulas kept as text; audited"
)

const OrganizationOfOrigin = Schema.Struct({ organization_id: Schema.String })

const write = (chunks: Stream.Stream<string, unknown, never>) =>
  Effect.flatMap(Effect.service(Stdio.Stdio), (stdio) =>
    Stream.run(chunks, stdio.stdout({ endOnDone: false }))
  ).pipe(Effect.orDie)

const audited = (organizationId: string | null, action: AuditAction, target: string) =>
  Effect.gen(function* () {
    const actor = yield* Input.actor(Option.none(), "exporting")
    return (rowCount: number) =>
      Audit.use((audit) =>
        audit.record({
          organizationId,
          operatorId: null,
          operatorEmail: `cli:${actor}`,
          action,
          target: exportTarget(target, rowCount),
          ip: null
        })
      )
  })

/** `requests --csv`: the request log of an origin (or the unattributed one), live and test alike. */
export const requestsCsv = Effect.fn("Cli.requestsCsv")(function* (scope: RequestScope, keptOnly: boolean) {
  const sql = yield* SqlClient.SqlClient
  let organizationId: string | null = null
  if (scope._tag === "origin") {
    const owner = yield* sql`SELECT organization_id FROM origins WHERE id = ${scope.originId}`.pipe(
      decodeFirst(OrganizationOfOrigin)
    )
    if (Option.isNone(owner))
      return yield* new Input.UsageError({ message: `origin not found: ${scope.originId}` })
    organizationId = owner.value.organization_id
  }
  const target = `${scope._tag === "origin" ? `origin ${scope.originId}` : "unattributed"}${keptOnly ? " kept" : ""}`
  const done = yield* audited(organizationId, "requests.export_csv", target)
  yield* write(
    csvFile(requestColumns, streamRequests(scope, { kept: keptOnly, livemode: "both" }), done).pipe(
      Stream.provideService(SqlClient.SqlClient, sql),
      Stream.provideService(Audit, yield* Audit)
    )
  )
})

/** `lead list --csv`: the organization's live leads (or its test leads), newest first. */
export const leadsCsv = Effect.fn("Cli.leadsCsv")(function* (organizationId: string, livemode: boolean) {
  const sql = yield* SqlClient.SqlClient
  const organization =
    yield* sql`SELECT id, name, country FROM organizations WHERE id = ${organizationId}`.pipe(
      decodeFirst(Organization)
    )
  if (Option.isNone(organization))
    return yield* new Input.UsageError({ message: `organization not found: ${organizationId}` })
  const done = yield* audited(organizationId, "leads.export_csv", `leads${livemode ? "" : " test"}`)
  yield* write(
    csvFile(leadColumns, streamLeads(organization.value, "", livemode), done).pipe(
      Stream.provideService(SqlClient.SqlClient, sql),
      Stream.provideService(Audit, yield* Audit)
    )
  )
})
