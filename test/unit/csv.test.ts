import { describe, expect, it } from "vitest"
import { byteOrderMark, csvCell, csvLine, csvStart } from "../../src/Domain/Csv.ts"

describe("CSV a spreadsheet opens as written", () => {
  it("starts with the UTF-8 byte-order mark and the header, lines end in CRLF", () => {
    expect(csvStart(["id", "nombre"])).toBe("\uFEFFid,nombre\r\n")
    expect(new TextEncoder().encode(byteOrderMark)).toEqual(new Uint8Array([0xef, 0xbb, 0xbf]))
    expect(csvLine(["a", 1, true, null, undefined])).toBe("a,1,true,,\r\n")
  })

  it("quotes a field with a comma, a quote or a line break, and doubles its quotes", () => {
    expect(csvCell("Pérez, Ana")).toBe('"Pérez, Ana"')
    expect(csvCell('dijo "hola"')).toBe('"dijo ""hola"""')
    expect(csvCell("uno\ndos")).toBe('"uno\ndos"')
    expect(csvCell("uno\r\ndos")).toBe('"uno\r\ndos"')
    expect(csvCell("Ñandú José")).toBe("Ñandú José")
    expect(csvCell("")).toBe("")
  })

  it("keeps a cell that would run as a formula as text: an apostrophe before = + - @ tab CR", () => {
    expect(["=1+2", "+52 55 1234 5678", "-5", "@SUM(A1)", "\tx", "\rx"].map(csvCell)).toEqual([
      "'=1+2",
      "'+52 55 1234 5678",
      "'-5",
      "'@SUM(A1)",
      "'\tx",
      '"\'\rx"'
    ])
    expect(csvCell('=HYPERLINK("http://x","y")')).toBe('"\'=HYPERLINK(""http://x"",""y"")"')
    expect(csvCell("a=b")).toBe("a=b")
    expect(csvCell(-5)).toBe("-5")
  })
})
