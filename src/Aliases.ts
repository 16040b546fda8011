/**
 * Portuguese names of resources and columns, accepted beside the table's English names whatever `--lang` is:
 * `import clientes clientes.csv` is `import customers`, and a header `Nome;E-mail;Telefone` is
 * `name;email;phoneNumber`. Compared without accents, case, or the difference between spaces, `_` and `-`.
 * Every alias names one resource or one field, and no alias is another column's name in a resource that has it
 * (test/messages/aliases.test.ts), so an alias can never change what an English header means.
 */
import { type Column, type ResourceName, resourceNames } from "./Resources.js"

/** The Portuguese name of each resource; `null` where Portuguese speakers use the English word (`webhooks`). */
export const portugueseResourceNames: { readonly [K in ResourceName]: string | null } = {
  "users": "usuarios",
  "customers": "clientes",
  "customers-complete": "clientes-completo",
  "customer-groups": "grupos-de-clientes",
  "products": "produtos",
  "product-categories": "categorias-de-produtos",
  "services": "servicos",
  "equipments": "equipamentos",
  "equipment-categories": "categorias-de-equipamentos",
  "keywords": "palavras-chave",
  "expense-types": "tipos-de-despesa",
  "segments": "segmentos",
  "teams": "equipes",
  "task-types": "tipos-de-tarefa",
  "tasks": "tarefas",
  "task-products": "produtos-da-tarefa",
  "task-services": "servicos-da-tarefa",
  "task-additional-costs": "custos-adicionais-da-tarefa",
  "questionnaire-answers": "respostas-de-questionario",
  "expenses": "despesas",
  "tickets": "chamados",
  "receivables": "recebiveis",
  "service-orders": "ordens-de-servico",
  "additional-costs": "custos-adicionais",
  "webhooks": null,
  "employee-product-stock": "estoque-do-funcionario",
  "customer-attachments": "anexos-de-clientes",
  "product-attachments": "anexos-de-produtos",
  "equipment-attachments": "anexos-de-equipamentos",
  "task-attachments": "anexos-de-tarefas",
  "expense-attachments": "anexos-de-despesas",
  "deleted-tasks": "tarefas-excluidas",
  "ticket-request-types": "tipos-de-solicitacao",
  "customer-group-clients": "clientes-dos-grupos",
  "team-users": "usuarios-das-equipes",
  "questionnaires": "questionarios",
  "gps-positions": "posicoes-gps",
  "satisfaction-surveys": "pesquisas-de-satisfacao",
  "quotations": "orcamentos"
}

/**
 * Portuguese headers of the columns a person fills most, by column name (the same name means the same thing in
 * every resource that has it). The alias is what a template written with `--lang pt-BR` could show and what a
 * Brazilian sheet already says; columns without one keep their English name in every language.
 */
export const portugueseColumnNames: Readonly<Record<string, string>> = {
  name: "Nome",
  description: "Descrição",
  externalId: "Código",
  externalCode: "Código externo",
  email: "E-mail",
  phoneNumber: "Telefone",
  smartPhoneNumber: "Celular",
  legalName: "Razão social",
  cpfCnpj: "CPF/CNPJ",
  address: "Endereço",
  adressComplement: "Complemento",
  active: "Ativo",
  note: "Observação",
  manager: "Responsável",
  password: "Senha",
  jobPosition: "Cargo",
  segmentDescription: "Segmento",
  groupsDescription: "Grupos",
  customerExternalId: "Código do cliente",
  taskExternalId: "Código da tarefa",
  productExternalId: "Código do produto",
  equipmentExternalId: "Código do equipamento",
  categoryExternalId: "Código da categoria",
  teamDescription: "Equipe",
  taskDate: "Data da tarefa",
  priority: "Prioridade",
  orientation: "Orientação",
  quantity: "Quantidade",
  value: "Valor",
  price: "Preço",
  unitaryValue: "Valor unitário",
  unitaryCost: "Custo unitário",
  title: "Título",
  dueDate: "Vencimento",
  warrantyStartDate: "Início da garantia",
  warrantyEndDate: "Fim da garantia",
  file: "Arquivo"
}

/** How names are compared: `Ordens de Serviço`, `ordens_de_servico` and `ORDENS-DE-SERVICO` are one name. */
export const foldName = (text: string): string =>
  text.normalize("NFD").replace(/[\u0300-\u036f]/g, "").toLowerCase().trim().replace(/[\s_/-]+/g, "-")

const byPortugueseName = new Map<string, ResourceName>(
  resourceNames.flatMap((name) => {
    const pt = portugueseResourceNames[name]
    return pt === null ? [] : [[foldName(pt), name] as const]
  })
)

/** The resource a name given on the command line means, in English or Portuguese; undefined when none. */
export const resourceNamed = (given: string): ResourceName | undefined => {
  const folded = foldName(given)
  const english = resourceNames.find((n) => n === folded)
  return english ?? byPortugueseName.get(folded)
}

/** Every name a resource answers to (for "did you mean" and help). */
export const namesOf = (name: ResourceName): ReadonlyArray<string> => {
  const pt = portugueseResourceNames[name]
  return pt === null ? [name] : [name, pt]
}

/** The column of `columns` whose Portuguese header `header` is, if any. */
export const columnByAlias = <C extends Column>(header: string, columns: ReadonlyArray<C>): C | undefined => {
  const folded = foldName(header)
  return columns.find((c) => {
    const alias = portugueseColumnNames[c.name]
    return alias !== undefined && foldName(alias) === folded
  })
}
