/** The console's languages: Spanish (Mexico) and English (docs/contract.md#12-the-console-speaks-its-operators-language). */
export const languages = ["es", "en"] as const
export type Language = (typeof languages)[number]

const zoneName = /^(?:UTC|[A-Za-z][A-Za-z0-9_+-]*(?:\/[A-Za-z0-9_+-]+){1,2})$/i

/**
 * The zone's canonical IANA name when this runtime's Intl knows it (`america/mexico_city` →
 * `America/Mexico_City`); undefined for anything else, offsets such as `+06:00` included.
 */
export const canonicalTimeZone = (name: string): string | undefined => {
  if (name.length > 64 || !zoneName.test(name)) return undefined
  try {
    return new Intl.DateTimeFormat("en", { timeZone: name }).resolvedOptions().timeZone
  } catch {
    return undefined
  }
}
