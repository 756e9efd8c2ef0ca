import { Schema } from "effect"

/** An operator referred to something that does not exist (or not in that organization). */
export class UnknownEntity extends Schema.TaggedError<UnknownEntity>()("UnknownEntity", {
  entity: Schema.String,
  id: Schema.String
}) {
  override get message() {
    return `unknown ${this.entity} ${this.id}`
  }
}

/** An operator asked for something the data forbids (duplicate label, bad reference). */
export class Rejected extends Schema.TaggedError<Rejected>()("Rejected", {
  reason: Schema.String
}) {
  override get message() {
    return this.reason
  }
}
