/** The faults a sandbox can be told to inject (`SandboxControl.setFaults`, the `--fail-rate` … flags). */
export interface Faults {
  /** Added before every response. */
  readonly latencyMs: number
  /** Probability of a random 500/502/503 (nothing applied). */
  readonly failRate: number
  /** Probability the connection is destroyed before anything is applied. */
  readonly resetRate: number
  /** Probability a write (POST/PUT/PATCH/DELETE) is applied and then the connection destroyed with no response. */
  readonly dropAfterWriteRate: number
  /** Epoch ms; until then every request gets the rate-limit 403. */
  readonly rateLimitStormUntil: number
  /**
   * Added to a list answer per record it holds (at least one): pages slow in proportion to their size, as the live
   * service's (~125 ms a task: 12.5 s for 100).
   */
  readonly pageLatencyPerRecordMs: number
  /**
   * Requests in flight on one token above which calls fail in bursts (0: never): each then answers 404 (a list:
   * "No records found", whether or not it has records) or 500 with probability `burstRate`, nothing applied.
   * The live service did so at 16 at once and not at 8.
   */
  readonly burstAbove: number
  readonly burstRate: number
  /** Probability that a filtered list with no matching record answers 500 instead of its empty answer. */
  readonly emptyListFailRate: number
}
