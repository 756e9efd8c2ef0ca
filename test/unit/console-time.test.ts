import { describe, expect, it } from "vitest"
import { dayInZone, fromZonedLocal, setTimeZone, toZonedLocal } from "../../src/Console/web/i18n.ts"

/**
 * The console shows times and days in the organization's zone; the overview counts leads by its
 * local days. Between 00:00 and 06:00 UTC, Mexico City is still on the day before.
 */
describe("the console's clock, in the organization's zone", () => {
  it("names the local day, not UTC's, just after midnight UTC", () => {
    setTimeZone("America/Mexico_City")
    expect(dayInZone(Date.parse("2026-11-26T00:03:00Z"))).toBe("2026-11-25")
    expect(dayInZone(Date.parse("2026-11-26T06:00:00Z"))).toBe("2026-11-26")
    setTimeZone("UTC")
    expect(dayInZone(Date.parse("2026-11-26T00:03:00Z"))).toBe("2026-11-26")
    setTimeZone("Asia/Tokyo")
    expect(dayInZone(Date.parse("2026-11-25T15:00:00Z"))).toBe("2026-11-26")
  })

  it("reads a datetime-local field as the zone's wall clock, and writes it back", () => {
    setTimeZone("America/Tijuana") // UTC-8 in November, UTC-7 in summer
    expect(fromZonedLocal("2026-11-25T18:30")).toBe("2026-11-26T02:30:00.000Z")
    expect(fromZonedLocal("2026-07-01T09:00")).toBe("2026-07-01T16:00:00.000Z")
    expect(toZonedLocal("2026-11-26T02:30:00.000Z")).toBe("2026-11-25T18:30")
    expect(fromZonedLocal("not a time")).toBe("")
    expect(toZonedLocal("not a time")).toBe("")
  })

  it("falls back to Mexico City for a zone the browser does not know", () => {
    setTimeZone("Mars/Olympus_Mons")
    expect(dayInZone(Date.parse("2026-11-26T00:03:00Z"))).toBe("2026-11-25")
  })
})
