// The house lint: TypeScript's recommended rules, the formatting of Effect's own repositories (dprint through
// @effect/eslint-plugin), and the few habits the code keeps by choice. `npm run lint -- --fix` formats.
import effect from "@effect/eslint-plugin"
import tseslint from "typescript-eslint"

export default tseslint.config(
  { ignores: ["dist/**", "node_modules/**", "runs/**", "test/bench/data/**", "templates/**"] },
  ...tseslint.configs.recommended,
  {
    files: ["**/*.ts", "**/*.mjs", "**/*.js", "**/*.cjs"],
    plugins: { "@effect": effect },
    rules: {
      "@effect/dprint": ["error", {
        config: {
          indentWidth: 2,
          lineWidth: 120,
          semiColons: "asi",
          quoteStyle: "alwaysDouble",
          trailingCommas: "never",
          operatorPosition: "maintain",
          "arrowFunction.useParentheses": "force"
        }
      }],
      "object-shorthand": "error",
      "@typescript-eslint/array-type": ["error", { default: "generic", readonly: "generic" }],
      "@typescript-eslint/consistent-type-imports": ["error", { fixStyle: "inline-type-imports" }],
      "@typescript-eslint/no-unused-vars": ["error", {
        argsIgnorePattern: "^_",
        varsIgnorePattern: "^_",
        destructuredArrayIgnorePattern: "^_"
      }],
      "@typescript-eslint/no-explicit-any": "off",
      "@typescript-eslint/no-non-null-assertion": "off",
      "@typescript-eslint/no-namespace": "off",
      "@typescript-eslint/no-empty-object-type": "off"
    }
  },
  {
    // The CLI's own modules name each Effect module they use: the "effect" index loads every module of the
    // package, about 100 more than the CLI runs and 6–7 MB of every process's memory (docs/development.md). And an
    // index's namespaces (`import { Args } from "@effect/cli"`) keep the whole of each in the bundle: @effect/cli's
    // brought yaml, toml and ini (430 KB) into every command's start-up.
    files: ["src/**/*.ts"],
    rules: {
      "@effect/no-import-from-barrel-package": ["error", {
        packageNames: ["effect", "@effect/cli", "@effect/platform", "@effect/platform-node"]
      }]
    }
  },
  {
    files: ["**/*.mjs", "**/*.js", "**/*.cjs"],
    rules: { "@typescript-eslint/no-require-imports": "off", "@typescript-eslint/consistent-type-imports": "off" }
  }
)
