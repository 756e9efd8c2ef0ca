import { Validator } from "@seriousme/openapi-schema-validator"
import { describe, expect, it } from "vitest"
import { adminErrorCatalog } from "../../src/AdminApi/AdminApi.ts"
import { adminOpenApiDocument } from "../../src/Console/Server/Docs.ts"
import { endpoints } from "./support.ts"

describe("the admin API's OpenAPI document", () => {
  const document = adminOpenApiDocument() as unknown as {
    openapi: string
    paths: Record<
      string,
      Record<string, { responses: Record<string, unknown>; security?: unknown; tags?: ReadonlyArray<string> }>
    >
    tags: ReadonlyArray<{ name: string; description?: string }>
    components: { securitySchemes?: Record<string, { type: string; in?: string; name?: string }> }
  }

  it("is valid OpenAPI 3.1", async () => {
    expect(document.openapi).toMatch(/^3\.1\.\d+$/)
    const validator = new Validator()
    const result = await validator.validate(structuredClone(document) as never)
    expect(result.errors).toBeUndefined()
    expect(result.valid).toBe(true)
  })

  it("lists every endpoint, the session cookie scheme, and each endpoint's error statuses", () => {
    for (const endpoint of endpoints) {
      const path = endpoint.path.replace(/:([a-z_]+)/g, "{$1}")
      const operation = document.paths[path]?.[endpoint.method.toLowerCase()]
      expect(operation, `${endpoint.method} ${path}`).toBeDefined()
    }
    expect(Object.values(document.components.securitySchemes ?? {})).toContainEqual(
      expect.objectContaining({ type: "apiKey", in: "cookie", name: "lead_intake_session" })
    )
    const origins = document.paths["/api/origins"]!.post!
    for (const status of ["201", "400", "401", "403", "404", "409", "503"]) {
      expect(Object.keys(origins.responses), status).toContain(status)
    }
    expect(origins.security).toBeDefined()
    expect(document.paths["/api/session"]!.post!.security ?? []).toEqual([])
    expect(Object.keys(document.paths["/api/session"]!.post!.responses)).toContain(
      String(adminErrorCatalog.rate_limited.status)
    )
  })

  it("tags each operation with its part of the console, every tag described", () => {
    const groups = [...new Set(endpoints.map((endpoint) => endpoint.group))]
    expect(document.tags.map((tag) => tag.name)).toEqual(groups)
    for (const tag of document.tags) expect(tag.description, tag.name).toEqual(expect.stringMatching(/\w/))
    for (const endpoint of endpoints) {
      const path = endpoint.path.replace(/:([a-z_]+)/g, "{$1}")
      expect(document.paths[path]?.[endpoint.method.toLowerCase()]?.tags, endpoint.name).toEqual([
        endpoint.group
      ])
    }
    expect(groups.length).toBeGreaterThan(3)
  })
})
