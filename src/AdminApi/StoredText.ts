/** What PostgreSQL's `text` cannot hold as sent: U+0000, and a lone surrogate (UTF-8 has no form for it). */
export const unstorableReason = (value: string): string | undefined =>
  value.includes("\u0000")
    ? "Expected text without NUL (U+0000) characters"
    : value.isWellFormed()
      ? undefined
      : "Expected text without unpaired surrogates (not valid Unicode)"

export const isStorableText = (value: string) => unstorableReason(value) === undefined
