import { Config, Effect, Option } from "effect"
import { Command } from "effect/cli"
import { KeyStore } from "../Accounts/KeyStore.ts"
import { Organizations } from "../Accounts/Organizations.ts"
import { Operators } from "../Console/Operators.ts"
import { CaptureRules } from "../Intake/CaptureRules.ts"
import { PropertyCatalog } from "../Intake/PropertyCatalog.ts"
import { AppConfig } from "../Platform/Config.ts"
import { announcedUrl } from "../Platform/Listening.ts"
import * as Sql from "../Platform/Sql/Sql.ts"
import * as Input from "./Input.ts"
import { withConsole } from "./Operators.ts"
import { emit } from "./Output.ts"
import { layerOverrides } from "./Serve.ts"

/** The console's address as a browser reaches it: a wildcard listening address means this machine. */
const linkHost = (host: string) =>
  host === "0.0.0.0" || host === "::" ? "localhost" : host.includes(":") ? `[${host}]` : host

const shellQuote = (text: string) => `'${text.replaceAll("'", `'\\''`)}'`

const sampleLead = (codigo: string) => ({
  nombre: "Ana López",
  telefono: "+52 55 1234 5678",
  email: "ana@example.com",
  mensaje: "Me interesa, ¿sigue disponible?",
  propiedad: { codigo }
})

/** How to start a server that answers where the printed lines say. */
const serveCommand = (port: Option.Option<number>, host: Option.Option<string>) =>
  Option.isNone(port) && Option.isNone(host)
    ? "npm start"
    : [
        "npx lead-intake serve",
        ...Option.toArray(Option.map(port, (p) => `--port ${p}`)),
        ...Option.toArray(Option.map(host, (h) => `--host ${h}`))
      ].join(" ")

export const demo = Command.make(
  "demo",
  {
    port: Input.optional(
      Input.integer("port", 1, 65535),
      "The port the server listens on (PORT), for the printed URL"
    ),
    host: Input.optional(Input.text("host"), "The address the server listens on (HOST), for the printed URL")
  },
  ({ port, host }) =>
    demoSetup(serveCommand(port, host), Option.isSome(port) || Option.isSome(host)).pipe(
      Effect.provide(layerOverrides({ PORT: Option.map(port, String), HOST: host }))
    )
).pipe(
  Command.withDescription(
    "Create a demo organization, agent, capture rule, origin with key, two properties and a console operator; print a ready curl line for the server's URL (PUBLIC_BASE_URL, or --port/--host, else the URLs the running server announced, else PORT/HOST) and the console sign-in"
  )
)

const demoSetup = Effect.fn("Cli.demo")(function* (serve: string, flagged: boolean) {
  const config = yield* AppConfig
  const organizations = yield* Organizations
  const rules = yield* CaptureRules
  const keys = yield* KeyStore
  const catalog = yield* PropertyCatalog
  const organization = yield* organizations.create({ name: "Inmobiliaria Demo", country: "MX" })
  const agent = yield* rules.addAgent({ organizationId: organization.id, name: "Agente Demo" })
  const origin = yield* keys.createOrigin({
    organizationId: organization.id,
    label: "sitio-web",
    rateLimit: 60
  })
  const rule = yield* rules.addRule({
    organizationId: organization.id,
    originId: null,
    propertyId: null,
    agentIds: [agent.id],
    roundRobin: false,
    priority: 100
  })
  const properties = [
    yield* catalog.add({
      organizationId: organization.id,
      codigo: "DEM-0001",
      externalCode: "CASA-CENTRO",
      archived: false
    }),
    yield* catalog.add({
      organizationId: organization.id,
      codigo: "DEM-0002",
      externalCode: "DEPTO-NORTE",
      archived: false
    })
  ]
  const operator = yield* (yield* Operators).add({
    organizationId: organization.id,
    email: `demo-${organization.id.slice(0, 8)}@example.com`,
    role: "admin"
  })
  const database = yield* Sql.Database
  // Where the running server said it listens (recorded at its start), unless this environment sets
  // PUBLIC_BASE_URL or the flags name the address; without a running server, this environment's.
  const announcedApi = yield* announcedUrl("api")
  const apiUrl =
    Option.isSome(yield* Config.option(Config.String("PUBLIC_BASE_URL"))) || flagged
      ? config.publicBaseUrl
      : Option.getOrElse(announcedApi, () => config.publicBaseUrl)
  const consoleUrl = Option.isSome(announcedApi)
    ? Option.getOrNull(yield* announcedUrl("admin"))
    : Option.match(config.adminPort, {
        onNone: () => null,
        onSome: (port) => `http://${linkHost(config.adminHost)}:${port}/`
      })
  const curl = [
    `curl -sS -X POST ${apiUrl}/v1/leads`,
    `-H ${shellQuote(`Authorization: Bearer ${origin.key}`)}`,
    `-H 'Content-Type: application/json'`,
    `-d ${shellQuote(JSON.stringify(sampleLead(properties[0]!.codigo)))}`
  ].join(" ")
  yield* emit(
    {
      organization_id: organization.id,
      agent_id: agent.id,
      rule_id: rule.id,
      origin_id: origin.id,
      label: origin.label,
      key: origin.key,
      prefix: origin.prefix,
      properties,
      url: apiUrl,
      docs: `${apiUrl}/v1/docs`,
      curl,
      console_url: consoleUrl,
      database: database.description,
      operator_email: operator.email,
      operator_password: operator.password
    },
    (d) =>
      [
        `Demo organization "${organization.name}": ${d.organization_id}`,
        `Written to ${d.database}: the server must use the same database (the same DATABASE_URL, or for the embedded one the same LEAD_INTAKE_DATA_DIR, default .data, from the same directory).`,
        `Agent "${agent.name}" (${d.agent_id}) gets every new lead (rule ${d.rule_id})`,
        `Properties: ${d.properties.map((p) => `${p.codigo} (${p.id})`).join(", ")}`,
        `Origin "${d.label}": ${d.origin_id}`,
        `Key (shown this once): ${d.key}`,
        "",
        `With the server running (${serve}) on ${d.url}, send a lead:`,
        `  ${d.curl}`,
        "",
        "Then look at it:",
        `  npx lead-intake requests --origin ${d.origin_id}`,
        `  npx lead-intake lead list --org ${d.organization_id}`,
        `Documentation: ${d.docs}`,
        "",
        d.console_url === null
          ? "The console is off (ADMIN_PORT=off); its operator:"
          : `The console at ${d.console_url}, signed in as:`,
        `  e-mail: ${d.operator_email}`,
        `  password (shown this once): ${d.operator_password}`
      ].join("\n")
  )
}, withConsole)
