/**
 * Memory adapters of the QR repositories: codes (with their rendered images) and the payments made through
 * them, refusing what the SQL schema's constraints refuse.
 */
import { Ids, Money, type QrCode, Store } from "@laari/core"
import { Effect, HashMap, Option } from "effect"
import type { MemoryDbService, Tables } from "./MemoryDb.js"
import {
  belongsTo,
  byLookup,
  insertRow,
  matching,
  newestFirst,
  ownRow,
  referenceTaken,
  tenantPage
} from "./MemoryRows.js"

/**
 * What the SQL schema's CHECK constraints refuse (a defect there, so a defect here): a dynamic code has an
 * amount of at least 100 laari and an expiry, a static one neither; only an inactive code has its
 * `deactivatedAt`.
 */
const qrCodeProblem = (c: QrCode.QrCode): string | undefined => {
  if (c.type === "DYNAMIC" ? c.amount === null || c.amount < Money.MinAmount : c.amount !== null)
    return "amount does not fit its type"
  if ((c.type === "DYNAMIC") !== (c.expiresAt !== null)) return "expiresAt does not fit its type"
  if ((c.status === "INACTIVE") !== (c.deactivatedAt !== null)) return "deactivatedAt does not fit its status"
  return undefined
}

export const qrCodes = (db: MemoryDbService): Store.QrCodesStoreService => ({
  insert: (code) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.qrCodes, code.id)) return yield* Effect.dieMessage(`QR code ${code.id} exists`)
        const problem = qrCodeProblem(code)
        if (problem !== undefined) return yield* Effect.dieMessage(`QR code ${code.id}: ${problem}`)
        if (Option.getOrUndefined(HashMap.get(t.outlets, code.outletId))?.merchantId !== code.merchantId)
          return yield* Effect.dieMessage(`outlet ${code.outletId} is not merchant ${code.merchantId}'s`)
        if (referenceTaken(t.qrCodes, code))
          return yield* new Store.DuplicateReference({ reference: code.reference })
        // The scheme's key is global: across merchants and environments.
        if (Array.from(HashMap.values(t.qrCodes)).some((row) => row.value.qrid === code.qrid))
          return yield* Effect.dieMessage(`qrid ${code.qrid} exists`)
        yield* db.update((t) => insertRow(t, "qrCodes", code.id, code))
      })
    ),
  // Only what can change after creation, as in SQL: the rest is fixed by the printed payload.
  update: (code) =>
    db.withTransaction(
      Effect.gen(function* () {
        const row = Option.getOrUndefined(HashMap.get((yield* db.get).qrCodes, code.id))
        // Like an SQL UPDATE of a missing row (or of another tenant's): nothing happens.
        if (row === undefined || !belongsTo(row.value, code)) return
        const next: QrCode.QrCode = {
          ...row.value,
          status: code.status,
          deactivatedAt: code.deactivatedAt,
          title: code.title,
          description: code.description
        }
        const problem = qrCodeProblem(next)
        if (problem !== undefined) return yield* Effect.dieMessage(`QR code ${code.id}: ${problem}`)
        yield* db.update((t) => ({ ...t, qrCodes: HashMap.set(t.qrCodes, code.id, { ...row, value: next }) }))
      })
    ),
  find: (tenant, lookup) => Effect.map(db.get, (t) => byLookup(t.qrCodes, tenant, lookup)),
  lockByQrid: (environment, qrid) =>
    Effect.map(db.get, (t) => {
      for (const row of HashMap.values(t.qrCodes))
        if (row.value.qrid === qrid && row.value.environment === environment) return row.value
      return undefined
    }),
  list: (tenant, filter) =>
    Effect.map(db.get, (t) => tenantPage(t.qrCodes, tenant, filter, matching(filter, ["outletId", "type"]))),
  saveImage: (code, png) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (!HashMap.has(t.qrCodes, code.id)) return yield* Effect.dieMessage(`no QR code ${code.id}`)
        // A copy, as a database keeps one: the caller may reuse its buffer. A new image replaces the old.
        const image = { merchantId: code.merchantId, png: Uint8Array.from(png) }
        yield* db.update((t) => ({ ...t, qrImages: HashMap.set(t.qrImages, code.id, image) }))
      })
    ),
  image: (id) =>
    Effect.map(db.get, (t) => {
      if (!Ids.isUuid(id)) return undefined
      const image = Option.getOrUndefined(HashMap.get(t.qrImages, id.toLowerCase()))
      return image === undefined ? undefined : Uint8Array.from(image.png)
    })
})

/** What the SQL schema refuses for a payment (a defect there, so a defect here). */
const qrPaymentProblem = (t: Tables, p: QrCode.Payment): string | undefined => {
  const code = Option.getOrUndefined(HashMap.get(t.qrCodes, p.qrCodeId))?.value
  if (code === undefined) return `no QR code ${p.qrCodeId}`
  if (
    code.qrid !== p.qrid ||
    code.merchantId !== p.merchantId ||
    code.environment !== p.environment ||
    code.outletId !== p.outletId
  )
    return "qrid, merchant, environment and outlet must be its code's"
  if (!HashMap.has(t.customers, p.customerId)) return `no customer ${p.customerId}`
  if (p.amount < Money.MinAmount || p.fee < 0 || p.netAmount < 0 || p.fee + p.netAmount !== p.amount)
    return "amount, fee and netAmount do not add up"
  return undefined
}

export const qrPayments = (db: MemoryDbService): Store.QrPaymentsStoreService => ({
  insert: (payment) =>
    db.withTransaction(
      Effect.gen(function* () {
        const t = yield* db.get
        if (HashMap.has(t.qrPayments, payment.id))
          return yield* Effect.dieMessage(`QR payment ${payment.id} exists`)
        const problem = qrPaymentProblem(t, payment)
        if (problem !== undefined) return yield* Effect.dieMessage(`QR payment ${payment.id}: ${problem}`)
        yield* db.update((t) => insertRow(t, "qrPayments", payment.id, payment))
      })
    ),
  find: (tenant, id) => Effect.map(db.get, (t) => ownRow(t.qrPayments, tenant, id)),
  listByCode: (qrCodeId) =>
    Effect.map(db.get, (t) =>
      newestFirst(
        Array.from(HashMap.values(t.qrPayments)).filter(
          (row) => row.value.qrCodeId === qrCodeId.toLowerCase()
        )
      )
    )
})
