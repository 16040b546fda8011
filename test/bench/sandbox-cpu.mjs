/**
 * CPU per request of the sandbox (issue 26): the sandbox from dist/ in a child process of its own on 127.0.0.1:0, and
 * this process sending N customer POSTs to it over loopback (global fetch, undici; `--concurrency` in flight, as an
 * import's window sends them), after one login. Each side measures its own CPU with `process.cpuUsage` around the
 * POSTs only (start-up and the login left out) and prints µs of CPU per request: the server (user, system) and the
 * client. The answers are checked (201, a fresh X-Request-Id) so a faster sandbox that answers wrong is caught.
 *
 *   node test/bench/sandbox-cpu.mjs [--n 2000] [--concurrency 6] [--dist DIR] [--json] [--cpu-prof DIR]
 *
 * `--dist` points at another build (an old commit's worktree's dist/) to compare; by default this tree's dist/.
 * `--cpu-prof DIR` runs the sandbox's process under `node --cpu-prof` (its .cpuprofile written to DIR).
 */
import { fork } from "node:child_process"
import * as Path from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const arg = (name, fallback) => {
  const i = process.argv.indexOf(`--${name}`)
  return i === -1 ? fallback : process.argv[i + 1]
}
const here = Path.dirname(fileURLToPath(import.meta.url))

if (process.argv[2] === "--serve") {
  // The child: the sandbox alone, its CPU measured between the parent's "start" and "stop".
  const dist = process.argv[3]
  const { Effect, Exit, Scope } = await import("effect")
  const { startSandbox } = await import(pathToFileURL(Path.join(dist, "sandbox", "Sandbox.js")).href)
  const scope = Effect.runSync(Scope.make())
  const sandbox = await Effect.runPromise(
    Scope.extend(startSandbox({ port: 0, rate: { limit: 1_000_000, windowMs: 60_000 } }), scope)
  )
  let before
  process.on("message", async (m) => {
    if (m === "start") {
      before = process.cpuUsage()
      process.send({ started: true })
    } else if (m === "stop") {
      const used = process.cpuUsage(before)
      const requests = (await Effect.runPromise(sandbox.control.requests)).length
      await Effect.runPromise(Scope.close(scope, Exit.void))
      process.send({ used, requests }, () => process.exit(0))
    }
  })
  process.send({ url: sandbox.url, apiKey: sandbox.accounts[0].apiKey, apiToken: sandbox.accounts[0].apiToken })
} else {
  const n = Number(arg("n", "2000"))
  const concurrency = Number(arg("concurrency", "6"))
  const dist = Path.resolve(arg("dist", Path.join(here, "..", "..", "dist")))
  const profile = arg("cpu-prof", undefined)
  const child = fork(fileURLToPath(import.meta.url), ["--serve", dist], {
    stdio: ["ignore", "inherit", "inherit", "ipc"],
    execArgv: profile === undefined ? [] : ["--cpu-prof", "--cpu-prof-dir", Path.resolve(profile)]
  })
  const next = () => new Promise((resolve) => child.once("message", resolve))
  const { url, apiKey, apiToken } = await next()
  const login = await fetch(`${url}/login`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ apiKey, apiToken })
  })
  const token = (await login.json()).result.accessToken
  const headers = { "content-type": "application/json", authorization: `Bearer ${token}` }
  const ids = new Set()
  const post = async (i) => {
    const res = await fetch(`${url}/customers`, {
      method: "POST",
      headers,
      body: JSON.stringify({ externalId: `B-${i}`, name: `Bench customer ${i}`, note: "n" })
    })
    const text = await res.text()
    const id = res.headers.get("x-request-id")
    if (res.status !== 201 || id === null || ids.has(id)) throw new Error(`POST ${i}: ${res.status} ${text}`)
    ids.add(id)
  }
  child.send("start")
  await next()
  const client = process.cpuUsage()
  const wall = performance.now()
  let sent = 0
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (sent < n) await post(sent++)
  }))
  const wallMs = performance.now() - wall
  const clientUsed = process.cpuUsage(client)
  child.send("stop")
  const { used, requests } = await next()
  const per = (u) => Math.round((u.user + u.system) / n)
  const result = {
    n,
    concurrency,
    dist,
    requests,
    serverUsPerRequest: per(used),
    serverUserUs: Math.round(used.user / n),
    serverSystemUs: Math.round(used.system / n),
    clientUsPerRequest: per(clientUsed),
    wallMs: Math.round(wallMs)
  }
  if (process.argv.includes("--json")) console.log(JSON.stringify(result))
  else {
    console.log(
      `${n} POSTs /customers, ${concurrency} in flight, ${result.wallMs} ms: server ${result.serverUsPerRequest} µs CPU a request ` +
        `(user ${result.serverUserUs}, system ${result.serverSystemUs}), client ${result.clientUsPerRequest} µs`
    )
  }
}
