import { Effect } from "effect"

/** The one start line every listener logs, in one shape: `{"msg":"listening","listener":…,"url":…}`. */
export const logListening = (listener: string, url: string, details: Record<string, unknown> = {}) =>
  Effect.logInfo("listening").pipe(Effect.annotateLogs({ listener, url, ...details }))
