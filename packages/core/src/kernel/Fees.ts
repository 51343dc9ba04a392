/**
 * The service's fee: per-merchant basis points, rounded half up to whole laari.
 */
import { Laari } from "./Money.js"

/** 100 basis points = 1.00%. */
export const DefaultFeeBps = 100

export interface Split {
  readonly fee: Laari
  readonly netAmount: Laari
}

export const split = (amount: number, feeBps: number): Split => {
  const fee = Math.floor((amount * feeBps + 5_000) / 10_000)
  return { fee: Laari(fee), netAmount: Laari(amount - fee) }
}
