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
}
