import { hash } from "node:crypto"
import * as net from "node:net"
import pg from "pg"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { phoneMatchKey } from "../../src/Domain/Phone.ts"
import { freshDatabaseUrl, inspector, sleep, startPostgresServer } from "./support.ts"

/**
 * What a forwarder between the service and PostgreSQL does to the connection that sends a marked
 * lead write (the lead's `nombre`, found in the statement's parameters): `cut` forwards the write,
 * drops its answer and closes both ends 300 ms later (the commit applied, its answer lost, as in a
 * crash after the commit); `hold` keeps the write from the server and closes the client's end
 * (nothing reached the server) until `deliverHeld` hands it over late, after its request answered.
 * With `outage`, when the client's end closes every connection is closed and every new one refused for 6 s;
 * `answer` lets the statement and its answer through, and starts that outage as soon as the answer is
 * (up to its `ReadyForQuery`, which may come in a chunk of its own).
 */
interface Fault {
  readonly write: "cut" | "hold" | "answer"
  readonly outage?: boolean
}

/** The chunk ends with PostgreSQL's `ReadyForQuery` ('Z', length 5, a status byte): the answer is whole. */
const endsAnswer = (chunk: Buffer) =>
  chunk.length >= 6 && chunk.subarray(-6, -1).equals(Buffer.from([0x5a, 0, 0, 0, 5]))

const startForwarder = (upstreamPort: number) => {
  const faults = new Map<string, Fault>()
  const held: Array<{ readonly chunk: Buffer; readonly upstream: net.Socket }> = []
  const sockets = new Set<net.Socket>()
  let refusingUntil = 0
  /** New connections are refused, and what open ones send is dropped, for the next 6 s. */
  const refuse = () => {
    refusingUntil = performance.now() + 6_000
  }
  const startOutage = () => {
    refuse()
    for (const socket of sockets) if (!held.some((h) => h.upstream === socket)) socket.destroy()
  }
  const server = net.createServer((client) => {
    if (performance.now() < refusingUntil) {
      client.destroy()
      return
    }
    const upstream = net.connect(upstreamPort, "127.0.0.1")
    sockets.add(client).add(upstream)
    let muted = false
    let holding = false
    let outageAfterAnswer = false
    upstream.on("data", (chunk) => {
      if (muted) return
      if (!outageAfterAnswer || !endsAnswer(chunk)) client.write(chunk)
      else {
        // The outage begins with this answer: nothing a client sends from now on reaches the server,
        // however soon the service sends its next statement, and every connection closes once the
        // answer is out. (Begun a turn later, a fast enough release could still get through.)
        refuse()
        client.write(chunk, startOutage)
      }
    })
    client.on("data", (chunk) => {
      if (holding || performance.now() < refusingUntil) return
      const text = chunk.toString("latin1")
      const found = [...faults].find(([marker]) => text.includes(marker))
      if (found !== undefined) faults.delete(found[0])
      const fault = found?.[1]
      if (fault === undefined || fault.write === "answer") {
        outageAfterAnswer = fault !== undefined
        upstream.write(chunk)
        return
      }
      muted = true
      if (fault.write === "hold") {
        holding = true
        held.push({ chunk, upstream })
      } else upstream.write(chunk)
      setTimeout(() => {
        client.destroy()
        if (fault.write === "cut") upstream.destroy()
        if (fault.outage === true) startOutage()
      }, 300)
    })
    const close = () => {
      sockets.delete(client)
      if (!holding) {
        upstream.destroy()
        sockets.delete(upstream)
      }
      client.destroy()
    }
    client.on("close", close)
    client.on("error", close)
    upstream.on("error", () => client.destroy())
    upstream.on("close", () => {
      sockets.delete(upstream)
      client.destroy()
    })
  })
  return new Promise<{
    port: number
    fault: (marker: string, fault: Fault) => void
    deliverHeld: () => Promise<void>
    close: () => Promise<void>
  }>((resolve) =>
    server.listen(0, "127.0.0.1", () => {
      const address = server.address()
      resolve({
        port: typeof address === "object" && address !== null ? address.port : 0,
        fault: (marker, fault) => faults.set(marker, fault),
        deliverHeld: async () => {
          for (const { chunk, upstream } of held.splice(0)) {
            upstream.write(chunk)
            await sleep(1_000)
            upstream.destroy()
          }
        },
        close: () =>
          new Promise<void>((done) => {
            for (const socket of sockets) socket.destroy()
            server.close(() => done())
          })
      })
    })
  )
}

const throughPort = (url: string, port: number) => {
  const parsed = new URL(url)
  parsed.port = String(port)
  return parsed.toString()
}

let phoneCounter = 0

const markedLead = () => {
  phoneCounter++
  const marker = `lost-${crypto.randomUUID()}`
  const phone = `+52 55 ${String(Math.floor(Math.random() * 1e4)).padStart(4, "0")} ${String(phoneCounter).padStart(4, "0")}`
  return {
    marker,
    phone,
    key: crypto.randomUUID(),
    body: JSON.stringify({ nombre: marker, telefono: phone, mensaje: "lost answer" })
  }
}

type Server = Awaited<ReturnType<typeof startPostgresServer>>

interface Answer {
  readonly status: number
  readonly json: { [key: string]: unknown; error?: { code: string; message: string } }
  readonly elapsed: number
}

/** A create sent to `instance` with the API key `bearer`. */
const postAs = async (
  instance: Server,
  bearer: string,
  lead: ReturnType<typeof markedLead>
): Promise<Answer> => {
  const startedAt = performance.now()
  const response = await fetch(`http://127.0.0.1:${instance.port}/v1/leads`, {
    method: "POST",
    headers: {
      authorization: `Bearer ${bearer}`,
      "content-type": "application/json",
      "idempotency-key": lead.key
    },
    body: lead.body,
    signal: AbortSignal.timeout(20_000)
  })
  return {
    status: response.status,
    json: (await response.json()) as Answer["json"],
    elapsed: performance.now() - startedAt
  }
}

const post = (server: Server, lead: ReturnType<typeof markedLead>) => postAs(server, server.fixture.key, lead)

/** The log lines (JSON) about one idempotency key. */
const keyLines = (lines: ReadonlyArray<string>, key: string) =>
  lines
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter((line) => line.key_digest === hash("sha256", key).slice(0, 12))

/**
 * A write whose answer is lost, on a real PostgreSQL through a forwarder that loses it: the service
 * settles the outcome by asking the database (its reservation released if still the write's, else
 * found completed), so the request answers the truth, and a key is held past its request only while
 * the database cannot be asked, by this instance or another.
 */
describe("fault: a write's answer is lost", () => {
  let url: string
  let forwarder: Awaited<ReturnType<typeof startForwarder>>
  let second: Awaited<ReturnType<typeof startForwarder>>
  let server: Server
  let other: Server
  let db: ReturnType<typeof inspector>
  const lines: Array<string> = []

  beforeAll(async () => {
    url = await freshDatabaseUrl()
    const port = Number(new URL(url).port)
    forwarder = await startForwarder(port)
    second = await startForwarder(port)
    server = await startPostgresServer(throughPort(url, forwarder.port), 4, { logLines: lines })
    // A second instance on the same database and organization (seeded again under another key).
    other = await startPostgresServer(throughPort(url, second.port), 4)
    db = inspector(url)
  }, 60_000)

  afterAll(async () => {
    await server?.close()
    await other?.close()
    await forwarder?.close()
    await second?.close()
    await db?.close()
  })

  const leadsFor = (phone: string) =>
    db.query<{ id: string; notes: number; events: number }>(
      `SELECT l.id,
              (SELECT count(*)::int FROM lead_notes n WHERE n.lead_id = l.id) AS notes,
              (SELECT count(*)::int FROM outbox_events e WHERE e.lead_id = l.id) AS events
       FROM leads l WHERE l.telefono = $1`,
      [phone]
    )

  it("committed, its connection cut before the answer: the request itself answers 201 with the lead", async () => {
    const lead = markedLead()
    forwarder.fault(lead.marker, { write: "cut" })
    const first = await post(server, lead)
    expect(first.status, JSON.stringify(first.json)).toBe(201)
    expect(first.json.replay).toBeUndefined()
    expect(first.elapsed).toBeLessThan(5_000)
    const leads = await leadsFor(lead.phone)
    expect(leads.map((row) => row.id)).toEqual([first.json.lead_id])
    const retry = await post(server, lead)
    expect(retry.status).toBe(201)
    expect(retry.json).toMatchObject({ lead_id: first.json.lead_id, replay: true })
    expect(keyLines(lines, lead.key).map((line) => [line.msg, line.outcome])).toEqual([
      ["idempotency key settled", "Committed"]
    ])
    expect(lines.join("\n")).not.toContain(lead.key)
  }, 30_000)

  it("never reached the server: 503, its retry creates at once, and the write delivered late rolls back", async () => {
    const lead = markedLead()
    forwarder.fault(lead.marker, { write: "hold" })
    const first = await post(server, lead)
    expect(first.status, JSON.stringify(first.json)).toBe(503)
    expect(first.json.error?.message).toContain("nothing was written")
    expect(first.elapsed).toBeLessThan(5_000)
    const retry = await post(server, lead)
    expect(retry.status, JSON.stringify(retry.json)).toBe(201)
    expect(retry.json.replay).toBeUndefined()
    expect(keyLines(lines, lead.key).map((line) => line.outcome)).toEqual(["Released"])
    // The first write reaches PostgreSQL now, after its key was released and taken by the retry: it
    // finds its reservation gone and rolls back (else it would enrich the lead: a note and an event more).
    await forwarder.deliverHeld()
    expect(await leadsFor(lead.phone)).toEqual([{ id: retry.json.lead_id, notes: 1, events: 1 }])
  }, 30_000)

  it("the write cancelled at its deadline while it holds its key: rolled back with its reservation, 503, and the retry creates", async () => {
    const lead = markedLead()
    // Another transaction holds the lead's phone (an uncommitted lead with the same match key), so the
    // write waits, its key reserved, until the service cancels it at its deadline.
    const holder = new pg.Client({ connectionString: url })
    await holder.connect()
    try {
      await holder.query("BEGIN")
      await holder.query(
        `INSERT INTO leads (organization_id, origin_id, nombre, telefono, phone_key, created_at, updated_at, livemode)
         VALUES ($1, $2, 'holder', $3, lead_match_key($4, true), now(), now(), true)`,
        [server.fixture.organizationId, server.fixture.originId, lead.phone, phoneMatchKey(lead.phone, "MX")]
      )
      const first = post(server, lead)
      await sleep(500)
      // The write holds its key while it waits: the same key meanwhile is in progress.
      const meanwhile = await post(server, lead)
      expect(meanwhile.status, JSON.stringify(meanwhile.json)).toBe(409)
      expect(meanwhile.json.error?.code).toBe("idempotency_in_progress")
      const answered = await first
      expect(answered.status, JSON.stringify(answered.json)).toBe(503)
      expect(answered.json.error?.message).toContain("nothing was written")
      expect(answered.elapsed).toBeLessThan(5_000)
      await holder.query("ROLLBACK")
    } finally {
      await holder.end()
    }
    const retry = await post(server, lead)
    expect(retry.status, JSON.stringify(retry.json)).toBe(201)
    expect(retry.json.replay).toBeUndefined()
    // Nothing to settle or release: the key's reservation rolled back with the write.
    expect(keyLines(lines, lead.key)).toEqual([])
    expect(await leadsFor(lead.phone)).toEqual([{ id: retry.json.lead_id, notes: 1, events: 1 }])
  }, 30_000)

  it("a refused request frees its key in its own transaction: a retry elsewhere answers at once, though this instance lost the database right after", async () => {
    const lead = markedLead()
    const letters = Array.from({ length: 3 }, () =>
      String.fromCharCode(65 + Math.floor(Math.random() * 26))
    ).join("")
    const marker = `${letters}-${String(Math.floor(Math.random() * 1e4)).padStart(4, "0")}`
    const refused = {
      ...lead,
      body: JSON.stringify({ ...JSON.parse(lead.body), propiedad: { codigo: marker } })
    }
    // The write's answer (no such property: 422, nothing written) gets through, then this instance
    // loses the database for 6 s: nothing is left for it to release.
    forwarder.fault(marker, { write: "answer" })
    const started = performance.now()
    const first = await post(server, refused)
    expect(first.status, JSON.stringify(first.json)).toBe(422)
    const retry = await postAs(other, server.fixture.key, refused)
    expect(retry.status, JSON.stringify(retry.json)).toBe(422)
    expect(keyLines(lines, lead.key)).toEqual([])
    // The next test starts after this instance's outage.
    await sleep(Math.max(0, 6_500 - (performance.now() - started)))
  }, 40_000)

  it("the database out of reach past the request's deadline: 500, the key kept by this instance while it cannot ask, then settled in the background; the write never arrived, so a retry elsewhere creates at once", async () => {
    const lead = markedLead()
    // The write (with its key's reservation) never reaches the server; 300 ms after it is sent this
    // instance loses every connection and cannot open one for 6 s, while the other instance reaches
    // the database.
    forwarder.fault(lead.marker, { write: "hold", outage: true })
    const started = performance.now()
    const first = await post(server, lead)
    expect(first.status, JSON.stringify(first.json)).toBe(500)
    expect(first.elapsed).toBeLessThan(5_000)
    // The retry reaches the other instance, with the same API key: nothing was reserved, so it creates.
    const retry = await postAs(other, server.fixture.key, lead)
    expect(retry.status, JSON.stringify(retry.json)).toBe(201)
    expect(retry.json.replay).toBeUndefined()
    // This instance asks again once it reaches the database (about 6.3 s after the request began).
    while (keyLines(lines, lead.key).length < 2 && performance.now() - started < 15_000) await sleep(250)
    expect(keyLines(lines, lead.key).map((line) => [line.msg, line.outcome])).toEqual([
      ["idempotency key kept: the write's outcome is not known yet", "Kept"],
      ["idempotency key settled", "Released"]
    ])
    const heldFor = keyLines(lines, lead.key).at(-1)?.held_ms
    expect(heldFor).toBeGreaterThan(6_000)
    expect(heldFor).toBeLessThan(9_000)
    // The held write reaches PostgreSQL now: its key is the retry's, completed, so it writes nothing.
    await forwarder.deliverHeld()
    expect(await leadsFor(lead.phone)).toEqual([{ id: retry.json.lead_id, notes: 1, events: 1 }])
    process.stdout.write(
      `[faults] lost answer, database out of reach for 6 s: first answer ${first.status} in ${Math.round(first.elapsed)} ms, ` +
        `retry on the other instance ${retry.status} at once, key settled by the first after ${String(heldFor)} ms\n`
    )
  }, 40_000)
})
