/**
 * The wallet connector protocol, version 1: what laari (the client) and a wallet provider's core system
 * (the server) say to each other when the money lives in the provider's ledger. JSON bodies, snake_case,
 * amounts in whole laari. The published OpenAPI document, laari's client and a core's server are all
 * built from these schemas, so none of them can drift from the others.
 */
import { Option, Schema } from "effect"
import { Temporal } from "temporal-polyfill"
import { isTimeZone, parseOffsetDateTime } from "../kernel/Calendar.js"
import type { RefusalReason as WalletRefusalReason } from "./Wallet.js"

/** The header that carries the caller's request id on every call, and that every answer carries back. */
export const RequestIdHeader = "Request-Id"

/** The value of `Request-Id`: the caller's name for this call, in its logs and the core's. */
export const RequestId = Schema.String.pipe(
  Schema.maxLength(200, { message: () => "must be 1 to 200 visible ASCII characters" }),
  Schema.pattern(/^[\x21-\x7e]+$/, {
    message: () => "must be 1 to 200 visible ASCII characters"
  })
).annotations({
  title: "RequestId",
  description:
    "The caller's id of this call (laari sends a fresh UUID), logged by both sides and sent back on the answer"
})

/** A page of a statement holds at most this many transfers. */
export const StatementPageSize = 100

/** A memo is at most this many characters. */
export const MaxMemoLength = 140

/**
 * Text of at most `max` characters, never empty; refusals name the rule. `title` replaces the one Effect
 * would publish (the last filter's name, `maxLength(255)`).
 */
const text = (max: number, title: string, description: string) =>
  Schema.String.pipe(
    Schema.minLength(1, { message: () => "must not be empty" }),
    Schema.maxLength(max, { message: () => `must be at most ${max} characters` })
  ).annotations({ title, description })

/** A whole number of laari, `min` or more; refusals name the rule. */
const laari = (min: 0 | 1, description: string) =>
  Schema.Number.pipe(
    Schema.int({ message: () => "must be a whole number of laari" }),
    Schema.greaterThanOrEqualTo(min, { message: () => `must be ${min} or more` })
  ).annotations({
    title: "Laari",
    description,
    // What `int` checks (a whole number within JavaScript's safe range), published whole: a schema of
    // its own replaces what Effect would write, title and description included.
    jsonSchema: {
      type: "integer",
      format: "int64",
      minimum: min,
      maximum: Number.MAX_SAFE_INTEGER,
      title: "Laari",
      description
    }
  })

const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** A wallet's id in the core: the core's own text, opaque to laari. */
export const WalletId = text(
  255,
  "WalletId",
  "A wallet's id in the core (the core's own identifier, opaque to laari)"
)

/** laari's transfer id: a UUID laari makes and commits before it calls, unique per cause. */
export const TransferId = Schema.String.pipe(
  Schema.pattern(uuid, { message: () => "must be a UUID" })
).annotations({
  description: "laari's id of the transfer (a UUID), made and committed by laari before it calls",
  jsonSchema: { format: "uuid", maxLength: 36 }
})

/** A Maldivian phone number in E.164: `+960` and seven digits. */
export const Phone = Schema.String.pipe(
  Schema.maxLength(12, { message: () => "must be +960 followed by seven digits" }),
  Schema.pattern(/^\+960\d{7}$/, { message: () => "must be +960 followed by seven digits" })
).annotations({
  title: "Phone",
  description: "The wallet holder's phone number in E.164: +960 followed by seven digits",
  examples: ["+9607771234"]
})

export const WalletStatus = Schema.Literal("active", "frozen", "blocked").annotations({
  description:
    "`active`: the wallet may pay; `frozen`: its holder or the provider froze it; `blocked`: the provider's rules block it"
})
export type WalletStatus = typeof WalletStatus.Type

export const TimeZone = Schema.String.pipe(
  Schema.maxLength(64, { message: () => "must be an IANA time zone such as Indian/Maldives" }),
  Schema.filter(isTimeZone, {
    message: () => "must be an IANA time zone such as Indian/Maldives",
    jsonSchema: {}
  })
).annotations({
  title: "TimeZone",
  description: "The IANA time zone the wallet holder lives in, such as Indian/Maldives"
})

/** `GET /wallets/{wallet_id}` and `GET /wallets?phone=`. */
export const Wallet = Schema.Struct({
  id: WalletId,
  phone: Phone,
  status: WalletStatus,
  limit: Schema.NullOr(
    laari(0, "The largest single payment the wallet may make, in laari; null when it has none")
  ),
  time_zone: TimeZone
}).annotations({ identifier: "Wallet", description: "A wallet as the core holds it" })
export type Wallet = typeof Wallet.Type

export const Environment = Schema.Literal("test", "live").annotations({
  description: "`test`: the sandbox, no real money; `live`: real money"
})

export const TransferKind = Schema.Literal("payment", "reversal").annotations({
  description:
    "`payment`: a customer pays a merchant (from the customer's wallet); `reversal`: a refund (from the merchant's wallet back to the customer's)"
})
export type TransferKind = typeof TransferKind.Type

export const Fee = Schema.Struct({
  to: text(255, "WalletId", "The wallet id that receives the fee"),
  amount: laari(0, "The fee in laari, taken out of what `to` of the transfer receives")
}).annotations({
  identifier: "Fee",
  description:
    "The fee: `fee.amount` of the transfer's amount goes to `fee.to` instead of the transfer's `to`"
})
export type Fee = typeof Fee.Type

/** The fields of a transfer as laari asks for it; `TransferRequest` adds the rule across them. */
const transferFields = {
  id: TransferId,
  environment: Environment,
  from: text(255, "WalletId", "The wallet id debited `amount`"),
  to: text(255, "WalletId", "The wallet id credited `amount` less the fee"),
  amount: laari(1, "How much leaves `from`, in laari (100 laari = 1 MVR)"),
  fee: Schema.NullOr(Fee).annotations({ description: "The fee, or null when none is taken" }),
  memo: Schema.String.pipe(
    Schema.maxLength(MaxMemoLength, { message: () => `must be at most ${MaxMemoLength} characters` })
  ).annotations({
    title: "Memo",
    description: `What the transfer is for, as the wallet holders see it; at most ${MaxMemoLength} characters`
  }),
  kind: TransferKind
}

const feeWithinAmount = (t: { readonly amount: number; readonly fee: Fee | null }) =>
  t.fee === null || t.fee.amount <= t.amount

/** `POST /transfers`: the body laari sends. */
export const TransferRequest = Schema.Struct(transferFields)
  .pipe(
    Schema.filter(
      (t) =>
        feeWithinAmount(t) ? undefined : { path: ["fee", "amount"], message: "must not be more than amount" },
      {
        jsonSchema: {}
      }
    )
  )
  .annotations({
    identifier: "TransferRequest",
    description:
      "A transfer laari asks the core to make: `from` is debited `amount`, `to` credited `amount - fee.amount`, `fee.to` credited `fee.amount`"
  })
export type TransferRequest = typeof TransferRequest.Type

export const RefusalReason = Schema.Literal(
  "insufficient_balance",
  "wallet_limit",
  "wallet_frozen",
  "blocked_by_rules"
).annotations({
  description:
    "`insufficient_balance`: `from` holds less than `amount`; `wallet_limit`: `amount` is above the wallet's limit; `wallet_frozen`: the wallet is frozen; `blocked_by_rules`: the provider's rules block it"
})
export type RefusalReason = typeof RefusalReason.Type

/** A refusal as core's `Wallet` port says it. */
export const toWalletRefusal: { readonly [R in RefusalReason]: WalletRefusalReason } = {
  insufficient_balance: "insufficient-balance",
  wallet_limit: "wallet-limit",
  wallet_frozen: "wallet-frozen",
  blocked_by_rules: "blocked-by-rules"
}

/** A refusal of core's `Wallet` port as the protocol says it; `executor-error` is no refusal of a core. */
export const fromWalletRefusal = (reason: WalletRefusalReason): Option.Option<RefusalReason> => {
  for (const [wire, domain] of Object.entries(toWalletRefusal))
    if (domain === reason) return Option.some(wire as RefusalReason)
  return Option.none()
}

/** `2026-12-02T14:05:09+05:00`: ISO 8601 with a numeric offset, whole seconds. */
export const PostedAt = Schema.String.pipe(
  Schema.filter((s) => Option.isSome(parseOffsetDateTime(s)), {
    message: () => "must be an ISO 8601 date-time with a numeric UTC offset and no fractional seconds"
  })
).annotations({
  description: "When the core posted the transfer: ISO 8601 with a numeric UTC offset, whole seconds",
  jsonSchema: { format: "date-time", maxLength: 25 },
  examples: ["2026-12-02T14:05:09+05:00"]
})

const id = TransferId

export const Posted = Schema.Struct({
  id,
  status: Schema.Literal("posted").annotations({ description: "The core moved the money" }),
  posted_at: PostedAt
}).annotations({ identifier: "Posted", description: "The transfer is posted: the money moved" })

export const Refused = Schema.Struct({
  id,
  status: Schema.Literal("refused").annotations({ description: "The core refused it and moved nothing" }),
  reason: RefusalReason
}).annotations({ identifier: "Refused", description: "The transfer is refused: nothing moved, ever" })

export const Cancelled = Schema.Struct({
  id,
  status: Schema.Literal("cancelled").annotations({
    description: "laari cancelled it before it was posted: nothing moved, and nothing ever will under this id"
  })
}).annotations({ identifier: "Cancelled", description: "The transfer is cancelled: nothing moved, ever" })

/** The answer to `POST /transfers`: `201`/`200` posted or cancelled, `422` refused. */
export const TransferAnswer = Schema.Union(Posted, Refused, Cancelled).annotations({
  description: "What became of the transfer"
})
export type TransferAnswer = typeof TransferAnswer.Type

/** `GET /transfers/{id}`: a posted or refused transfer with what was asked; a cancelled id alone. */
export const PostedTransfer = Schema.Struct({
  ...transferFields,
  status: Posted.fields.status,
  posted_at: PostedAt
}).annotations({ identifier: "PostedTransfer", description: "A posted transfer, as it was asked for" })
export const RefusedTransfer = Schema.Struct({
  ...transferFields,
  status: Refused.fields.status,
  reason: RefusalReason
}).annotations({ identifier: "RefusedTransfer", description: "A refused transfer, as it was asked for" })
export const Transfer = Schema.Union(PostedTransfer, RefusedTransfer, Cancelled).annotations({
  description: "A transfer the core took, with its status"
})
export type Transfer = typeof Transfer.Type

/** `POST /transfers/{id}/cancel`: final. */
export const CancelAnswer = Schema.Struct({
  status: Schema.Literal("cancelled", "posted", "refused").annotations({
    description:
      "`cancelled`: it was never posted and never will be; `posted`: it already was, and stays; `refused`: it was refused, nothing moved. Final"
  })
}).annotations({ identifier: "CancelAnswer", description: "What the transfer is, for good, after a cancel" })
export type CancelAnswer = typeof CancelAnswer.Type

/** `YYYY-MM-DD`, a real calendar date. */
export const PostedOn = Schema.String.pipe(
  Schema.filter(
    (s) => {
      if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false
      try {
        // Stryker disable next-line ObjectLiteral: a string is always parsed strictly; `overflow` only bounds a property bag
        Temporal.PlainDate.from(s, { overflow: "reject" })
        return true
      } catch {
        return false
      }
    },
    { message: () => "must be a date YYYY-MM-DD" }
  )
).annotations({
  description: "A Maldives day (Indian/Maldives, +05:00), YYYY-MM-DD: the transfers posted on it",
  jsonSchema: { format: "date", maxLength: 10 }
})

export const Cursor = text(1000, "Cursor", "Where the next page starts: the `next_cursor` of the page before")

export const StatementItem = Schema.Struct({
  id,
  from: transferFields.from,
  to: transferFields.to,
  amount: transferFields.amount,
  fee: transferFields.fee,
  kind: TransferKind,
  posted_at: PostedAt
}).annotations({ identifier: "StatementItem", description: "A transfer the core posted" })
export type StatementItem = typeof StatementItem.Type

export const StatementPage = Schema.Struct({
  transfers: Schema.Array(StatementItem)
    .pipe(
      Schema.maxItems(StatementPageSize, {
        message: () => `must hold at most ${StatementPageSize} transfers`
      })
    )
    .annotations({
      title: "Transfers",
      description: `The transfers posted on the day, ordered by posted_at then id; at most ${StatementPageSize}`
    }),
  next_cursor: Schema.NullOr(
    text(1000, "Cursor", "The cursor of the next page (opaque, for `cursor`); null on the last page")
  )
}).annotations({
  identifier: "StatementPage",
  description: "A page of the core's statement of one Maldives day"
})
export type StatementPage = typeof StatementPage.Type

export const ErrorCode = Schema.Literal(
  "unauthorized",
  "invalid_request",
  "not_found",
  "conflict"
).annotations({
  description:
    "`unauthorized`: the bearer token is missing or wrong; `invalid_request`: the request does not decode; `not_found`: no such wallet or transfer; `conflict`: a transfer id reused with another body"
})
export type ErrorCode = typeof ErrorCode.Type

export const ErrorBody = Schema.Struct({
  code: ErrorCode,
  message: Schema.String.pipe(
    Schema.maxLength(1000, { message: () => "must be at most 1000 characters" })
  ).annotations({
    title: "Message",
    description: "What is wrong, for a person to read; at most 1000 characters"
  })
}).annotations({ identifier: "ErrorBody", description: "An error" })
export type ErrorBody = typeof ErrorBody.Type
