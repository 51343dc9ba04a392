/**
 * Refunds beside charges, over HTTP on one running server, in one run:
 *
 * - spread: charges of 10.00 MVR over every mandate, then partial refunds (1.00 MVR) of distinct charges,
 *   `concurrency` in flight each; every refund names a charge of the charge run, in order, so none of
 *   them waits on another's lock (a charge takes 10 of them before it is refunded in full);
 * - sequence: one request at a time; charges on one mandate, then 1-laari refunds of one charge (each
 *   decided against what the previous one left).
 *
 * Each measure runs charges first, refunds next, with the same load generator and the same server, so
 * the ratios refund/charge compare like with like. Every refund must answer 201 (`Check.ts` fails a run
 * with a failed request).
 */
import { randomUUID } from "node:crypto"
import * as Load from "./Load.js"
import * as Workload from "./Workload.js"

const chargeAmount = 1000
const refundAmount = 100

interface Charged {
  readonly key: string
  readonly chargeId: string
}

/** Charges as `Workload.charge`, keeping each new charge's id for the refunds. */
const charging = (
  client: Load.Client,
  targets: ReadonlyArray<Workload.Target>,
  into: Array<Charged>,
  amount = chargeAmount
): Load.Shot =>
  Workload.charge(client, targets, {
    amount,
    created: (t, body) => into.push({ key: t.key, chargeId: JSON.parse(body).id })
  })

/** A partial refund of `amount` of the `i`th charge (round robin), with a new idempotency key. */
const refunding =
  (client: Load.Client, charges: ReadonlyArray<Charged>, amount: number): Load.Shot =>
  async (i) => {
    const c = charges[i % charges.length]!
    const res = await client.request(
      "POST",
      "/refunds",
      { authorization: `Bearer ${c.key}`, "idempotency-key": randomUUID() },
      { charge_id: c.chargeId, amount, reason: "requested_by_customer" }
    )
    return { ok: res.status === 201, status: res.status }
  }

const ratios = (refund: Load.Run, charge: Load.Run) => ({
  perSecond: Number((refund.perSecond / charge.perSecond).toFixed(3)),
  p50: Number((refund.latencyMs.p50 / charge.latencyMs.p50).toFixed(3)),
  p99: Number((refund.latencyMs.p99 / charge.latencyMs.p99).toFixed(3))
})

export const run = async (options: {
  readonly base: string
  readonly targets: ReadonlyArray<Workload.Target>
  readonly seconds: number
  readonly concurrency: number
}) => {
  const { seconds, concurrency, targets } = options
  const client = Load.client(options.base)
  const pool: Array<Charged> = []
  // Warm up both endpoints (JIT, pools, caches); the warm-up's charges are refunded too.
  const warm = Math.min(5, seconds / 4)
  await Load.closedLoop({ concurrency, seconds: warm, shot: charging(client, targets, pool) })
  await Load.closedLoop({
    concurrency,
    seconds: warm / 2,
    shot: refunding(client, pool.slice(), refundAmount)
  })

  const fresh: Array<Charged> = []
  const charges = await Load.closedLoop({ concurrency, seconds, shot: charging(client, targets, fresh) })
  if (fresh.length === 0) throw new Error("no charge succeeded: nothing to refund")
  // Each charge takes `chargeAmount / refundAmount` partial refunds; the pool wraps around only if
  // refunds outrun charges that much, and 32 in flight never share a charge of thousands.
  const refunds = await Load.closedLoop({
    concurrency,
    seconds,
    shot: refunding(client, fresh, refundAmount)
  })

  // One at a time: charges on one mandate, then 1-laari refunds of one big charge.
  const one = targets.slice(0, 1)
  const chargesInSequence = await Load.closedLoop({
    concurrency: 1,
    seconds,
    shot: charging(client, one, [])
  })
  const big: Array<Charged> = []
  await charging(client, one, big, 500_000)(0)
  if (big.length === 0) throw new Error("the charge to refund in sequence failed")
  const refundsInSequence = await Load.closedLoop({
    concurrency: 1,
    seconds,
    shot: refunding(client, big, 1)
  })
  client.close()
  return {
    concurrency,
    spread: { charges, refunds, refundOverCharge: ratios(refunds, charges) },
    sequence: {
      charges: chargesInSequence,
      refunds: refundsInSequence,
      refundOverCharge: ratios(refundsInSequence, chargesInSequence)
    }
  }
}
