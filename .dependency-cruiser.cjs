// The map of the code (docs/development.md, "The map"), checked: `npm run lint:layers` (part of `npm run check`).
// Each row of `layers` may import only from the rows before it and from itself; a command module (a file named
// `Command*.ts` or `*Handlers.ts` in any folder: the command side of its folder) sits on the top row with src/cli/, so nothing below
// imports the command line; and no file imports itself back through others.
const layers = [
  ["src/Resources\\.ts", "src/Messages\\.ts", "src/FieldDocs\\.ts"],
  ["src/Errors\\.ts", "src/Status\\.ts"],
  ["src/Identity\\.ts"],
  ["src/Units\\.ts", "src/Days\\.ts", "src/Loopback\\.ts", "src/Words\\.ts", "src/Aliases\\.ts"],
  ["src/Signals\\.ts", "src/Leftovers\\.ts", "src/Version\\.ts"],
  ["src/Secrets\\.ts", "src/Shell\\.ts"],
  ["src/sandbox/"],
  ["src/files/"],
  ["src/evidence/"],
  ["src/client/"],
  ["src/console/"],
  ["src/report/"],
  ["src/validate/"],
  ["src/mapping/"],
  ["src/export/"],
  ["src/import/"],
  ["src/undo/"],
  ["src/plan/"],
  ["src/onboard/"],
  ["src/template/"],
  ["src/fleet/"],
  ["src/docs/"],
  ["src/cli/", "src/Cli\\.ts", "src/bin\\.ts", "src/HeapAtStart\\.ts"]
]
const commandModule = "^src/[^/]+/(Command[^/]*|\\w*Handlers)\\.ts$"
const either = (paths) => `^(${paths.join("|")})`
const placed = either([...layers.flat(), commandModule.slice(1)])

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      severity: "error",
      comment: "A file that imports itself back through others: put what both need in a module of its own",
      from: { path: "^src/", pathNot: "Handlers\\.ts$" },
      // a command's tree loads its handlers by import() when it runs (src/cli/Lazy.ts): not a cycle at load time
      to: { circular: true, dependencyTypesNot: ["dynamic-import"] }
    },
    // A module in no row: one that imports, one that is imported, one that does neither.
    ...[
      { from: { path: "^src/", pathNot: placed }, to: {} },
      { from: {}, to: { path: "^src/", pathNot: placed } },
      { from: { orphan: true, path: "^src/", pathNot: placed }, to: {} }
    ].map((rule) => ({
      name: "unplaced",
      severity: "error",
      comment: "Every module of src/ has a row in the map (.dependency-cruiser.cjs and docs/development.md)",
      ...rule
    })),
    ...layers.slice(0, -1).map((row, i) => ({
      name: `layer-${i}`,
      severity: "error",
      comment: `${row.join(", ").replaceAll("\\", "")} import only from the rows before them in the map, never the ` +
        "command line or a command module",
      from: { path: either(row), pathNot: commandModule },
      to: { path: [either(layers.slice(i + 1).flat()), commandModule] }
    }))
  ],
  options: {
    doNotFollow: { path: "node_modules" },
    includeOnly: "^src/",
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.json" }
  }
}
