/**
 * The book: wallets, transfers and their double entries, and the protocol's rules over them. Every call
 * is one database transaction. A transfer locks the wallets it touches (`SELECT ... FOR UPDATE`, in id
 * order, so two transfers never wait on each other in a cycle) before it decides, so two payments from
 * one wallet are decided one after the other against the balance the first left.
 *
 * An id is decided once: the transfer's row is inserted before any money moves, with `ON CONFLICT DO
 * NOTHING`, so a repeat, a concurrent twin or a cancel that got there first wins and this call moves
 * nothing. A cancel inserts a tombstone the same way, so an id cancelled before it arrived never posts.
 */
import * as SqlClient from "@effect/sql/SqlClient"
import type { SqlError } from "@effect/sql/SqlError"
import { Connector, Wallet } from "@laari/core"
import { Context, Effect, Layer, Option } from "effect"
import { createHash } from "node:crypto"
import type { Faults } from "./Config.js"
import * as Time from "./Time.js"

export interface WalletRow {
  readonly id: string
  readonly phone: string
  readonly status: Connector.WalletStatus
  readonly limit: number | null
  readonly time_zone: string
  readonly opening_balance: number
  readonly balance: number
}

interface TransferRow {
  readonly id: string
  readonly status: "posted" | "refused" | "cancelled"
  readonly request_hash: string | null
  readonly environment: "test" | "live"
  readonly from_wallet: string
  readonly to_wallet: string
  readonly amount: number
  readonly fee_to: string | null
  readonly fee_amount: number | null
  readonly memo: string
  readonly kind: Connector.TransferKind
  readonly reason: Connector.RefusalReason | null
  readonly posted_at: Date | null
}

/** What `POST /transfers` answers. */
export type PostOutcome =
  | { readonly _tag: "Answer"; readonly status: 200 | 201 | 422; readonly body: Connector.TransferAnswer }
  | { readonly _tag: "Conflict" }
  | { readonly _tag: "UnknownWallet"; readonly wallet: string }

/** An operator's new wallet (the admin endpoint). */
export interface NewWallet {
  readonly id?: string | undefined
  readonly phone: string
  readonly status: Connector.WalletStatus
  readonly limit: number | null
  readonly time_zone: string
  readonly balance: number
}

/** PostgreSQL's int8 arrives as a string from node-postgres and as a number from PGlite. */
const int = (value: unknown): number => Number(value)
const intOrNull = (value: unknown): number | null => (value === null ? null : Number(value))

/** A row as the driver gives it: text and timestamps as they are, int8 columns to be read with `int`. */
type Row = Record<string, unknown>

const walletRow = (row: Row): WalletRow => ({
  ...(row as unknown as WalletRow),
  limit: intOrNull(row.limit),
  opening_balance: int(row.opening_balance),
  balance: int(row.balance)
})

const transferRow = (row: Row): TransferRow => ({
  ...(row as unknown as TransferRow),
  amount: int(row.amount),
  fee_amount: intOrNull(row.fee_amount)
})

/** The wallet as the protocol shows it: no balance, which is the core's own business. */
export const publicWallet = (w: WalletRow): Connector.Wallet => ({
  id: w.id,
  phone: w.phone,
  status: w.status,
  limit: w.limit,
  time_zone: w.time_zone
})

/**
 * The request's fingerprint, over every field in a fixed order: the same id with the same body is a
 * repeat, with any other body a conflict.
 */
export const requestHash = (r: Connector.TransferRequest): string =>
  createHash("sha256")
    .update(
      JSON.stringify([
        r.id,
        r.environment,
        r.from,
        r.to,
        r.amount,
        r.fee?.to ?? null,
        r.fee?.amount ?? null,
        r.memo,
        r.kind
      ])
    )
    .digest("hex")

/**
 * Why this transfer is refused, or `undefined`. A payment is decided by core's own rule, so this core and
 * laari's built-in ledger refuse in the same order (frozen, blocked, limit, balance). A reversal (a
 * refund, from the merchant back to the customer) is refused when the customer's wallet it credits is
 * frozen or blocked, as a provider's core refuses any credit to such a wallet, and then needs only the
 * merchant's balance.
 */
export const decide = (
  request: Connector.TransferRequest,
  from: WalletRow,
  to: WalletRow
): Connector.RefusalReason | undefined => {
  if (request.kind === "reversal") {
    if (to.status === "frozen") return "wallet_frozen"
    if (to.status === "blocked") return "blocked_by_rules"
    return from.balance < request.amount ? "insufficient_balance" : undefined
  }
  // decideTransfer reads the status, the limit and the balance; the rest of PayerAccount is laari's.
  const account = {
    frozen: from.status === "frozen",
    blockedByRules: from.status === "blocked",
    limit: from.limit,
    balance: from.balance
  } as Wallet.PayerAccount
  const reason = Wallet.decideTransfer(account, request.amount)
  return reason === undefined ? undefined : Option.getOrUndefined(Connector.fromWalletRefusal(reason))
}

/** The entries of a transfer: `from` debited `amount`, `to` credited the rest after the fee, `fee.to` the fee. */
const entriesOf = (
  id: string,
  r: Pick<TransferRow, "from_wallet" | "to_wallet" | "amount" | "fee_to" | "fee_amount">
) => {
  const fee = r.fee_amount ?? 0
  return [
    { transfer_id: id, wallet_id: r.from_wallet, side: "debit", amount: r.amount },
    { transfer_id: id, wallet_id: r.to_wallet, side: "credit", amount: r.amount - fee },
    { transfer_id: id, wallet_id: r.fee_to ?? r.to_wallet, side: "credit", amount: fee }
  ].filter((e) => e.amount > 0)
}

const answerBody = (row: TransferRow): Connector.TransferAnswer => {
  switch (row.status) {
    case "cancelled":
      return { id: row.id, status: "cancelled" }
    case "refused":
      return { id: row.id, status: "refused", reason: row.reason! }
    case "posted":
      return { id: row.id, status: "posted", posted_at: Time.format(row.posted_at!) }
  }
}

/** The answer an id gets every time after the first: a refusal stays a 422, everything else is a 200. */
const answerOf = (row: TransferRow): PostOutcome => ({
  _tag: "Answer",
  status: row.status === "refused" ? 422 : 200,
  body: answerBody(row)
})

/** `GET /transfers/{id}`: what was asked and what became of it; a cancelled id is only its id. */
const transferOf = (row: TransferRow): Connector.Transfer => {
  if (row.status === "cancelled") return { id: row.id, status: "cancelled" }
  const asked = {
    id: row.id,
    environment: row.environment,
    from: row.from_wallet,
    to: row.to_wallet,
    amount: row.amount,
    fee: row.fee_to === null ? null : { to: row.fee_to, amount: row.fee_amount! },
    memo: row.memo,
    kind: row.kind
  }
  return row.status === "posted"
    ? { ...asked, status: "posted", posted_at: Time.format(row.posted_at!) }
    : { ...asked, status: "refused", reason: row.reason! }
}

/** The statement's cursor: where the last page ended, opaque to the caller. */
const encodeCursor = (postedAt: Date, id: string) =>
  Buffer.from(JSON.stringify([postedAt.toISOString(), id])).toString("base64url")
const decodeCursor = (cursor: string): { at: Date; id: string } | undefined => {
  try {
    const [at, id] = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    const date = new Date(at)
    return typeof id === "string" && typeof at === "string" && !Number.isNaN(date.getTime())
      ? { at: date, id }
      : undefined
  } catch {
    return undefined
  }
}

const make = (faults: Faults) =>
  Effect.gen(function* () {
    const sql = yield* SqlClient.SqlClient

    const findTransfer = (id: string) =>
      sql`SELECT * FROM transfers WHERE id = ${id}`.pipe(
        Effect.map((rows) => (rows[0] ? transferRow(rows[0]) : undefined))
      )

    /**
     * Books a transfer's entries and moves each wallet's balance by its entries, in one statement; the
     * database checks both rules (no balance below zero, the entries balanced at commit).
     */
    const move = (id: string, r: Parameters<typeof entriesOf>[1]) =>
      Effect.asVoid(sql`WITH booked AS (
          INSERT INTO entries ${sql.insert(entriesOf(id, r))} RETURNING wallet_id, side, amount
        ), moved AS (
          SELECT wallet_id, sum(CASE side WHEN 'debit' THEN -amount ELSE amount END) AS delta
          FROM booked GROUP BY wallet_id
        )
        UPDATE wallets SET balance = balance + moved.delta FROM moved WHERE wallets.id = moved.wallet_id`)

    /** An id seen before: a cancelled id stays cancelled, the same body gets the first answer, another a 409. */
    const repeat = (first: TransferRow, hash: string) =>
      Effect.gen(function* () {
        if (first.status === "cancelled") return answerOf(first)
        if (first.request_hash !== hash) return { _tag: "Conflict" } as const
        // Test-only fault: a repeat moves the money again, as a core without idempotency would.
        if (faults.doublePost && first.status === "posted") yield* move(first.id, first)
        return answerOf(first)
      })

    const post = (request: Connector.TransferRequest): Effect.Effect<PostOutcome, SqlError> =>
      sql.withTransaction(
        Effect.gen(function* () {
          const hash = requestHash(request)
          const first = yield* findTransfer(request.id)
          if (first) return yield* repeat(first, hash)

          const ids = [
            ...new Set([request.from, request.to, ...(request.fee ? [request.fee.to] : [])])
          ].sort()
          const wallets =
            (yield* sql`SELECT * FROM wallets WHERE id IN ${sql.in(ids)} ORDER BY id FOR UPDATE`).map(
              walletRow
            )
          const missing = ids.find((id) => !wallets.some((w) => w.id === id))
          if (missing !== undefined) return { _tag: "UnknownWallet", wallet: missing } as const

          const reason = decide(
            request,
            wallets.find((w) => w.id === request.from)!,
            wallets.find((w) => w.id === request.to)!
          )
          const postedAt = reason === undefined ? Time.now() : null
          const row = {
            id: request.id,
            status: reason === undefined ? "posted" : "refused",
            request_hash: hash,
            environment: request.environment,
            from_wallet: request.from,
            to_wallet: request.to,
            amount: request.amount,
            fee_to: request.fee?.to ?? null,
            fee_amount: request.fee?.amount ?? null,
            memo: request.memo,
            kind: request.kind,
            reason: reason ?? null,
            posted_at: postedAt
          }
          const inserted =
            yield* sql`INSERT INTO transfers ${sql.insert(row)} ON CONFLICT (id) DO NOTHING RETURNING id`
          if (inserted.length === 0) {
            // Another call decided this id while this one waited for the locks: its answer stands.
            return yield* repeat((yield* findTransfer(request.id))!, hash)
          }
          if (reason !== undefined) return answerOf(transferRow(row))
          yield* move(request.id, row)
          return { _tag: "Answer", status: 201, body: answerBody(transferRow(row)) } as const
        })
      )

    const cancel = (id: string): Effect.Effect<Connector.CancelAnswer, SqlError> =>
      sql.withTransaction(
        Effect.gen(function* () {
          // Test-only fault: a cancel that leaves nothing behind, so the id can still post later.
          if (!faults.noTombstones) {
            const inserted =
              yield* sql`INSERT INTO transfers (id, status) VALUES (${id}, 'cancelled') ON CONFLICT (id) DO NOTHING RETURNING id`
            if (inserted.length > 0) return { status: "cancelled" } as const
          }
          const row = yield* findTransfer(id)
          return { status: row?.status ?? "cancelled" }
        })
      )

    const transfer = (id: string) =>
      Effect.map(findTransfer(id), (row) => (row ? transferOf(row) : undefined))

    const statement = (postedOn: string, cursor: string | undefined) =>
      Effect.gen(function* () {
        const { start, end } = Time.day(postedOn)
        const after = cursor === undefined ? { at: start, id: "" } : decodeCursor(cursor)
        if (after === undefined) return undefined
        const rows = (yield* sql`
          SELECT * FROM transfers
          WHERE status = 'posted' AND posted_at >= ${start} AND posted_at < ${end}
            AND (posted_at, id) > (${after.at}::timestamptz, ${after.id}::text)
          ORDER BY posted_at, id
          LIMIT ${Connector.StatementPageSize + 1}`).map(transferRow)
        const page = rows.slice(0, Connector.StatementPageSize)
        const last = page[page.length - 1]
        return {
          transfers: page.map((r) => ({
            id: r.id,
            from: r.from_wallet,
            to: r.to_wallet,
            amount: r.amount,
            fee: r.fee_to === null ? null : { to: r.fee_to, amount: r.fee_amount! },
            kind: r.kind,
            posted_at: Time.format(r.posted_at!)
          })),
          next_cursor: rows.length > page.length && last ? encodeCursor(last.posted_at!, last.id) : null
        } satisfies Connector.StatementPage
      })

    const wallet = (id: string) =>
      Effect.map(sql`SELECT * FROM wallets WHERE id = ${id}`, (rows) =>
        rows[0] ? walletRow(rows[0]) : undefined
      )

    const walletByPhone = (phone: string) =>
      Effect.map(sql`SELECT * FROM wallets WHERE phone = ${phone}`, (rows) =>
        rows[0] ? walletRow(rows[0]) : undefined
      )

    const wallets = Effect.map(sql`SELECT * FROM wallets ORDER BY id`, (rows) => rows.map(walletRow))

    /** Seeds a wallet; `undefined` when its id or phone is taken. */
    const openWallet = (w: NewWallet) =>
      Effect.map(
        sql`INSERT INTO wallets ${sql.insert({
          id: w.id ?? crypto.randomUUID(),
          phone: w.phone,
          status: w.status,
          limit: w.limit,
          time_zone: w.time_zone,
          opening_balance: w.balance,
          balance: w.balance
        })} ON CONFLICT DO NOTHING RETURNING *`,
        (rows) => (rows[0] ? walletRow(rows[0]) : undefined)
      )

    /** Changes a wallet's status or limit; `undefined` when there is no such wallet. */
    const updateWallet = (
      id: string,
      changes: { status?: Connector.WalletStatus | undefined; limit?: number | null | undefined }
    ) =>
      Effect.gen(function* () {
        const set: Record<string, unknown> = {}
        if (changes.status !== undefined) set.status = changes.status
        if (changes.limit !== undefined) set.limit = changes.limit
        if (Object.keys(set).length === 0) return yield* wallet(id)
        const rows = yield* sql`UPDATE wallets SET ${sql.update(set)} WHERE id = ${id} RETURNING *`
        return rows[0] ? walletRow(rows[0]) : undefined
      })

    return { post, cancel, transfer, statement, wallet, walletByPhone, wallets, openWallet, updateWallet }
  })

export class Book extends Context.Tag("wallet-core/Book")<
  Book,
  Effect.Effect.Success<ReturnType<typeof make>>
>() {
  static layer = (faults: Faults) => Layer.effect(Book, make(faults))
}
