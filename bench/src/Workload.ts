/**
 * The charge workloads: merchants with mandates seeded over the API, then charges, each with
 * a new `Idempotency-Key`, spread over every mandate or all on one.
 */
import { randomUUID } from "node:crypto"
import type * as Load from "./Load.js"

export const OpsToken = "ops_bench"

export interface Target {
  readonly key: string
  readonly mandateId: string
}

/** `merchants` merchants, each with a funded sandbox payer and `mandates` mandates. */
export const seed = async (client: Load.Client, merchants: number, mandates: number) => {
  const targets: Array<Target> = []
  for (let m = 0; m < merchants; m++) {
    const merchant = await client.json("POST", "/ops/merchants", OpsToken, {
      name: `Bench ${m}`,
      outlets: [{ name: "Main" }]
    })
    const { key } = await client.json("POST", `/ops/merchants/${merchant.id}/keys`, OpsToken, {
      environment: "test"
    })
    await client.json("POST", "/test-helpers/payer", key, { balance: 1_000_000_000_000 })
    for (let i = 0; i < mandates; i++) {
      const mandate = await client.json("POST", "/mandates", key, {
        reference: `bench-${m}-${i}-${randomUUID().slice(0, 8)}`,
        title: "Bench",
        per_charge_cap: 500_000
      })
      targets.push({ key, mandateId: mandate.id })
    }
  }
  return targets
}

/**
 * One charge of `amount` (10.00 MVR) on the `i`th target (round robin), with a new idempotency key;
 * `created` sees each charge made (its target and the response's body).
 */
export const charge =
  (
    client: Load.Client,
    targets: ReadonlyArray<Target>,
    options: { readonly amount?: number; readonly created?: (target: Target, body: string) => void } = {}
  ): Load.Shot =>
  async (i) => {
    const t = targets[i % targets.length]!
    const res = await client.request(
      "POST",
      `/mandates/${t.mandateId}/charges`,
      { authorization: `Bearer ${t.key}`, "idempotency-key": randomUUID() },
      { amount: options.amount ?? 1000 }
    )
    if (res.status === 201) options.created?.(t, res.body)
    return { ok: res.status === 201, status: res.status }
  }
