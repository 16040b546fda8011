/**
 * What every sandbox account starts with: the task types (printed at startup, so tasks can name them before any
 * is created through the API), the ticket request types, and a few rows of the lists the API can only read
 * (questionnaires, GPS positions, satisfaction surveys, quotations), so that they can be listed and exported.
 */
import type { ResourceName } from "../Resources.js"
import { resource } from "../Resources.js"
import type { Account, Rec } from "./Store.js"
import { keyOf } from "./Store.js"

const seededOn = "2026-01-05T08:00:00"

const requirements = {
  fillReport: true,
  getSignature: false,
  fillRolledKilometer: false,
  emailTheTask: false,
  minimumNumberOfPhotos: 0,
  requiredQuestionnaires: []
}

const taskType = (id: number, description: string, standartTime: string): Rec => ({
  id,
  description,
  standartTime,
  toleranceTime: "00:15:00",
  standartQuestionnaireId: 0,
  sendSatisfactionSurvey: false,
  active: true,
  requirements,
  creatorId: 1,
  creationDate: seededOn
})

export const taskTypes: ReadonlyArray<{ readonly id: number; readonly description: string }> = [
  { id: 1, description: "Manutenção preventiva" },
  { id: 2, description: "Manutenção corretiva" },
  { id: 3, description: "Instalação" },
  { id: 4, description: "Visita técnica" },
  { id: 5, description: "Vistoria" },
  { id: 6, description: "Entrega de equipamento" }
]

const ticketRequestTypes: ReadonlyArray<{ readonly id: number; readonly description: string }> = [
  { id: 1, description: "Manutenção corretiva" },
  { id: 2, description: "Dúvida" },
  { id: 3, description: "Reclamação" },
  { id: 4, description: "Solicitação de orçamento" }
]

const question = (id: number, answerType: number, description: string) => ({
  id,
  answerType,
  description,
  subTitle: "",
  requiredAnswer: true,
  creationDate: seededOn
})

const readOnlyRows: ReadonlyArray<readonly [ResourceName, Rec]> = [
  [
    "questionnaires",
    {
      id: 1,
      description: "Checklist de manutenção preventiva",
      header: "Verifique cada item antes de encerrar a tarefa",
      footer: "",
      creationDate: seededOn,
      questions: [question(1, 1, "Filtros limpos?"), question(2, 2, "Temperatura de saída (°C)")]
    }
  ],
  ["questionnaires", {
    id: 2,
    description: "Vistoria de entrega",
    header: "",
    footer: "Assinatura do cliente",
    creationDate: seededOn,
    questions: [question(3, 1, "Equipamento sem avarias?")]
  }],
  ["gps-positions", {
    id: 1,
    userId: 1,
    positionDate: "2026-11-20T08:00:00",
    latitude: -23.5614,
    longitude: -46.6559,
    accuracy: 12,
    batteryLevel: 87,
    NetworkOperatorName: "VIVO"
  }],
  ["gps-positions", {
    id: 2,
    userId: 1,
    positionDate: "2026-11-20T12:30:00",
    latitude: -23.5489,
    longitude: -46.6388,
    accuracy: 8,
    batteryLevel: 64,
    NetworkOperatorName: "VIVO"
  }],
  ["gps-positions", {
    id: 3,
    userId: 2,
    positionDate: "2026-11-21T09:15:00",
    latitude: -22.9068,
    longitude: -43.1729,
    accuracy: 20,
    batteryLevel: 91,
    NetworkOperatorName: "CLARO"
  }],
  [
    "satisfaction-surveys",
    {
      id: 1,
      taskID: 1,
      questionDescription: "Como avalia o atendimento?",
      answerDescription: "Ótimo",
      answerDate: "2026-11-20T18:00:00",
      itemId: "1",
      email: "cliente@example.com.br",
      answersItemQuantity: 1,
      scoreSum: 5,
      totalResponse: 1,
      totalSubmitted: 1
    }
  ],
  [
    "quotations",
    {
      publicId: 1,
      customerId: 1,
      customerName: "Cliente de demonstração",
      taskID: 0,
      requesterUserId: 1,
      observations: "",
      registerDate: "2026-11-18T10:00:00",
      requestDate: "2026-11-18T10:00:00",
      descount: "0.00",
      products: [{ productId: 1, amout: 2, UnitaryValue: "49.90" }],
      aditionalCosts: [],
      summary: {
        totalProducts: 99.8,
        totalServices: 0,
        totalAdditionalCosts: 0,
        netTotalValue: 99.8,
        grossTotalValue: 99.8,
        discount: { type: "Monetario", value: 0 }
      },
      CurrentStage: {
        id: 1,
        description: "Em aberto",
        position: 1,
        changeStock: false,
        isCancelled: false,
        editAllowed: true
      }
    }
  ]
]

const seedRow = (account: Account, name: ResourceName, row: Rec): void => {
  if (account.table(name).get(keyOf(resource(name), row)) === undefined) account.insert(name, structuredClone(row))
}

/** Adds the seeded rows an account does not have yet (a restored account keeps its own). */
export const seedAccount = (account: Account): void => {
  for (const row of taskTypes) {
    // A restored account created before task types had their full record keeps what it has.
    if (account.table("task-types").get(row.id) === undefined) {
      account.insert("task-types", taskType(row.id, row.description, "01:00:00"))
    }
  }
  for (const row of ticketRequestTypes) seedRow(account, "ticket-request-types", { ...row })
  for (const [name, row] of readOnlyRows) seedRow(account, name, row)
}
