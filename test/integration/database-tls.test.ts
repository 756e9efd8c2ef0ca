import { execFile } from "node:child_process"
import { chmodSync, chownSync, existsSync, readdirSync, writeFileSync } from "node:fs"
import { mkdtemp, rm } from "node:fs/promises"
import { tmpdir } from "node:os"
import * as path from "node:path"
import { promisify } from "node:util"
import { Cause, Effect, Exit, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { AppConfig } from "../../src/Platform/Config.ts"
import * as Sql from "../../src/Platform/Sql/Sql.ts"
import { freePort, run } from "../e2e/Processes.ts"
import { testConfig } from "../support/Database.ts"

/**
 * TLS to PostgreSQL as libpq's URL parameters say it, against Debian's PostgreSQL with `ssl=on` and
 * a `pg_hba.conf` that refuses every connection without TLS: a CA and a server certificate for
 * 127.0.0.1 and `localhost` made here with openssl, and a second CA that signed nothing of it.
 */

const exec = promisify(execFile)
const debianBin = existsSync("/usr/lib/postgresql")
  ? readdirSync("/usr/lib/postgresql")
      .sort((a, b) => Number(b) - Number(a))
      .map((version) => `/usr/lib/postgresql/${version}/bin`)
      .find((bin) => existsSync(`${bin}/initdb`))
  : undefined
const asRoot = process.getuid?.() === 0

describe.skipIf(debianBin === undefined)(
  "DATABASE_URL with sslmode (Debian's PostgreSQL, ssl=on)",
  {
    timeout: 60_000
  },
  () => {
    let dir: string
    let port: number
    const password = crypto.randomUUID()
    const bin = debianBin!
    /** initdb and postgres refuse root: as root (CI), the cluster runs as `postgres`. */
    const asOwner = (command: string, args: ReadonlyArray<string>) =>
      asRoot ? exec("runuser", ["-u", "postgres", "--", command, ...args]) : exec(command, [...args])
    const file = (name: string) => path.join(dir, name)
    const openssl = (...args: ReadonlyArray<string>) => exec("openssl", [...args], { cwd: dir })

    const url = (host: string, parameters: string) =>
      `postgres://postgres:${password}@${host}:${port}/postgres?${parameters}`

    /** What the service's client sees on `url`: the session's TLS state, or why it could not connect. */
    const connect = (raw: string) =>
      Effect.runPromiseExit(
        Effect.gen(function* () {
          const sql = yield* SqlClient.SqlClient
          const [row] = yield* sql<{
            ssl: boolean
            version: string
          }>`SELECT ssl, version, current_setting('server_version_num')::int / 10000 AS major FROM pg_stat_ssl WHERE pid = pg_backend_pid()`
          return row!
        }).pipe(
          Effect.provide(
            Sql.layerClient.pipe(
              Layer.provide(
                Layer.succeed(AppConfig, { ...testConfig, databaseUrl: Option.some(Redacted.make(raw)) })
              )
            )
          ),
          Effect.scoped
        )
      )
    const failure = (exit: Exit.Exit<unknown, unknown>) => {
      expect(Exit.isFailure(exit), "refused").toBe(true)
      return Exit.isFailure(exit) ? Cause.pretty(exit.cause) : ""
    }

    beforeAll(async () => {
      dir = await mkdtemp(path.join(tmpdir(), "lead-intake-tls-"))
      chmodSync(dir, 0o755)
      port = await freePort()
      /** A self-signed CA valid for two days: its key and certificate in the test's folder. */
      const makeCa = (subject: string, key: string, certificate: string) =>
        openssl(
          "req",
          "-x509",
          "-newkey",
          "rsa:2048",
          "-nodes",
          "-days",
          "2",
          "-subj",
          subject,
          "-keyout",
          key,
          "-out",
          certificate
        )
      await makeCa("/CN=Lead Intake test CA", "ca.key", "ca.pem")
      await makeCa("/CN=Another CA", "other.key", "other-ca.pem")
      await openssl(
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-subj",
        "/CN=localhost",
        "-keyout",
        "server.key",
        "-out",
        "server.csr"
      )
      writeFileSync(file("san.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n")
      await openssl(
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-days",
        "2",
        "-extfile",
        "san.ext",
        "-out",
        "server.pem"
      )
      chmodSync(file("server.key"), 0o600)
      writeFileSync(file("pwfile"), `${password}\n`)
      if (asRoot) {
        const ids = await postgresIds()
        for (const name of [".", "server.key", "server.pem", "pwfile"]) chownSync(file(name), ...ids)
      }
      await asOwner(`${bin}/initdb`, [
        "-D",
        file("data"),
        "-U",
        "postgres",
        "--pwfile",
        file("pwfile"),
        "--auth-local=scram-sha-256",
        "--auth-host=scram-sha-256"
      ])
      writeFileSync(
        file("data/pg_hba.conf"),
        "hostssl all all 127.0.0.0/8 scram-sha-256\nhostnossl all all 0.0.0.0/0 reject\n"
      )
      await asOwner(`${bin}/pg_ctl`, [
        "-D",
        file("data"),
        "-l",
        file("server.log"),
        "-w",
        "-t",
        "30",
        "start",
        "-o",
        `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1,127.0.0.2 -c ssl=on -c ssl_cert_file=${file("server.pem")} -c ssl_key_file=${file("server.key")}`
      ])
    }, 60_000)

    afterAll(async () => {
      if (dir === undefined) return
      if (existsSync(file("data/postmaster.pid")))
        await asOwner(`${bin}/pg_ctl`, ["-D", file("data"), "-m", "fast", "stop"])
      await rm(dir, { recursive: true, force: true })
    })

    it("verify-full with the CA that signed the server's certificate: connected over TLS, by address and by name", async () => {
      for (const host of ["127.0.0.1", "localhost"]) {
        const exit = await connect(url(host, `sslmode=verify-full&sslrootcert=${file("ca.pem")}`))
        expect(Exit.isSuccess(exit), Exit.isFailure(exit) ? Cause.pretty(exit.cause) : "").toBe(true)
        if (Exit.isSuccess(exit))
          expect(exit.value).toMatchObject({ ssl: true, version: expect.stringMatching(/^TLSv1\.[23]$/) })
      }
    })

    it("a server certificate signed by another CA is refused, and the operator's line says why", async () => {
      const otherCa = file("other-ca.pem")
      const refused = failure(await connect(url("127.0.0.1", `sslmode=verify-full&sslrootcert=${otherCa}`)))
      expect(refused).toContain("unable to verify the first certificate")
      // No CA given: the system's, which never signed this test's CA.
      expect(failure(await connect(url("127.0.0.1", "sslmode=verify-full")))).toContain(
        "unable to verify the first certificate"
      )
      const migrate = await run(["migrate", "--status"], {
        env: { DATABASE_URL: url("127.0.0.1", `sslmode=verify-ca&sslrootcert=${otherCa}`) }
      })
      expect(migrate.code).toBe(1)
      expect(migrate.stderr.trimEnd()).toBe(
        "lead-intake: database: PostgreSQL's certificate is not signed by the CA of DATABASE_URL's sslrootcert (the system's CAs when unset): unable to verify the first certificate (UNABLE_TO_VERIFY_LEAF_SIGNATURE)"
      )
      expect(migrate.stderr).not.toContain(password)
    })

    it("verify-full checks the name; verify-ca only the chain; require only encrypts", async () => {
      const ca = `sslrootcert=${file("ca.pem")}`
      // 127.0.0.2 is this server too, but not a name on its certificate.
      expect(failure(await connect(url("127.0.0.2", `sslmode=verify-full&${ca}`)))).toContain(
        "Hostname/IP does not match certificate's altnames: IP: 127.0.0.2 is not in the cert's list: 127.0.0.1"
      )
      const misnamed = await run(["migrate", "--status"], {
        env: { DATABASE_URL: url("127.0.0.2", `sslmode=verify-full&${ca}`) }
      })
      expect(misnamed.stderr.trimEnd()).toBe(
        "lead-intake: database: PostgreSQL's certificate does not name the host DATABASE_URL connects to (sslmode=verify-full): Hostname/IP does not match certificate's altnames: IP: 127.0.0.2 is not in the cert's list: 127.0.0.1 (ERR_TLS_CERT_ALTNAME_INVALID)"
      )
      const verifyCa = await connect(url("127.0.0.2", `sslmode=verify-ca&${ca}`))
      expect(Exit.isSuccess(verifyCa) && verifyCa.value.ssl).toBe(true)
      const require = await connect(url("127.0.0.2", "sslmode=require"))
      expect(Exit.isSuccess(require) && require.value.ssl).toBe(true)
    })

    it("without TLS this server refuses, so the connections above were encrypted; an unreadable sslrootcert stops the start", async () => {
      expect(failure(await connect(url("127.0.0.1", "sslmode=disable")))).toMatch(
        /no encryption|pg_hba\.conf rejects/
      )
      expect(
        failure(await connect(url("127.0.0.1", `sslmode=verify-full&sslrootcert=${file("missing.pem")}`)))
      ).toContain(`DATABASE_URL's sslrootcert=${file("missing.pem")} cannot be read (ENOENT)`)
    })

    it("migrate and its status over verify-full TLS, from the command line", async () => {
      const env = { DATABASE_URL: url("localhost", `sslmode=verify-full&sslrootcert=${file("ca.pem")}`) }
      const migrated = await run(["migrate", "--json"], { env })
      expect(migrated.code, migrated.stderr).toBe(0)
      expect(JSON.parse(migrated.stdout).applied.length).toBeGreaterThan(0)
    })
  }
)

const postgresIds = async (): Promise<[number, number]> => {
  const { stdout } = await exec("id", ["-u", "postgres"])
  const { stdout: group } = await exec("id", ["-g", "postgres"])
  return [Number(stdout.trim()), Number(group.trim())]
}
