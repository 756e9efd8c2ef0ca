import { describe, expect, it } from "vitest"
import { isAcceptablePhone, phoneMatchKey, phoneTail } from "../../src/Domain/Phone.ts"

describe("phoneMatchKey", () => {
  it("gives every spelling of one Mexican mobile the same key", () => {
    const spellings = [
      "+52 55 1234 5678",
      "55-1234-5678",
      "(55) 1234 5678",
      "+52 1 55 1234 5678",
      "52 1 55 1234 5678",
      "044 55 1234 5678",
      "045 55 1234 5678",
      "01 55 1234 5678"
    ]
    for (const spelling of spellings) {
      expect(phoneMatchKey(spelling, "MX"), spelling).toBe("+525512345678")
    }
  })

  it("also folds a mobile 1 written without the country code, since libphonenumber-js reads it as +52 1", () => {
    expect(phoneMatchKey("1 55 1234 5678", "MX")).toBe("+525512345678")
  })

  it("keeps different numbers apart", () => {
    expect(phoneMatchKey("+52 55 1234 5679", "MX")).toBe("+525512345679")
    expect(phoneMatchKey("33 1234 5678", "MX")).toBe("+523312345678")
  })

  it("does not fold a 1 or 044 that is not followed by a ten-digit national number", () => {
    expect(phoneMatchKey("+52 1 55 1234 567", "MX")).not.toBe("+52551234567")
    expect(phoneMatchKey("044 55 1234 567", "MX")).not.toBe("+52551234567")
  })

  it("folds the Mexican prefixes only for Mexican numbers", () => {
    expect(phoneMatchKey("+1 044 555 1234 5678", "MX")).not.toBe("+15551234567")
    expect(phoneMatchKey("+1 415 555 2671", "MX")).toBe("+14155552671")
  })

  it("uses the organization's default country for national numbers", () => {
    expect(phoneMatchKey("(415) 555-2671", "US")).toBe("+14155552671")
    expect(phoneMatchKey("1 415 555 2671", "US")).toBe("+14155552671")
    expect(phoneMatchKey("+52 55 1234 5678", "US")).toBe("+525512345678")
  })

  it("accepts a lowercase default country", () => {
    expect(phoneMatchKey("55 1234 5678", "mx")).toBe("+525512345678")
  })

  it("falls back to the bare digits when the number cannot be parsed", () => {
    expect(phoneMatchKey("+999 123 456 7890", "MX")).toBe("9991234567890")
    expect(phoneMatchKey("55 1234 5678", "XX")).toBe("5512345678")
  })
})

describe("phoneTail", () => {
  it("returns the last four digits", () => {
    expect(phoneTail("+52 55 1234 5678")).toBe("5678")
    expect(phoneTail("(55) 1234-56.78")).toBe("5678")
  })
})

describe("isAcceptablePhone", () => {
  it("accepts ten or more digits with spaces, hyphens, dots and parentheses", () => {
    expect(isAcceptablePhone("5512345678")).toBe(true)
    expect(isAcceptablePhone("+52 (55) 1234-56.78")).toBe(true)
    expect(isAcceptablePhone("55.1234.5678")).toBe(true)
    expect(isAcceptablePhone("+1 415 555 2671")).toBe(true)
  })

  it("rejects fewer than ten digits", () => {
    expect(isAcceptablePhone("551234567")).toBe(false)
    expect(isAcceptablePhone("+55 123 456 7")).toBe(false)
  })

  it("rejects letters and other characters", () => {
    expect(isAcceptablePhone("55 1234 5678 ext 9")).toBe(false)
    expect(isAcceptablePhone("55/1234/5678")).toBe(false)
    expect(isAcceptablePhone("55\t1234\t5678")).toBe(false)
  })

  it("allows a + only once and only as the first character", () => {
    expect(isAcceptablePhone("++52 55 1234 5678")).toBe(false)
    expect(isAcceptablePhone("52 +55 1234 5678")).toBe(false)
    expect(isAcceptablePhone(" +52 55 1234 5678")).toBe(false)
  })

  it("rejects the empty string", () => {
    expect(isAcceptablePhone("")).toBe(false)
  })
})
