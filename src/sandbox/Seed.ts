/**
 * What every sandbox account starts with: the task types (the API can only read them, so the sandbox seeds them
 * and prints them at startup) and the ticket request types.
 */
import type { Account } from "./Store.js"

export const taskTypes: ReadonlyArray<{ readonly id: number; readonly description: string }> = [
  { id: 1, description: "Manutenção preventiva" },
  { id: 2, description: "Manutenção corretiva" },
  { id: 3, description: "Instalação" },
  { id: 4, description: "Visita técnica" },
  { id: 5, description: "Vistoria" },
  { id: 6, description: "Entrega de equipamento" }
]

export const ticketRequestTypes: ReadonlyArray<{ readonly id: number; readonly description: string }> = [
  { id: 1, description: "Manutenção corretiva" },
  { id: 2, description: "Dúvida" },
  { id: 3, description: "Reclamação" },
  { id: 4, description: "Solicitação de orçamento" }
]

/** Adds the seeded rows an account does not have yet (a restored account keeps its own). */
export const seedAccount = (account: Account): void => {
  for (const row of taskTypes) if (account.table("task-types").get(row.id) === undefined) account.insert("task-types", { ...row })
  for (const row of ticketRequestTypes) {
    if (account.table("ticket-request-types").get(row.id) === undefined) account.insert("ticket-request-types", { ...row })
  }
}
