import { normalisedLead } from "../../Api/LeadBody.ts"
import type { LeadRequest } from "../../Api/LeadRequest.ts"
import type { LeadInput } from "../LeadInput.ts"

/** The request as stored (docs/contract.md#2-normalisation): the contract's own normalisation. */
export const leadInputOf = (request: LeadRequest): LeadInput => normalisedLead(request)
