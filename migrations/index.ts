import createDomain from "./0001_create_domain.ts"

export const migrations = {
  "0001_create_domain": createDomain
}
