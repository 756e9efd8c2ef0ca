import { createIndexConcurrently, outsideTransaction } from "./outsideTransaction.ts"

/**
 * The leads of an agent: the foreign key `leads.assignee_id → agents` had no index on its
 * referencing side, so checking it when an agent row changes read every lead. Built `CONCURRENTLY`
 * (writes to `leads` go on during the build), so outside a transaction; run again after a crash, it
 * rebuilds an index the crash left invalid.
 */
export default outsideTransaction(
  createIndexConcurrently("leads_assignee_idx", "leads (assignee_id) WHERE assignee_id IS NOT NULL")
)
