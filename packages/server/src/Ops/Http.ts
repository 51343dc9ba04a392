/**
 * Handlers of the operator API.
 */
import {
  ApiKeys,
  Audit,
  Calendar,
  Errors,
  EventLog,
  Ids,
  Mandates,
  Merchants,
  OAuthClients,
  Reads,
  Subscriptions
} from "@laari/core"
import { DateTime, Effect, Option } from "effect"
import * as Operation from "../Http/Operation.js"
import { Clockwork } from "../Background/Clockwork.js"
import * as ServerConfig from "../Platform/Config.js"
import * as Problems from "../Http/Problems.js"
import * as MandateJson from "../Mandates/Json.js"
import * as SubscriptionJson from "../Subscriptions/Json.js"
import { Directory } from "../Platform/Directory.js"
import * as OpsApi from "./Api.js"
import * as Json from "./Json.js"

const notFound = (what: string) => Effect.fail(new Problems.NotFound({ message: `${what} not found` }))

export const OpsLive = Operation.handlers(OpsApi.OpsApi, (handlers) =>
  Effect.gen(function* () {
    const directory = yield* Directory
    const merchants = yield* Merchants.Merchants
    const keys = yield* ApiKeys.ApiKeys
    const mandates = yield* Mandates.Mandates
    const subscriptions = yield* Subscriptions.Subscriptions
    const clockwork = yield* Clockwork
    const oauth = yield* OAuthClients.OAuthClients
    const reads = yield* Reads.Reads
    const audit = yield* Audit.Audit
    const showCodes = ServerConfig.codesVisible(yield* ServerConfig.ServerConfigTag)

    /** Fails `404` unless `id` is a merchant's. */
    const known = (id: string) =>
      Effect.flatMap(merchants.get(id), (m) => (m === undefined ? notFound("Merchant") : Effect.void))

    const clockRead = Effect.map(DateTime.now, (now) => ({
      now: Calendar.formatMaldives(now),
      mode: clockwork.mode
    }))

    return handlers
      .handle("createMerchant", ({ payload }) =>
        merchants
          .create({
            name: payload.name,
            city: payload.city,
            mcc: payload.mcc,
            feeBps: payload.fee_bps,
            outlets: payload.outlets?.map((o) => o.name)
          })
          .pipe(Effect.map(({ merchant, outlets }) => Json.merchant(merchant, outlets)))
      )
      .handle("listMerchants", ({ urlParams }) =>
        Effect.map(merchants.list(urlParams.limit ?? 100), (list) =>
          list.map(({ merchant, outlets }) => Json.merchant(merchant, outlets))
        )
      )
      .handle("addOutlet", ({ path, payload }) =>
        merchants
          .addOutlet(path.id, payload.name)
          .pipe(
            Effect.flatMap((outlet) =>
              outlet === undefined
                ? notFound("Merchant")
                : Effect.succeed({ id: outlet.id, name: outlet.name })
            )
          )
      )
      .handle("createKey", ({ path, payload }) =>
        Effect.gen(function* () {
          const merchantId = Ids.MerchantId.make(path.id)
          yield* known(merchantId)
          return yield* keys.issue({
            merchantId,
            environment: payload.environment,
            kind: payload.kind ?? "secret",
            scopes: payload.scopes
          })
        })
      )
      .handle("listKeys", ({ path }) =>
        Effect.gen(function* () {
          yield* known(path.id)
          return (yield* keys.list(Ids.MerchantId.make(path.id))).map(Json.key)
        })
      )
      .handle("revokeKey", ({ path }) =>
        Effect.gen(function* () {
          const merchantId = path.id as Ids.MerchantId
          const key = (yield* keys.list(merchantId)).find((k) => k.id === path.key)
          if (key === undefined) return yield* notFound("Key")
          yield* keys.revoke(merchantId, key.id)
          const after = (yield* keys.list(merchantId)).find((k) => k.id === path.key)
          return Json.key(after ?? key)
        })
      )
      .handle("createOAuthClient", ({ path, payload }) =>
        Effect.gen(function* () {
          const merchantId = Ids.MerchantId.make(path.id)
          yield* known(merchantId)
          const { client, secret } = yield* oauth.create({
            merchantId,
            environment: payload.environment,
            scopes: [...new Set(payload.scopes)],
            name: payload.name ?? null
          })
          return { ...Json.oauthClient(client), client_secret: secret }
        })
      )
      .handle("listOAuthClients", ({ path }) =>
        Effect.gen(function* () {
          yield* known(path.id)
          return (yield* oauth.list(path.id)).map(Json.oauthClient)
        })
      )
      .handle("revokeOAuthClient", ({ path }) =>
        Effect.flatMap(oauth.revoke(path.id, path.client), (client) =>
          client === undefined ? notFound("OAuth client") : Effect.succeed(Json.oauthClient(client))
        )
      )
      .handle("setFeatures", ({ path, payload }) =>
        Effect.gen(function* () {
          const merchant = yield* merchants.setFeatures(path.id, {
            mandatesLive: payload.mandates_live,
            subscriptionsLive: payload.subscriptions_live
          })
          if (merchant === undefined) return yield* notFound("Merchant")
          return Json.merchant(merchant, yield* merchants.listOutlets(merchant.id))
        })
      )
      .handle("createCustomer", ({ payload }) =>
        Effect.gen(function* () {
          const customer = yield* audit.recording(
            directory.createCustomer({
              environment: payload.environment,
              phone: payload.phone,
              name: payload.name ?? undefined,
              balance: payload.balance,
              timeZone: payload.time_zone
            }),
            (made) => ({
              merchantId: null,
              environment: payload.environment,
              action: "customer.create",
              resourceType: "customer",
              resourceId: made.id,
              fields: { phone: payload.phone, name: payload.name, balance: payload.balance }
            })
          )
          const account = yield* directory.payer(customer.id)
          return Json.customer(customer, account!)
        }).pipe(
          Effect.catchTag("PhoneTaken", () =>
            Effect.fail(
              new Problems.Conflict({
                message: "A customer with this phone already exists in this environment"
              })
            )
          )
        )
      )
      .handle("notifications", ({ path }) =>
        Effect.gen(function* () {
          const customerId = Ids.CustomerId.make(path.id)
          if ((yield* reads.customer(customerId)) === undefined) return yield* notFound("Customer")
          const list = yield* reads.notifications(customerId)
          return list.map((n) => Json.notification(n, showCodes))
        })
      )
      .handle("customerCodes", ({ urlParams }) =>
        Effect.gen(function* () {
          if (!showCodes)
            return yield* Effect.fail(new Problems.NotFound({ message: OpsApi.codesNeedDevelopment }))
          const environment = urlParams.environment ?? "test"
          const customer = yield* reads.customerByPhone(environment, urlParams.phone)
          if (customer === undefined)
            return yield* notFound(`A customer with phone ${urlParams.phone} in ${environment}`)
          return (yield* reads.liveCodes(customer.id)).map((c) => Json.code(c.notice, c.challenge))
        })
      )
      .handle("suspendMandate", ({ path }) => Effect.map(mandates.suspend(path.id), MandateJson.mandate))
      .handle("cancelSubscription", ({ path }) =>
        Effect.map(subscriptions.cancelByOps(path.id), SubscriptionJson.subscription)
      )
      .handle("events", ({ urlParams }) =>
        reads
          .events({
            merchantId:
              urlParams.merchant_id === undefined ? undefined : Ids.MerchantId.make(urlParams.merchant_id),
            type: urlParams.type,
            limit: urlParams.limit ?? 100
          })
          .pipe(Effect.map((events) => events.map((e) => EventLog.parsed(e).envelope)))
      )
      .handle("clock", () => clockRead)
      .handle("advanceClock", ({ payload }) =>
        Effect.gen(function* () {
          if (clockwork.manual === undefined)
            return yield* Effect.fail(
              new Problems.NotFound({ message: "The clock is not manual (LAARI_CLOCK=manual)" })
            )
          const now = yield* DateTime.now
          const target =
            payload.to !== undefined
              ? Calendar.parseOffsetDateTime(payload.to)
              : Option.some(DateTime.add(now, { seconds: payload.by_seconds ?? 0 }))
          if (Option.isNone(target) || DateTime.lessThan(target.value, now))
            return yield* Effect.fail(
              new Errors.InvalidRequest({
                message: "Give `to` (a later ISO 8601 date-time with a numeric offset) or `by_seconds`",
                errors: [
                  { field: "to", message: "must be a date-time with a numeric offset, not in the past" }
                ]
              })
            )
          const processed = yield* clockwork.advanceTo(target.value)!
          // After the advance, which runs the work it made due in transactions of its own.
          yield* audit.recording(Effect.void, () => ({
            merchantId: null,
            environment: null,
            action: "clock.advance",
            resourceType: "clock",
            resourceId: null,
            fields: { from: DateTime.formatIso(now), to: DateTime.formatIso(target.value), processed }
          }))
          return { ...(yield* clockRead), processed }
        })
      )
  })
)
