import type { LoadPlan } from "./load.ts"
import { leadBody, phoneOf } from "./load.ts"

const post = async (url: string, key: string, body: string, headers: Record<string, string> = {}) => {
  const response = await fetch(`${url}/v1/leads`, {
    method: "POST",
    headers: { "content-type": "application/json", authorization: `Bearer ${key}`, ...headers },
    body
  })
  const text = await response.text()
  if (response.status !== 201 && response.status !== 200) {
    throw new Error(`setup request answered ${response.status}: ${text}`)
  }
}

const inBatches = async <A>(
  items: ReadonlyArray<A>,
  size: number,
  run: (item: A, index: number) => Promise<void>
) => {
  for (let start = 0; start < items.length; start += size) {
    await Promise.all(items.slice(start, start + size).map((item, offset) => run(item, start + offset)))
  }
}

/**
 * Leads that already exist (for enrich and dry-run) and one answered idempotent request per
 * connection (for replay), created through the service itself.
 */
export const seed = async (
  url: string,
  keys: ReadonlyArray<string>,
  propertyCodigo: string,
  connections: number
) => {
  const existingPhones = Array.from({ length: 2_000 }, (_, index) => phoneOf(5_510_000_000 + index))
  await inBatches(existingPhones, 32, (telefono, index) =>
    post(url, keys[index % keys.length]!, leadBody(0, telefono, propertyCodigo))
  )
  const replays: LoadPlan["replays"] = Array.from({ length: connections }, (_, index) => ({
    key: keys[index % keys.length]!,
    idempotencyKey: `replay-${index}`,
    body: leadBody(index, phoneOf(5_520_000_000 + index), propertyCodigo)
  }))
  await inBatches(replays, 32, (replay) =>
    post(url, replay.key, replay.body, { "idempotency-key": replay.idempotencyKey })
  )
  return { existingPhones, replays }
}

/** The service's GET /v1 body without its per-request id: what the reference servers answer. */
export const indexTemplate = async (url: string) => {
  const { request_id: _, ...rest } = (await (await fetch(`${url}/v1`)).json()) as Record<string, unknown>
  return JSON.stringify(rest)
}
