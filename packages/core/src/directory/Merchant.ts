/**
 * Merchants, their outlets and their sandbox payers: the records, the defaults and checks a new merchant
 * gets (`MerchantsStore.ts` holds the ports that keep them). `Merchants` runs them.
 */
import { Either } from "effect"
import { MaldivesZone } from "../kernel/Calendar.js"
import { InvalidRequest } from "../kernel/Errors.js"
import { DefaultFeeBps } from "../kernel/Fees.js"
import type { FieldProblem } from "../kernel/Fields.js"
import type { CustomerId, Environment, MerchantId } from "../kernel/Ids.js"

export interface Features {
  readonly mandatesLive: boolean
  readonly subscriptionsLive: boolean
}

/** A change to the gates: one not named keeps its value. */
export interface FeaturesPatch {
  readonly mandatesLive?: boolean | undefined
  readonly subscriptionsLive?: boolean | undefined
}

export interface Merchant {
  readonly id: MerchantId
  readonly name: string
  readonly city: string
  readonly mcc: string
  readonly feeBps: number
  readonly features: Features
  /** The sandbox payer wallet: test-mode mandates are bound to it. */
  readonly sandboxPayer: CustomerId
}

export interface Customer {
  readonly id: CustomerId
  readonly environment: Environment
  readonly phone: string
  readonly name: string | null
}

export interface Outlet {
  readonly id: number
  readonly merchantId: MerchantId
  readonly name: string
}

export interface WithOutlets {
  readonly merchant: Merchant
  readonly outlets: ReadonlyArray<Outlet>
}

/** Every merchant's sandbox payer starts with this much (laari). */
export const SandboxPayerBalance = 10_000_000

export const DefaultCity = "Male"
/** ISO 18245 5999: miscellaneous retail. */
export const DefaultMcc = "5999"
/** The longest name, city or outlet name. */
export const MaxText = 255

export interface Input {
  readonly name: string
  readonly city?: string | undefined
  readonly mcc?: string | undefined
  /** Default `Fees.DefaultFeeBps`. */
  readonly feeBps?: number | undefined
  readonly features?: FeaturesPatch | undefined
  /** Outlets to open with it, numbered in this order. */
  readonly outlets?: ReadonlyArray<string> | undefined
}

const textProblem = (field: string, text: string | undefined): ReadonlyArray<FieldProblem> =>
  text === undefined || (text.length >= 1 && text.length <= MaxText)
    ? []
    : [{ field, message: `must be 1 to ${MaxText} characters` }]

/** What is wrong with `input`: a name, city and outlet names of 1 to 255 characters, four-digit mcc, fee 0 to 100%. */
export const problems = (input: Input): ReadonlyArray<FieldProblem> => [
  ...textProblem("name", input.name),
  ...textProblem("city", input.city),
  ...(input.mcc === undefined || /^\d{4}$/.test(input.mcc)
    ? []
    : [{ field: "mcc", message: "must be four digits" }]),
  ...(input.feeBps === undefined ||
  (Number.isInteger(input.feeBps) && input.feeBps >= 0 && input.feeBps <= 10_000)
    ? []
    : [{ field: "fee_bps", message: "must be an integer from 0 to 10000" }]),
  // Stryker disable next-line ArrayDeclaration: with no outlets the mutant checks one made-up name, which fits, so no problem appears
  ...(input.outlets ?? []).flatMap((name, i) => textProblem(`outlets[${i}].name`, name))
]

/** `name` as an outlet's name, or what is wrong with it. */
export const outletName = (name: string): Either.Either<string, InvalidRequest> => {
  const found = textProblem("name", name)
  return found.length > 0 ? Either.left(InvalidRequest.of(found)) : Either.right(name)
}

/** The sandbox payer's phone: unique per merchant, and obviously not a real number. */
export const sandboxPhone = (merchantId: MerchantId): string => `+960 sandbox-${merchantId}`

/**
 * A new merchant with ids `id` and `payerId` (its sandbox payer, a test customer), the defaults filled in,
 * or what is wrong with `input`.
 */
export const open = (
  input: Input,
  id: MerchantId,
  payerId: CustomerId
): Either.Either<{ readonly merchant: Merchant; readonly sandboxPayer: Customer }, InvalidRequest> => {
  const found = problems(input)
  if (found.length > 0) return Either.left(InvalidRequest.of(found))
  return Either.right({
    merchant: {
      id,
      name: input.name,
      city: input.city ?? DefaultCity,
      mcc: input.mcc ?? DefaultMcc,
      feeBps: input.feeBps ?? DefaultFeeBps,
      features: {
        mandatesLive: input.features?.mandatesLive ?? false,
        subscriptionsLive: input.features?.subscriptionsLive ?? false
      },
      sandboxPayer: payerId
    },
    sandboxPayer: {
      id: payerId,
      environment: "test",
      phone: sandboxPhone(id),
      name: `${input.name} sandbox payer`
    }
  })
}

/** The gates a merchant has after `patch`. */
export const withFeatures = (merchant: Merchant, patch: FeaturesPatch): Merchant => ({
  ...merchant,
  features: {
    mandatesLive: patch.mandatesLive ?? merchant.features.mandatesLive,
    subscriptionsLive: patch.subscriptionsLive ?? merchant.features.subscriptionsLive
  }
})

/** A new merchant as the store keeps it: the merchant, its sandbox payer, and its outlets' names. */
export interface NewMerchant {
  readonly merchant: Merchant
  readonly sandboxPayer: Customer
  readonly outlets: ReadonlyArray<string>
}

/** The time zone a sandbox payer's wallet is in. */
export const SandboxPayerZone = MaldivesZone
