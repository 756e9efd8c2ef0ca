import { describe, expect, it } from "vitest"
import { canonicalTimeZone } from "../../src/AdminApi/Locale.ts"
import { acceptedLanguage, consoleLanguage, defaultTimeZone, htmlLang } from "../../src/Domain/Locale.ts"

describe("the console's language (docs/contract.md#12-the-console-speaks-its-operators-language)", () => {
  it("takes the first es* or en* the browser prefers, by weight then order", () => {
    expect(acceptedLanguage("es-MX,es;q=0.9,en;q=0.8")).toBe("es")
    expect(acceptedLanguage("en-US,en;q=0.9,es;q=0.8")).toBe("en")
    expect(acceptedLanguage("fr-FR,fr;q=0.9,es-419;q=0.8,en;q=0.7")).toBe("es")
    expect(acceptedLanguage("de, EN-gb;q=0.5, es;q=0.7")).toBe("es")
    expect(acceptedLanguage("es;q=0, en")).toBe("en")
    expect(acceptedLanguage("fr, de")).toBeUndefined()
    expect(acceptedLanguage("*")).toBeUndefined()
    expect(acceptedLanguage("")).toBeUndefined()
    expect(acceptedLanguage(undefined)).toBeUndefined()
    expect(acceptedLanguage("estonian-ish, en")).toBe("en")
  })

  it("the operator's choice, else the browser's, else the organization's country's, else English", () => {
    expect(consoleLanguage({ saved: "en", acceptLanguage: "es-MX", country: "MX" })).toBe("en")
    expect(consoleLanguage({ saved: null, acceptLanguage: "en-US", country: "MX" })).toBe("en")
    expect(consoleLanguage({ saved: null, acceptLanguage: "fr", country: "MX" })).toBe("es")
    expect(consoleLanguage({ saved: null, acceptLanguage: undefined, country: "mx" })).toBe("es")
    expect(consoleLanguage({ saved: null, acceptLanguage: undefined, country: "US" })).toBe("en")
    expect(consoleLanguage({ saved: null, acceptLanguage: undefined, country: null })).toBe("en")
    expect(htmlLang("es")).toBe("es-MX")
    expect(htmlLang("en")).toBe("en")
  })
})

describe("the organization's time zone", () => {
  it("defaults to the country's (MX: America/Mexico_City), otherwise UTC", () => {
    expect(defaultTimeZone("MX")).toBe("America/Mexico_City")
    expect(defaultTimeZone("US")).toBe("UTC")
  })

  it("accepts IANA names Intl knows, canonically spelled; nothing else", () => {
    expect(canonicalTimeZone("America/Mexico_City")).toBe("America/Mexico_City")
    expect(canonicalTimeZone("america/mexico_city")).toBe("America/Mexico_City")
    expect(canonicalTimeZone("utc")).toBe("UTC")
    expect(canonicalTimeZone("America/Argentina/Buenos_Aires")).toMatch(
      /^America\/(Argentina\/)?Buenos_Aires$/
    )
    for (const bad of [
      "Mars/Olympus_Mons",
      "+06:00",
      "-0600",
      "GMT-6",
      "EST",
      "",
      "America/",
      "../etc/passwd"
    ]) {
      expect(canonicalTimeZone(bad), bad).toBeUndefined()
    }
  })
})
