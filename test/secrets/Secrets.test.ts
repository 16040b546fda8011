/** The redactor's rules, one by one: known secrets in every form, the shapes of secrets, control characters. */
import { assert, describe, it } from "@effect/vitest"
import { printable } from "../../src/console/Terminal.js"
import { redactKnown, redactServerText, registerSecret, registerUrlPassword } from "../../src/Secrets.js"

describe("Secrets", () => {
  it("a registered secret is taken out of any text, also URL-encoded or JSON-escaped", () => {
    registerSecret("k3y/with \"odd\" chars")
    registerSecret("abc") // too short to be a secret: never replaced
    assert.strictEqual(redactKnown("x k3y/with \"odd\" chars y"), "x [redacted] y")
    assert.strictEqual(redactKnown("x=k3y%2Fwith%20%22odd%22%20chars"), "x=[redacted]")
    assert.strictEqual(redactKnown(JSON.stringify({ v: "k3y/with \"odd\" chars" })), "{\"v\":\"[redacted]\"}")
    assert.strictEqual(redactKnown("abc abc"), "abc abc")
  })

  it("a server's text loses every shape of a secret, and its control characters", () => {
    assert.strictEqual(redactServerText("Authorization: Bearer abc.def-ghi"), "Authorization: Bearer [redacted]")
    assert.strictEqual(
      redactServerText("echo {\"apiKey\":\"K-1\",\"apiToken\":\"T-2\"}"),
      "echo {\"apiKey\":\"[redacted]\",\"apiToken\":\"[redacted]\"}"
    )
    assert.strictEqual(
      redactServerText("token eyJhbGciOi.eyJzdWIiOjF9.c2lnbmF0dXJl expired"),
      "token [redacted] expired"
    )
    assert.strictEqual(redactServerText("apiToken=abc&x=1"), "apiToken=[redacted]&x=1")
    assert.strictEqual(
      redactServerText("cannot reach postgres://fleet:s3cr3t@db:5432/fsm"),
      "cannot reach postgres://fleet:[redacted]@db:5432/fsm"
    )
    assert.strictEqual(redactServerText("Nome inválido\u001b[2J\u0007\u009b"), "Nome inválido[2J")
    // ordinary words stay
    assert.strictEqual(redactServerText("The field name is required."), "The field name is required.")
  })

  it("a database URL's password is known once the URL is used", () => {
    registerUrlPassword("redis://:p%40ss-w0rd@127.0.0.1:6379")
    assert.strictEqual(redactKnown("AUTH p@ss-w0rd failed"), "AUTH [redacted] failed")
  })

  it("printed text shows foreign control characters, keeping our own colours only when colour is on", () => {
    assert.strictEqual(printable("a\u001b]0;owned\u0007b\tc\n", false), "a\\x1b]0;owned\\x07b\tc\n")
    assert.strictEqual(printable("\u001b[1mok\u001b[0m", true), "\u001b[1mok\u001b[0m")
    assert.strictEqual(printable("\u001b[1mok", false), "\\x1b[1mok")
  })
})
