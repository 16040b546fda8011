/**
 * Files like the customers' own, for the mapping tests: valid CNPJs punctuated as typed, and a customer list as
 * Excel in Brazil saves it (Windows-1252, `;`, CRLF, a title row above the header, a "Total" footer).
 */
import { cp1252 } from "../import/support.js"

/** A valid CNPJ for `n` (its check digits computed), punctuated as customers type it. */
export const cnpj = (n: number): string => {
  const base = `${String(10_000_000 + n).slice(-8)}0001`.split("").map(Number)
  const digit = (ds: ReadonlyArray<number>) => {
    const weights = ds.length === 12 ? [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2] : [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
    const r = ds.reduce((s, d, i) => s + d * weights[i]!, 0) % 11
    return r < 2 ? 0 : 11 - r
  }
  const d1 = digit(base)
  const all = [...base, d1, digit([...base, d1])].join("")
  return `${all.slice(0, 2)}.${all.slice(2, 5)}.${all.slice(5, 8)}/${all.slice(8, 12)}-${all.slice(12)}`
}

/** A customer list: a title row, `header`, the rows, a "Total" footer; Windows-1252 bytes with `;` and CRLF. */
export const brazilianList = (title: string, header: string, rows: ReadonlyArray<string>): Uint8Array => {
  const width = header.split(";").length
  const empty = ";".repeat(width - 1)
  return cp1252(
    [`${title}${empty}`, header, ...rows, `Total de clientes: ${rows.length}${empty}`].join("\r\n") + "\r\n"
  )
}

/** The newcomer's file: Windows-1252, `;`, a title row, Portuguese headers, internal columns, a Total footer. */
export const messyCustomers = cp1252(
  [
    "Relação de clientes ativos - Janeiro/2026;;;;;;;;;;",
    "Código;Nome;CNPJ;Rua;Número;Bairro;Telefone;E-mail;Situação;Vendedor;Observações",
    "C-1;Padaria São João;11.222.333/0001-81;Rua Augusta;100;Consolação;(11) 3333-4444;contato@saojoao.com.br;Ativo;Ana;",
    "C-2;Açougue Boa Vista;;Av. Paulista;;Bela Vista;;;Bloqueado;Bruno;Inadimplente desde março",
    "C-3;Total Distribuidora;;;;;;;Ativo;Ana;",
    "Total de clientes: 3;;;;;;;;;;"
  ].join("\r\n") + "\r\n"
)

/** The profile of the newcomer's file (profile.test.ts): renames, an ignored column, a value map, a composition. */
export const messyProfile = {
  resource: "customers",
  columns: {
    "Código": "externalId",
    "Nome": "name",
    "CNPJ": "cpfCnpj",
    "Telefone": "phoneNumber",
    "E-mail": "email",
    "Situação": "active",
    "Vendedor": "ignore"
  },
  fields: {
    active: { values: { "Ativo": "true", "Bloqueado": "false" } },
    address: { compose: "{Rua}, {Número} - {Bairro}" },
    unitMaximumTime: { constant: "minutes" }
  }
}
