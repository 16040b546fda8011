/**
 * Cell values as spreadsheet users really write them, decoded through the schemas the validator builds from the
 * resource table: pt-BR numbers, CPFs/CNPJs with punctuation, dates in three orders, sim/não, enum labels,
 * lists and JSON cells — and the message each wrong value gets.
 */
import { assert, describe, expect, it } from "@effect/vitest"
import { Effect, Either, ParseResult, Schema } from "effect"
import type { ResourceName } from "../../src/Resources.js"
import { resource } from "../../src/Resources.js"
import type { Formats } from "../../src/validate/Validate.js"
import { cellSchema, makeValidator, planColumns } from "../../src/validate/Validate.js"
import { options } from "./support.js"

const iso: Formats = { dateFormat: "yyyy-mm-dd", decimal: "." }
const br: Formats = { dateFormat: "dd/mm/yyyy", decimal: "," }
const us: Formats = { dateFormat: "mm/dd/yyyy", decimal: "." }

const fieldOf = (r: ResourceName, name: string) => {
  const field = resource(r).fields.find((x) => x.name === name)
  if (field === undefined) throw new Error(`${r} has no field ${name}`)
  return field
}

/** The decoded value, or the message a user would read. */
const decode = (r: ResourceName, name: string, text: string, formats: Formats = iso, id = false): unknown => {
  const result = Schema.decodeUnknownEither(cellSchema(fieldOf(r, name), formats, id))(text)
  return Either.isRight(result)
    ? result.right
    : `error: ${ParseResult.ArrayFormatter.formatErrorSync(result.left)[0]!.message}`
}

describe("numbers", () => {
  it("reads pt-BR decimal commas with dot thousands", () => {
    expect(decode("products", "unitaryValue", "1.234,56", br)).toBe(1234.56)
    expect(decode("products", "unitaryValue", "49,90", br)).toBe(49.9)
    expect(decode("products", "unitaryValue", "-0,5", br)).toBe(-0.5)
    expect(decode("products", "unitaryValue", "1.000.000", br)).toBe(1000000)
    expect(decode("products", "unitaryValue", "12", br)).toBe(12)
  })

  it("reads decimal points with comma thousands", () => {
    expect(decode("products", "unitaryValue", "1,234.56", iso)).toBe(1234.56)
    expect(decode("products", "unitaryValue", "49.90", iso)).toBe(49.9)
    expect(decode("products", "unitaryValue", ".5", iso)).toBe(0.5)
  })

  it("refuses a number written with the other decimal mark, naming the file's mark", () => {
    expect(decode("products", "unitaryValue", "49.90", br)).toBe(
      `error: "49.90" is not written with this file's decimal comma (e.g. 1.234,56)`
    )
    expect(decode("products", "unitaryValue", "1,5", iso)).toBe(
      `error: "1,5" is not written with this file's decimal point (e.g. 1,234.56)`
    )
    expect(decode("products", "unitaryValue", "R$ 10,00", br)).toBe(`error: "R$ 10,00" is not a number`)
    expect(decode("products", "unitaryValue", "1.23.4", br)).toBe(`error: "1.23.4" is not a number`)
  })

  it("checks latitude and longitude ranges", () => {
    expect(decode("customers", "latitude", "-23,5614", br)).toBe(-23.5614)
    expect(decode("customers", "latitude", "-91", br)).toBe(`error: "-91" is out of range (-90 to 90)`)
    expect(decode("customers", "longitude", "-180", iso)).toBe(-180)
    expect(decode("customers", "longitude", "180.5", iso)).toBe(`error: "180.5" is out of range (-180 to 180)`)
  })
})

describe("integers and ids", () => {
  it("reads whole numbers within the field's range", () => {
    expect(decode("users", "gpsFrequency", "120")).toBe(120)
    expect(decode("users", "gpsFrequency", "30")).toBe(
      `error: "30" is not one of 60 (1 minute), 120 (2 minutes), 180 (3 minutes), 240 (4 minutes), 300 (5 minutes)`
    )
    expect(decode("users", "gpsFrequency", "150")).toBe(
      `error: "150" is not one of 60 (1 minute), 120 (2 minutes), 180 (3 minutes), 240 (4 minutes), 300 (5 minutes)`
    )
    expect(decode("customers", "maximumVisitTime", "1.5")).toBe(
      `error: "1.5" is not a whole number (write digits only, without separators)`
    )
    expect(decode("customers", "maximumVisitTime", "sessenta")).toBe(`error: "sessenta" is not a whole number`)
  })

  it("wants ids to be positive whole numbers", () => {
    expect(decode("customers", "id", "42", iso, true)).toBe(42)
    expect(decode("customers", "id", "0", iso, true)).toBe(
      `error: "0" is not a valid id (ids are whole numbers from 1 up)`
    )
    expect(decode("customers", "id", "-3", iso, true)).toBe(
      `error: "-3" is not a valid id (ids are whole numbers from 1 up)`
    )
    expect(decode("customers", "id", "99999999999999999999", iso, true)).toBe(
      `error: "99999999999999999999" is too large`
    )
  })

  it("reads GUID ids", () => {
    expect(decode("services", "id", "3F2504E0-4F89-11D3-9A0C-0305E82C3301", iso, true)).toBe(
      "3F2504E0-4F89-11D3-9A0C-0305E82C3301"
    )
    expect(decode("services", "id", "{3f2504e0-4f89-11d3-9a0c-0305e82c3301}", iso, true)).toBe(
      "3f2504e0-4f89-11d3-9a0c-0305e82c3301"
    )
    expect(decode("services", "id", "42", iso, true)).toBe(
      `error: "42" is not a GUID (e.g. 3f2504e0-4f89-11d3-9a0c-0305e82c3301)`
    )
  })
})

describe("booleans", () => {
  it("accepts the words Brazilian and English spreadsheets use, in any case", () => {
    for (const yes of ["true", "TRUE", "Sim", "yes", "S", "y", "1", "x", "X", "Verdadeiro"]) {
      expect(decode("customers", "active", yes)).toBe(true)
    }
    for (const no of ["false", "Não", "NAO", "nao", "no", "N", "n", "0", "falso"]) {
      expect(decode("customers", "active", no)).toBe(false)
    }
    // "não" typed on a Mac arrives decomposed: n, a, combining tilde, o
    expect(decode("customers", "active", "na\u0303o")).toBe(false)
  })

  it("lists the accepted words for anything else", () => {
    expect(decode("customers", "active", "talvez")).toBe(
      `error: "talvez" is not a yes/no value (use true/false, sim/não, yes/no, s/n, y/n, 1/0, x, verdadeiro/falso)`
    )
    expect(decode("customers", "active", "ok")).toMatch(/^error: "ok" is not a yes\/no value/)
  })
})

describe("dates and times", () => {
  it("sends yyyy-MM-ddTHH:mm:ss, date-only as midnight", () => {
    expect(decode("tasks", "taskDate", "2026-12-01")).toBe("2026-12-01T00:00:00")
    expect(decode("tasks", "taskDate", "2026-12-01T09:30")).toBe("2026-12-01T09:30:00")
    expect(decode("tasks", "taskDate", "2026-12-01 09:30:15")).toBe("2026-12-01T09:30:15")
    // Fractions are dropped; a zone is refused rather than dropped (the API takes local time without a zone, so a
    // dropped `Z` shifted the moment by 3 h), with the same moment in Brasília time to write instead. The XLSX
    // reader's dates carry no zone (Excel's have none).
    expect(decode("tasks", "taskDate", "2026-12-01T09:30:00.250")).toBe("2026-12-01T09:30:00")
    expect(decode("tasks", "taskDate", "2026-12-01T09:30:00.000Z")).toBe(
      `error: "2026-12-01T09:30:00.000Z" carries a time zone (Z), but the API takes local time without a zone, so it would be read as local time, hours off: write the local time without the zone (in Brasília time: 2026-12-01T06:30:00)`
    )
  })

  it("reads year-last dates in the file's day/month order, and year-first ones in any", () => {
    expect(decode("tasks", "taskDate", "03/04/2026", br)).toBe("2026-04-03T00:00:00")
    expect(decode("tasks", "taskDate", "3/4/2026 8:05", br)).toBe("2026-04-03T08:05:00")
    expect(decode("tasks", "taskDate", "25.12.2026", br)).toBe("2026-12-25T00:00:00")
    expect(decode("tasks", "taskDate", "03/04/2026", us)).toBe("2026-03-04T00:00:00")
    expect(decode("tasks", "taskDate", "2026-04-03", br)).toBe("2026-04-03T00:00:00")
  })

  it("refuses dates that do not exist", () => {
    expect(decode("tasks", "taskDate", "31/02/2026", br)).toBe(`error: "31/02/2026" is not a real date`)
    expect(decode("tasks", "taskDate", "29/02/2026", br)).toBe(`error: "29/02/2026" is not a real date`)
    expect(decode("tasks", "taskDate", "29/02/2028", br)).toBe("2028-02-29T00:00:00")
    expect(decode("tasks", "taskDate", "2026-13-01")).toBe(`error: "2026-13-01" is not a real date`)
    expect(decode("tasks", "taskDate", "2026-12-01 25:00")).toBe(`error: "2026-12-01 25:00" is not a real time of day`)
  })

  it("explains what is wrong with other date text", () => {
    expect(decode("tasks", "taskDate", "03/04/2026", iso)).toMatch(
      /^error: "03\/04\/2026" is not a yyyy-mm-dd date \(for day-first .* pass --date-format dd\/mm\/yyyy/
    )
    expect(decode("tasks", "taskDate", "03/04/26", br)).toBe(
      `error: "03/04/26" has a 2-digit year: write the year with 4 digits`
    )
    expect(decode("tasks", "taskDate", "46000", br)).toBe(
      `error: "46000" is not a date (it looks like an Excel date number: format the column as a date)`
    )
    expect(decode("tasks", "taskDate", "amanhã", br)).toBe(
      `error: "amanhã" is not a date (write 25/12/2026 or 25/12/2026 09:30)`
    )
  })

  it("reads times as HH:mm:ss", () => {
    expect(decode("users", "startWorkHour", "8:00")).toBe("08:00:00")
    expect(decode("users", "startWorkHour", "08:00:30")).toBe("08:00:30")
    // A time-only XLSX cell arrives on Excel's day zero.
    expect(decode("users", "startWorkHour", "1899-12-30T07:45:00.000Z")).toBe("07:45:00")
    expect(decode("users", "startWorkHour", "24:00")).toBe(`error: "24:00" is not a real time of day`)
    expect(decode("users", "startWorkHour", "8h")).toBe(
      `error: "8h" is not a time (write HH:mm or HH:mm:ss, e.g. 08:00)`
    )
  })
})

describe("CPF and CNPJ", () => {
  it("accepts punctuation and sends the digits", () => {
    expect(decode("customers", "cpfCnpj", "529.982.247-25")).toBe("52998224725")
    expect(decode("customers", "cpfCnpj", "111 444 777 35")).toBe("11144477735")
    expect(decode("customers", "cpfCnpj", "11.222.333/0001-81")).toBe("11222333000181")
    expect(decode("customers", "cpfCnpj", "11222333000181")).toBe("11222333000181")
  })

  it("accepts the alphanumeric CNPJ", () => {
    expect(decode("customers", "cpfCnpj", "12.ABC.345/01DE-35")).toBe("12ABC34501DE35")
    expect(decode("customers", "cpfCnpj", "12.abc.345/01de-35")).toBe("12ABC34501DE35")
    expect(decode("customers", "cpfCnpj", "12.ABC.345/01DE-36")).toBe(
      `error: "12.ABC.345/01DE-36" has wrong check digits`
    )
  })

  it("verifies the check digits", () => {
    expect(decode("customers", "cpfCnpj", "123.456.789-00")).toBe(`error: "123.456.789-00" has wrong check digits`)
    expect(decode("customers", "cpfCnpj", "123.456.789-09")).toBe("12345678909")
    expect(decode("customers", "cpfCnpj", "11.222.333/0001-82")).toBe(
      `error: "11.222.333/0001-82" has wrong check digits`
    )
  })

  it("refuses repeated digits and wrong lengths, hinting at a dropped leading zero", () => {
    expect(decode("customers", "cpfCnpj", "111.111.111-11")).toBe(
      `error: "111.111.111-11" is not a valid CPF (all digits are the same)`
    )
    expect(decode("customers", "cpfCnpj", "00.000.000/0000-00")).toBe(
      `error: "00.000.000/0000-00" is not a valid CNPJ (all digits are the same)`
    )
    expect(decode("customers", "cpfCnpj", "1234567890")).toBe(
      `error: "1234567890" has 10 digits: a CPF has 11 and a CNPJ 14 (did a spreadsheet drop a leading zero? format the column as text)`
    )
    expect(decode("customers", "cpfCnpj", "12345")).toBe(`error: "12345" has 5 digits: a CPF has 11 and a CNPJ 14`)
    expect(decode("customers", "cpfCnpj", "CPF 529")).toBe(`error: "CPF 529" is not a CPF or CNPJ`)
  })
})

describe("enumerations", () => {
  it("takes the number or the label, case- and accent-insensitively", () => {
    expect(decode("tasks", "priority", "3")).toBe(3)
    expect(decode("tasks", "priority", "high")).toBe(3)
    expect(decode("tasks", "priority", "High")).toBe(3)
    expect(decode("webhooks", "action", "Inclusão")).toBe(1)
    expect(decode("users", "userType", "Team Manager")).toBe(2)
    expect(decode("tasks", "priority", "3 (high)")).toBe(3)
    expect(decode("tasks", "priority", "2 - medium")).toBe(2)
  })

  it("lists the allowed values", () => {
    expect(decode("tasks", "priority", "urgent")).toBe(`error: "urgent" is not one of 1 (low), 2 (medium), 3 (high)`)
    expect(decode("tasks", "priority", "4")).toBe(`error: "4" is not one of 1 (low), 2 (medium), 3 (high)`)
    expect(decode("tasks", "priority", "3 (low)")).toBe(`error: "3 (low)" is not one of 1 (low), 2 (medium), 3 (high)`)
  })
})

describe("strings, e-mails, lists and JSON", () => {
  it("checks e-mail addresses, one per list item", () => {
    expect(decode("users", "email", "ana.souza@example.com.br")).toBe("ana.souza@example.com.br")
    expect(decode("users", "email", "ana.souza@")).toBe(`error: "ana.souza@" is not an e-mail address`)
    expect(decode("customers", "email", "a@x.com.br | b@y.com")).toEqual(["a@x.com.br", "b@y.com"])
    expect(decode("customers", "email", "a@x.com.br; b@y.com")).toBe(
      `error: "a@x.com.br; b@y.com" is not an e-mail address (separate list items with |)`
    )
  })

  it("splits list cells on |, trimming items and dropping empty ones", () => {
    expect(decode("users", "workDaysOfWeek", "2|3|4|5|6")).toEqual([2, 3, 4, 5, 6])
    expect(decode("users", "workDaysOfWeek", " 2 | 3 ||")).toEqual([2, 3])
    expect(decode("users", "workDaysOfWeek", "2|8")).toBe(`error: "8" is out of range (1 to 7)`)
    expect(decode("users", "workDaysOfWeek", "2,3,4")).toBe(
      `error: "2,3,4" is not a whole number (write digits only, without separators) (separate list items with |)`
    )
    expect(decode("customers", "phoneNumber", "+55 11 3333-4444|+55 11 99999-0000")).toEqual([
      "+55 11 3333-4444",
      "+55 11 99999-0000"
    ])
  })

  it("limits string length", () => {
    expect(decode("tasks", "orientation", "x".repeat(5000))).toHaveLength(5000)
    expect(decode("tasks", "orientation", "x".repeat(5001))).toBe(
      "error: has 5001 characters; at most 5000 are allowed"
    )
  })

  it("reads JSON cells: a list field takes a JSON array (one object is a list of one)", () => {
    const contacts =
      "[{\"name\":\"Carlos Lima\",\"jobPosition\":\"Gerente\",\"email\":\"carlos@paoquente.com.br\",\"phone\":\"+55 11 99999-0000\"}]"
    expect(decode("customers", "contacts", contacts)).toEqual(JSON.parse(contacts))
    expect(decode("customers", "contacts", "{\"name\":\"Carlos\"}")).toEqual([{ name: "Carlos" }])
    expect(decode("customers", "contacts", "Carlos Lima")).toMatch(
      /^error: "Carlos Lima" is not valid JSON: write a JSON list such as \[\{"name":"…",/
    )
    expect(decode("customers", "contacts", "[{\"name\":\"A\"}, \"B\"]")).toMatch(
      /^error: item 2 of the list is not a JSON object/
    )
    expect(decode("customers", "contacts", "42")).toMatch(/^error: "42" is not a JSON list such as/)
  })

  it("encodes values back to cell text", () => {
    const schema = cellSchema(fieldOf("users", "workDaysOfWeek"), br, false)
    expect(Schema.encodeSync(schema)([2, 3, 4])).toBe("2|3|4")
  })
})

describe("schemas and the validator", () => {
  it.effect("the validator decodes each cell exactly as the column's schema does", () =>
    Effect.gen(function*() {
      const cases: ReadonlyArray<readonly [string, string]> = [
        ["cpfCnpj", "529.982.247-25"],
        ["cpfCnpj", "529.982.247-26"],
        ["email", "a@b.com.br | c@d.com"],
        ["email", "a@"],
        ["latitude", "-23,5"],
        ["latitude", "-95"],
        ["active", "Sim"],
        ["active", "talvez"],
        ["unitMaximumTime", "hours"],
        ["unitMaximumTime", "dias"],
        ["contacts", "{\"name\":\"Carlos\"}"],
        ["contacts", "Carlos"]
      ]
      const opts = options({ mode: "update" })
      for (const [column, text] of cases) {
        const plan = yield* planColumns(resource("customers"), "c.csv", ["externalId", column], opts)
        const result = yield* makeValidator(plan, br, opts).validate({ row: 2, cells: ["CLI-1", text] })
        const seen = result._tag === "Valid"
          ? result.payload[column]
          : result._tag === "Invalid"
          ? `error: ${result.errors[0]!.message}`
          : result.reason
        assert.deepStrictEqual(seen, decode("customers", column, text, br), `${column} ${text}`)
      }
    }))
})
