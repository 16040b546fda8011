/**
 * The two pieces of @effect/platform-node's HTTP client the CLI's commands use: the client over node:http and the
 * keep-alive agent it runs on (src/cli/Connection.ts). Named here, rather than the whole `NodeHttpClient` module
 * loaded by a dynamic `import()`, so that the bundle takes only them: the whole module is also its undici client,
 * and loading undici (a chunk of about 1 MB) was about a tenth of a small import's CPU, for nothing it used. The
 * package declares itself free of side effects, so esbuild leaves that half out (docs/benchmarks.md, "Fixed cost
 * of a small run"; test/cli/startup-cli.test.ts fails if an import of a small file loads undici again).
 */
export { layerWithoutAgent, makeAgentLayer } from "@effect/platform-node/NodeHttpClient"
