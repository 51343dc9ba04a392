/**
 * `pnpm --filter @laari/example-qr-render start`: mint a dynamic code and show it in the terminal.
 */
import { Calendar, Money } from "@laari/core"
import { Effect } from "effect"
import QRCode from "qrcode"
import { runInMemory } from "./program.js"

const code = await Effect.runPromise(runInMemory)
console.log(
  `dynamic code ${code.qrid} for MVR ${Money.formatMvr(code.amount ?? 0)}, until ${Calendar.formatMaldives(code.expiresAt!)}`
)
console.log(`payload (${code.payload.length} characters):\n${code.payload}\n`)
console.log(await QRCode.toString(code.payload, { type: "terminal", small: true, errorCorrectionLevel: "M" }))
