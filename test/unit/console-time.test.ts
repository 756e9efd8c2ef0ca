import { describe, expect, it } from "vitest"
import {
  dayInZone,
  formatDate,
  formatShort,
  fromZonedLocal,
  setLocale,
  setTimeZone,
  toZonedLocal
} from "../../src/Console/web/i18n.ts"
import { midnightInZone } from "../../src/Domain/Locale.ts"

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

  it("follows Tijuana's clocks across the daylight-saving changes it shares with the US", () => {
    setTimeZone("America/Tijuana")
    // 8 March 2026: 02:00 PST becomes 03:00 PDT; the half hour between does not exist.
    expect(fromZonedLocal("2026-03-08T01:30")).toBe("2026-03-08T09:30:00.000Z")
    expect(fromZonedLocal("2026-03-08T02:30")).toBe("2026-03-08T10:30:00.000Z")
    expect(fromZonedLocal("2026-03-08T03:30")).toBe("2026-03-08T10:30:00.000Z")
    expect(toZonedLocal("2026-03-08T09:59:00.000Z")).toBe("2026-03-08T01:59")
    expect(toZonedLocal("2026-03-08T10:00:00.000Z")).toBe("2026-03-08T03:00")
    // 1 November 2026: 02:00 PDT becomes 01:00 PST; 01:30 happens twice, the field means the first.
    expect(fromZonedLocal("2026-11-01T01:30")).toBe("2026-11-01T08:30:00.000Z")
    expect(toZonedLocal("2026-11-01T08:30:00.000Z")).toBe("2026-11-01T01:30")
    expect(toZonedLocal("2026-11-01T09:30:00.000Z")).toBe("2026-11-01T01:30")
    expect(fromZonedLocal("2026-11-01T02:30")).toBe("2026-11-01T10:30:00.000Z")
    expect(dayInZone(Date.parse("2026-11-01T07:59:00Z"))).toBe("2026-11-01")
    expect(dayInZone(Date.parse("2026-11-02T07:59:00Z"))).toBe("2026-11-01")
    expect(dayInZone(Date.parse("2026-11-02T08:00:00Z"))).toBe("2026-11-02")
  })

  it("keeps Mexico City on UTC-6 all year (no daylight saving since 2022)", () => {
    setTimeZone("America/Mexico_City")
    // The first Sunday of April and the last of October were its change days until 2022.
    expect(fromZonedLocal("2026-04-05T02:30")).toBe("2026-04-05T08:30:00.000Z")
    expect(fromZonedLocal("2026-07-01T09:00")).toBe("2026-07-01T15:00:00.000Z")
    expect(fromZonedLocal("2026-10-25T01:30")).toBe("2026-10-25T07:30:00.000Z")
    expect(toZonedLocal("2026-07-01T15:00:00.000Z")).toBe("2026-07-01T09:00")
    // Before 2022 it still changed: the platform's zone data knows the history.
    expect(fromZonedLocal("2021-07-01T09:00")).toBe("2021-07-01T14:00:00.000Z")
  })

  it("starts a day at the zone's real midnight: 23 and 25 hour days in Tijuana, 24 in Mexico City", () => {
    const hours = (zone: string, instant: string) => {
      const now = Date.parse(instant)
      const start = midnightInZone(now, zone)
      const next = midnightInZone(now + 24 * 3_600_000, zone)
      return [start.toISOString(), (next.getTime() - start.getTime()) / 3_600_000]
    }
    expect(hours("America/Tijuana", "2026-03-08T20:00:00Z")).toEqual(["2026-03-08T08:00:00.000Z", 23])
    expect(hours("America/Tijuana", "2026-11-01T20:00:00Z")).toEqual(["2026-11-01T07:00:00.000Z", 25])
    expect(hours("America/Mexico_City", "2026-04-05T20:00:00Z")).toEqual(["2026-04-05T06:00:00.000Z", 24])
    // 29 days before 20 November, in Tijuana: across the change, still at local midnight.
    expect(midnightInZone(Date.parse("2026-11-20T20:00:00Z"), "America/Tijuana", 29).toISOString()).toBe(
      "2026-10-22T07:00:00.000Z"
    )
  })

  it("falls back to Mexico City for a zone the browser does not know", () => {
    setTimeZone("Mars/Olympus_Mons")
    expect(dayInZone(Date.parse("2026-11-26T00:03:00Z"))).toBe("2026-11-25")
  })

  it("writes a date one way with or without its year, in Spanish and in English", () => {
    setTimeZone("America/Mexico_City")
    const thisYear = new Date().getUTCFullYear()
    const inThisYear = `${thisYear}-03-05T18:00:00.000Z`
    const lastYear = `${thisYear - 1}-03-05T18:00:00.000Z`
    setLocale("es-MX")
    // Not "05-mar" beside "05 mar 2025": ICU's Spanish pattern without a year puts a dash.
    expect(formatDate(inThisYear)).toBe("5 mar")
    expect(formatDate(lastYear)).toBe(`5 mar ${thisYear - 1}`)
    expect(formatShort(inThisYear)).toBe("5 mar, 12:00:00")
    expect(formatShort(lastYear)).toBe(`5 mar ${thisYear - 1}, 12:00:00`)
    setLocale("en")
    expect(formatDate(inThisYear)).toBe("Mar 5")
    expect(formatDate(lastYear)).toBe(`Mar 5, ${thisYear - 1}`)
  })
})
