import { HttpApi } from "effect/http-api"
import { Api } from "./Api.ts"

/** Every route of the contract with the methods it accepts, from the HttpApi itself. */
export const routeTable: ReadonlyMap<string, ReadonlyArray<string>> = (() => {
  const table = new Map<string, Array<string>>()
  HttpApi.reflect(Api, {
    onGroup: () => {},
    onEndpoint: ({ endpoint }) => {
      const methods = table.get(endpoint.path) ?? []
      methods.push(endpoint.method)
      if (endpoint.method === "GET") methods.push("HEAD")
      table.set(endpoint.path, methods)
    }
  })
  return table
})()

export const endpointList = [...routeTable].flatMap(([path, methods]) =>
  methods.filter((method) => method !== "HEAD").map((method) => `${method} ${path}`)
)
