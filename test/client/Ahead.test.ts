/** The order in which a walk's queued requests start (`pickNext`, a pure decision over what waits). */
import { assert, describe, it } from "vitest"
import { pickNext } from "../../src/client/Ahead.js"

const page = (start: number, n: number) => ({ order: [start, n], probe: false })
const probe = (start: number) => ({ order: [start, 1], probe: true })

describe("the next request of a walk", () => {
  it("starts nothing when every slot is taken or nothing waits", () => {
    assert.isUndefined(pickNext([page(1, 2)], { running: 8, held: 0, limit: 8 }))
    assert.isUndefined(pickNext([], { running: 0, held: 0, limit: 8 }))
  })

  it("starts the earliest page in reading order while enough pages wait to fill the slots", () => {
    const waiting = [probe(200), ...Array.from({ length: 9 }, (_, i) => page(100, 10 - i))]
    assert.deepStrictEqual(waiting[pickNext(waiting, { running: 0, held: 0, limit: 8 })!], page(100, 2))
  })

  it("starts the earliest probe first when fewer pages wait than there are slots", () => {
    const waiting = [page(100, 5), page(100, 6), probe(300), probe(200)]
    assert.deepStrictEqual(waiting[pickNext(waiting, { running: 7, held: 3, limit: 8 })!], probe(200))
  })

  it("with the answers held for the reader at their bound, starts only the earliest job", () => {
    const waiting = [probe(300), page(100, 6)]
    assert.deepStrictEqual(waiting[pickNext(waiting, { running: 0, held: 32, limit: 8 })!], page(100, 6))
  })
})
