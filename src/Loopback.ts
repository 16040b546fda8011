/**
 * Which addresses only this machine reaches: the client accepts plain http:// only for them, and the sandbox
 * serves its published default account only on them.
 */

/** An address only this machine reaches (`localhost`, 127.0.0.0/8, ::1). */
export const isLoopback = (hostname: string): boolean =>
  hostname === "localhost" || hostname === "[::1]" || hostname === "::1" || /^127(\.\d{1,3}){3}$/.test(hostname)
