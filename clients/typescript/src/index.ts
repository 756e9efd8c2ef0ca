/**
 * The Effect client: `HttpApiClient` over the service's own contract, compiled into this package,
 * so payloads, headers, success bodies and every error are the contract's schemas.
 */
export * from "./contract/Client.ts"
