/**
 * Handlers of the operator API.
 */
import { HttpApiBuilder } from "@effect/platform"
import {
  Calendar,
  Crypto,
  type Errors,
  Ids,
  Mandates,
  Notifications,
  Store,
  Subscriptions
} from "@laari/core"
import { DateTime, Effect, Option } from "effect"
import { Api } from "../Api.js"
import { Clockwork } from "../Clockwork.js"
import { fromError, message, reply, respond, toResponse } from "../Http/Reply.js"
import { issueKey } from "../Onboarding.js"
import * as MandateJson from "../Mandates/Json.js"
import * as SubscriptionJson from "../Subscriptions/Json.js"
import { Directory } from "../Sql/Directory.js"
import * as Json from "./Json.js"

const notFound = (what: string) => toResponse(message(404, `${what} not found`))

export const OpsLive = HttpApiBuilder.group(Api, "ops", (handlers) =>
  Effect.gen(function* () {
    const directory = yield* Directory
    const merchants = yield* Store.Merchants
    const customers = yield* Store.Customers
    const notifications = yield* Notifications.Notifications
    const mandates = yield* Mandates.Mandates
    const subscriptions = yield* Subscriptions.Subscriptions
    const clockwork = yield* Clockwork
    const crypto = yield* Crypto.Crypto

    const clockRead = Effect.map(DateTime.now, (now) => ({
      now: Calendar.formatMaldives(now),
      mode: clockwork.mode
    }))
    const unavailable = (e: Errors.ServiceUnavailable) => toResponse(fromError(e))

    return handlers
      .handle("createMerchant", ({ payload }) =>
        directory
          .createMerchant({
            name: payload.name,
            city: payload.city,
            mcc: payload.mcc,
            feeBps: payload.fee_bps,
            outlets: payload.outlets?.map((o) => o.name)
          })
          .pipe(
            Effect.map(({ merchant, outlets }) => toResponse(reply(201, Json.merchant(merchant, outlets)))),
            Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e)))
          )
      )
      .handle("addOutlet", ({ path, payload }) =>
        directory.addOutlet(Ids.MerchantId.make(path.id), payload.name).pipe(
          Effect.map((outlet) =>
            outlet === undefined ? notFound("Merchant") : toResponse(reply(201, outlet))
          ),
          Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e)))
        )
      )
      .handle("createKey", ({ path, payload }) =>
        Effect.gen(function* () {
          const merchantId = Ids.MerchantId.make(path.id)
          if ((yield* merchants.get(merchantId)) === undefined) return notFound("Merchant")
          const issued = yield* issueKey({
            merchantId,
            environment: payload.environment,
            kind: payload.kind ?? "secret",
            scopes: payload.scopes
          }).pipe(Effect.provideService(Directory, directory), Effect.provideService(Crypto.Crypto, crypto))
          return toResponse(reply(201, issued))
        }).pipe(Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e))))
      )
      .handle("setFeatures", ({ path, payload }) =>
        Effect.gen(function* () {
          const merchantId = Ids.MerchantId.make(path.id)
          const merchant = yield* directory.setFeatures(merchantId, {
            mandatesLive: payload.mandates_live,
            subscriptionsLive: payload.subscriptions_live
          })
          if (merchant === undefined) return notFound("Merchant")
          return toResponse(reply(200, Json.merchant(merchant, yield* directory.listOutlets(merchantId))))
        }).pipe(Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e))))
      )
      .handle("createCustomer", ({ payload }) =>
        Effect.gen(function* () {
          const customer = yield* directory.createCustomer({
            environment: payload.environment,
            phone: payload.phone.trim(),
            name: payload.name ?? undefined,
            balance: payload.balance,
            timeZone: payload.time_zone
          })
          const account = yield* directory.payer(customer.id)
          return toResponse(reply(201, Json.customer(customer, account!)))
        }).pipe(
          Effect.catchTags({
            PhoneTaken: () =>
              Effect.succeed(
                toResponse(message(409, "A customer with this phone already exists in this environment"))
              ),
            ServiceUnavailable: (e) => Effect.succeed(unavailable(e))
          })
        )
      )
      .handle("notifications", ({ path }) =>
        Effect.gen(function* () {
          const customerId = Ids.CustomerId.make(path.id)
          if ((yield* customers.get(customerId)) === undefined) return notFound("Customer")
          const list = yield* notifications.list(customerId)
          return toResponse(
            reply(
              200,
              list.map((n) => Json.notification(n, clockwork.mode === "manual"))
            )
          )
        }).pipe(Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e))))
      )
      .handle("suspendMandate", ({ path }) =>
        respond(mandates.suspend(path.id), (m) => reply(200, MandateJson.mandate(m)))
      )
      .handle("cancelSubscription", ({ path }) =>
        respond(subscriptions.cancelByOps(path.id), (s) => reply(200, SubscriptionJson.subscription(s)))
      )
      .handle("events", ({ urlParams }) =>
        directory
          .listEvents({
            merchantId:
              urlParams.merchant_id === undefined ? undefined : Ids.MerchantId.make(urlParams.merchant_id),
            type: urlParams.type,
            limit: urlParams.limit ?? 100
          })
          .pipe(
            Effect.map((events) =>
              toResponse(
                reply(
                  200,
                  events.map((e) => e.envelope)
                )
              )
            ),
            Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e)))
          )
      )
      .handle("clock", () => Effect.map(clockRead, (c) => toResponse(reply(200, c))))
      .handle("advanceClock", ({ payload }) =>
        Effect.gen(function* () {
          if (clockwork.manual === undefined)
            return toResponse(message(404, "The clock is not manual (LAARI_CLOCK=manual)"))
          const now = yield* DateTime.now
          const target =
            payload.to !== undefined
              ? Calendar.parseOffsetDateTime(payload.to)
              : Option.some(DateTime.add(now, { seconds: payload.by_seconds ?? 0 }))
          if (Option.isNone(target) || DateTime.lessThan(target.value, now))
            return toResponse(
              message(422, "Give `to` (a later ISO 8601 date-time with a numeric offset) or `by_seconds`", {
                errors: [
                  { field: "to", message: "must be a date-time with a numeric offset, not in the past" }
                ]
              })
            )
          const processed = yield* clockwork.advanceTo(target.value)!
          return toResponse(reply(200, { ...(yield* clockRead), processed }))
        }).pipe(Effect.catchTag("ServiceUnavailable", (e) => Effect.succeed(unavailable(e))))
      )
  })
)
