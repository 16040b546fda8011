/**
 * Brazilian taxpayer numbers: CPF (people, 11 digits) and CNPJ (companies, 14 characters). Punctuation is
 * accepted and dropped; the check digits are verified; numbers made of one repeated digit, which pass the
 * check arithmetic but are never issued, are refused. CNPJs may carry letters in their first 12 characters
 * (the alphanumeric CNPJ of Receita Federal, issued from July 2026: each character counts as its code − 48).
 */
import { t } from "../Messages.js"
import { Invalid, quote } from "./Invalid.js"

const punctuation = /[\s./-]/g
const cpfShape = /^\d{11}$/
const cnpjShape = /^[0-9A-Z]{12}\d{2}$/
const digitsOnly = /^\d+$/
const repeated = /^(.)\1+$/

const cnpjWeights1 = [5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]
const cnpjWeights2 = [6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2]

const value = (s: string, i: number) => s.charCodeAt(i) - 48

const cpfValid = (d: string): boolean => {
  let sum = 0
  for (let i = 0; i < 9; i++) sum += value(d, i) * (10 - i)
  if (((sum * 10) % 11) % 10 !== value(d, 9)) return false
  sum = 0
  for (let i = 0; i < 10; i++) sum += value(d, i) * (11 - i)
  return ((sum * 10) % 11) % 10 === value(d, 10)
}

const cnpjDigit = (s: string, weights: ReadonlyArray<number>): number => {
  let sum = 0
  for (let i = 0; i < weights.length; i++) sum += value(s, i) * weights[i]!
  const r = sum % 11
  return r < 2 ? 0 : 11 - r
}

const cnpjValid = (s: string): boolean =>
  cnpjDigit(s, cnpjWeights1) === value(s, 12) && cnpjDigit(s, cnpjWeights2) === value(s, 13)

/** A CPF or CNPJ cell → its characters without punctuation (`11.222.333/0001-81` → `11222333000181`). */
export const parseCpfCnpj = (text: string): string | Invalid => {
  const compact = text.replace(punctuation, "").toUpperCase()
  if (cpfShape.test(compact)) {
    if (repeated.test(compact)) return new Invalid(t("cpf.sameDigits", { value: quote(text) }))
    return cpfValid(compact) ? compact : new Invalid(t("cpfCnpj.checkDigits", { value: quote(text) }))
  }
  if (cnpjShape.test(compact)) {
    if (repeated.test(compact)) return new Invalid(t("cnpj.sameDigits", { value: quote(text) }))
    return cnpjValid(compact) ? compact : new Invalid(t("cpfCnpj.checkDigits", { value: quote(text) }))
  }
  if (digitsOnly.test(compact)) {
    const dropped = compact.length === 10 || compact.length === 13
      ? t("cpfCnpj.leadingZero")
      : ""
    return new Invalid(t("cpfCnpj.digits", { value: quote(text), count: compact.length, hint: dropped }))
  }
  return new Invalid(t("cpfCnpj.notCpfCnpj", { value: quote(text) }))
}
