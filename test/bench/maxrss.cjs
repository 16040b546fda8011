/**
 * Preloaded (`node --require`) into a measured child process: on exit it writes the process's peak resident
 * set size, from the kernel's own account (`process.resourceUsage().maxRSS`, KiB), to FSM_BENCH_RSS_FILE.
 */
"use strict"
const { writeFileSync } = require("node:fs")

const target = process.env.FSM_BENCH_RSS_FILE
if (target) {
  process.on("exit", () => {
    writeFileSync(target, JSON.stringify({ maxRssKiB: process.resourceUsage().maxRSS }))
  })
}
