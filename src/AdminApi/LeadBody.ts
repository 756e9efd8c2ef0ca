/**
 * The public contract's own decoding of a lead's body, for the console's rescue form
 * (docs/contract.md#11-rejected-leads-are-kept-for-rescue): the page checks a corrected body with the
 * schema, parse options and first failing field `POST /v1/leads` answers with, before it sends it.
 */
export { decodeLeadBody, type LeadBodyDecoded } from "../Api/LeadBody.ts"
