/**
 * `fsm-bulk completion bash|zsh|fish`: a completion script drawn from the same model as the help (Help.ts), so it
 * completes what the parser knows: the commands, each command's flags, the choices of a flag, the values of an
 * argument (resource names) and paths where a value names a file. zsh runs the bash function through its
 * `bashcompinit`.
 */
import { helpFlag } from "./Help.js"
import type { ArgInfo, CliModel, FlagInfo } from "./Model.js"

export const shells = ["bash", "zsh", "fish"] as const
export type Shell = (typeof shells)[number]

/** A word as the shell must read it back (`;` → `\;`). */
const shellWord = (word: string): string => (/^[\w.,/:@%+=-]+$/.test(word) ? word : word.replace(/[^\w]/g, "\\$&"))

const functionName = (model: CliModel) => `_${model.name.replace(/[^\w]/g, "_")}`

/** What the value of a flag completes to, as a line of the bash function (empty: nothing). */
const bashValue = (flag: FlagInfo): string =>
  flag.choices !== undefined
    ? `__words "${flag.choices.map(shellWord).join(" ")}"`
    : flag.path === "directory"
    ? "__paths -d"
    : flag.path !== undefined
    ? "__paths -f"
    : ""

const bashArg = (arg: ArgInfo, values: ReadonlyArray<string> | undefined): string =>
  values !== undefined || arg.choices !== undefined
    ? `__words "${(values ?? arg.choices ?? []).map(shellWord).join(" ")}"`
    : arg.path === "directory"
    ? "__paths -d"
    : "__paths -f"

const bash = (model: CliModel): string => {
  const fn = functionName(model)
  const names = model.commands.map((c) => c.name)
  const topLevel = names.filter((n) => !n.includes(" "))
  const perCommand = model.commands.flatMap((c) => {
    const flags = [...c.flags, helpFlag]
    const valued = flags.filter((f) => !f.boolean)
    const subs = c.subcommands.map((n) => n.split(" ").at(-1)!)
    const args = [
      ...(subs.length > 0 ? [`(( n == 0 )); then __words "${subs.join(" ")}"`] : []),
      ...c.args.map((a, i) => {
        const test = a.repeated ? `n >= ${i}` : `n == ${i}`
        return `(( ${test} )); then ${bashArg(a, c.values?.[a.name])}`
      })
    ].map((test, i) => `${i === 0 ? "if" : "elif"} ${test}`)
    return [
      `    "${c.name}")`,
      `      flags="${flags.flatMap((f) => [f.name, ...f.aliases]).join(" ")}"`,
      `      valued=" ${valued.map((f) => f.name).join(" ")} "`,
      `      case "$prev" in`,
      ...valued.map((f) => `        ${f.name}) ${bashValue(f) || ":"}; return 0 ;;`),
      `      esac`,
      `      __positional || return 0`,
      ...(args.length > 0 ? [`      ${args.join("\n      ")}\n      fi`] : []),
      `      ;;`
    ]
  })
  return [
    `# ${model.name} completion for bash. Load it with: source <(${model.name} completion bash)`,
    `${fn}() {`,
    `  [ -n "\${ZSH_VERSION-}" ] && setopt localoptions ksharrays shwordsplit`,
    `  local cur="\${COMP_WORDS[COMP_CWORD]}" prev="" cmd="" w="" at=0 i=1 n=0 flags="" valued=""`,
    `  (( COMP_CWORD > 0 )) && prev="\${COMP_WORDS[COMP_CWORD-1]}"`,
    `  COMPREPLY=()`,
    `  __words() { local w; for w in $1; do [[ "$w" == "$cur"* ]] && COMPREPLY+=("$w"); done; }`,
    `  __paths() { local IFS=$'\\n'; COMPREPLY=($(compgen "$1" -- "$cur")); compopt -o filenames 2>/dev/null; }`,
    `  __positional() {`,
    `    [[ "$cur" == -* ]] && { __words "$flags"; return 1; }`,
    `    i=$((at + 1)); n=0`,
    `    while (( i < COMP_CWORD )); do`,
    `      if [[ "\${COMP_WORDS[i]}" == -* ]]; then`,
    `        [[ "$valued" == *" \${COMP_WORDS[i]} "* ]] && i=$((i + 1))`,
    `      else n=$((n + 1)); fi`,
    `      i=$((i + 1))`,
    `    done`,
    `  }`,
    `  while (( i < COMP_CWORD )); do`,
    `    w="\${COMP_WORDS[i]}"`,
    `    case "\${cmd:+$cmd }$w" in`,
    `      ${[...names, "help"].map((n) => (n.includes(" ") ? `"${n}"` : n)).join("|")})`,
    `        cmd="\${cmd:+$cmd }$w"; at=$i ;;`,
    `      *) [[ -n "$cmd" && "$w" != -* ]] && break ;;`,
    `    esac`,
    `    i=$((i + 1))`,
    `  done`,
    `  case "$cmd" in`,
    `    "") __words "${[...topLevel, "help", "--help", "--version"].join(" ")}" ;;`,
    `    help) (( COMP_CWORD == at + 1 )) && __words "${topLevel.join(" ")}" ;;`,
    ...perCommand,
    `  esac`,
    `  return 0`,
    `}`,
    `complete -F ${fn} ${model.name}`,
    ``
  ].join("\n").replaceAll("__words", `${fn}_words`).replaceAll("__paths", `${fn}_paths`).replaceAll(
    "__positional",
    `${fn}_positional`
  )
}

const zsh = (model: CliModel): string =>
  [
    `# ${model.name} completion for zsh. Load it with: source <(${model.name} completion zsh) (after compinit)`,
    `autoload -U +X bashcompinit && bashcompinit`,
    bash(model).split("\n").slice(1).join("\n")
  ].join("\n")

/** `'text'` for fish. */
const fishQuote = (text: string): string => `'${text.replace(/\\/g, "\\\\").replace(/'/g, "\\'")}'`

/** The first clause of a description, short enough for a completion menu. */
const short = (text: string): string => {
  const clause = text.split(/; |: /)[0]!.trim()
  return clause.length <= 60 ? clause : `${clause.slice(0, 59)}…`
}

const fish = (model: CliModel): string => {
  const c = `complete -c ${model.name}`
  const names = model.commands.map((m) => m.name).filter((n) => !n.includes(" "))
  const lines = [
    `# ${model.name} completion for fish. Load it with: ${model.name} completion fish | source`,
    `${c} -f`,
    `${c} -n __fish_use_subcommand -l help -s h -d ${fishQuote(helpFlag.description)}`,
    ...model.commands.filter((cmd) => names.includes(cmd.name)).map((cmd) =>
      `${c} -n __fish_use_subcommand -a ${cmd.name} -d ${fishQuote(short(cmd.description))}`
    ),
    `${c} -n __fish_use_subcommand -a help -d ${fishQuote("Show help for a command")}`,
    `${c} -n ${fishQuote("__fish_seen_subcommand_from help")} -a ${fishQuote(names.join(" "))}`
  ]
  for (const cmd of model.commands) {
    // A nested command (`fleet init`): every word of its name has been typed.
    const when = `-n ${fishQuote(cmd.name.split(" ").map((w) => `__fish_seen_subcommand_from ${w}`).join("; and "))}`
    if (cmd.subcommands.length > 0) {
      lines.push(`${c} ${when} -a ${fishQuote(cmd.subcommands.map((n) => n.split(" ").at(-1)).join(" "))}`)
    }
    for (const f of [...cmd.flags, helpFlag]) {
      const short1 = f.aliases.filter((a) => /^-\w$/.test(a)).map((a) => ` -s ${a.slice(1)}`).join("")
      const value = f.boolean
        ? ""
        : f.choices !== undefined
        ? ` -x -a ${fishQuote(f.choices.join(" "))}`
        : f.path !== undefined
        ? " -r -F"
        : " -x"
      lines.push(`${c} ${when} -l ${f.name.slice(2)}${short1}${value} -d ${fishQuote(short(f.description))}`)
    }
    for (const a of cmd.args) {
      const values = cmd.values?.[a.name] ?? a.choices
      lines.push(values !== undefined ? `${c} ${when} -a ${fishQuote(values.join(" "))}` : `${c} ${when} -F`)
    }
  }
  return `${lines.join("\n")}\n`
}

/** The completion script of `shell`. */
export const completionScript = (model: CliModel, shell: Shell): string =>
  shell === "bash" ? bash(model) : shell === "zsh" ? zsh(model) : fish(model)
