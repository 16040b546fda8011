/**
 * The time a sandbox served a run, from its own request log: the first request's arrival to the last answer handed
 * back (`answeredAt`), the CLI's start and exit excluded.
 */
export const servedMs = (log) => Math.max(...log.map((e) => e.answeredAt ?? e.at)) - log[0].at
