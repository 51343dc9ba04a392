/**
 * The GraphQL read API's schema: what the merchant API reads, with the same fields (`Types`
 * makes them from the REST read schemas), the same filters and paging (decoded by the REST endpoints'
 * own URL parameter schemas), the scopes the REST reads declare (`Access`), and lists of lists batched (a page of
 * mandates asks for all their charges in one statement).
 */
import {
  Auth,
  Balances,
  Checkout,
  Deliveries,
  type Errors,
  Fields,
  type Ids,
  type Invoice,
  type Mandate,
  Mandate as MandateModel,
  Mandates,
  QrCode as QrCodeModel,
  QrCodes,
  Reads,
  Refunds,
  Subscription as SubscriptionModel,
  Subscriptions
} from "@laari/core"
import DataLoader from "dataloader"
import { DateTime, Effect, Either, ParseResult, Schema } from "effect"
import * as G from "graphql"
import {
  BalanceRead,
  BalanceTransactionList,
  ListParams as BalanceTransactionsParams
} from "../Balance/Api.js"
import * as BalanceJson from "../Balance/Http.js"
import { SessionRead } from "../Checkout/Api.js"
import * as CheckoutJson from "../Checkout/Json.js"
import { ServerConfigTag } from "../Platform/Config.js"
import { ChargeRead, ListParams as MandatesParams, MandateRead } from "../Mandates/Api.js"
import * as MandateJson from "../Mandates/Json.js"
import { ListParams as QrParams, QrCodeRead } from "../QrCodes/Api.js"
import * as QrJson from "../QrCodes/Json.js"
import { ListParams as RefundsParams, RefundRead } from "../Refunds/Api.js"
import * as RefundJson from "../Refunds/Http.js"
import { InvoiceRead, ListParams as SubscriptionsParams, SubscriptionRead } from "../Subscriptions/Api.js"
import * as SubscriptionJson from "../Subscriptions/Json.js"
import { DeliveriesParams, EventsParams, WebhookDeliveryRead, WebhookEndpointRead } from "../Webhooks/Api.js"
import { page, Paging } from "../Http/Fields.js"
import { Endpoints } from "../Webhooks/Endpoints.js"
import * as WebhookJson from "../Webhooks/Json.js"
import { Events } from "@laari/core"
import { allow, type Field, scopeOf } from "./Scopes.js"
import * as Types from "./Types.js"

/** What every resolver gets: who asks, and how to run an effect in the server's runtime. */
export type Context = {
  readonly principal: Auth.Principal
  readonly run: <A>(effect: Effect.Effect<A, Errors.ServiceUnavailable | unknown>) => Promise<A>
  /** Per request: the charges of each mandate, and the invoices of each subscription, by page size. */
  readonly charges: (limit: number) => DataLoader<string, ReadonlyArray<Mandate.Charge>>
  readonly invoices: (limit: number) => DataLoader<string, ReadonlyArray<Invoice.Invoice>>
}

/** The largest page of a nested list, as of a REST list. */
export const NestedLimit = { default: 25, max: 100 } as const

/** GraphQL arguments as the REST endpoint's URL parameters, decoded by its own schema. */
const params = <A, I>(schema: Schema.Schema<A, I, never>, args: Record<string, unknown>): A => {
  const record: Record<string, string> = {}
  for (const [name, value] of Object.entries(args))
    if (value !== undefined && value !== null) record[name] = String(value)
  const decoded = Schema.decodeUnknownEither(schema, { errors: "all" })(record)
  if (Either.isLeft(decoded)) {
    // As the REST list answers it, in core's words: the first field's problem as the message, every one by field.
    const errors = Fields.summarize(ParseResult.ArrayFormatter.formatErrorSync(decoded.left))
    throw new G.GraphQLError(`${errors[0]?.field}: ${errors[0]?.message}`, {
      extensions: { code: "BAD_USER_INPUT", errors }
    })
  }
  return decoded.right
}

const PageParams = Schema.Struct(Paging)

/** The paging fields of every list's decoded URL parameters. */
type Paged = { readonly limit?: number | undefined; readonly offset?: number | undefined }

/** What a resolver hands `Context.run`. */
type Run<A, E = unknown> = Effect.Effect<A, E>

const pageArgs = {
  limit: { type: Types.SafeInt, description: "How many, newest first: 1 to 100, default 25" },
  offset: { type: Types.SafeInt, description: "How many to skip, default 0" }
} as const

const nestedLimit = (args: { limit?: number | null }) => {
  const limit = args.limit ?? NestedLimit.default
  if (!Number.isInteger(limit) || limit < 1 || limit > NestedLimit.max)
    throw new G.GraphQLError(`limit must be a whole number from 1 to ${NestedLimit.max}`, {
      extensions: { code: "BAD_USER_INPUT" }
    })
  return limit
}

/** `undefined` for a lookup that found nothing: a missing object is `null`, not an error. */
const orNull = <A, E extends { readonly _tag: string }, R>(
  effect: Effect.Effect<A, E, R>,
  notFound: ReadonlyArray<string>
) =>
  Effect.catchIf(
    effect,
    (e) => notFound.includes(e._tag),
    () => Effect.succeed(null)
  )

export const make = Effect.gen(function* () {
  const config = yield* ServerConfigTag
  const mandates = yield* Mandates.Mandates
  const qrCodes = yield* QrCodes.QrCodes
  const checkout = yield* Checkout.Checkout
  const subscriptions = yield* Subscriptions.Subscriptions
  const refunds = yield* Refunds.Refunds
  const balances = yield* Balances.Balances
  const reads = yield* Reads.Reads
  const endpoints = yield* Endpoints
  const deliveries = yield* Deliveries.Deliveries
  const types = Types.make()

  const Charge = types.fromSchema(ChargeRead)
  const Invoice = types.fromSchema(InvoiceRead)
  const Mandate = types.fromSchema(MandateRead, () => ({
    charges: {
      type: new G.GraphQLNonNull(new G.GraphQLList(new G.GraphQLNonNull(Charge))),
      description: `Its charges, newest first (scope ${scopeOf("mandates")})`,
      args: { limit: pageArgs.limit },
      resolve: (m: { id: string }, args: { limit?: number }, ctx: Context) =>
        ctx
          .charges(nestedLimit(args))
          .load(m.id)
          .then((list) => list.map(MandateJson.charge))
    }
  }))
  const Subscription = types.fromSchema(SubscriptionRead, () => ({
    invoices: {
      type: new G.GraphQLNonNull(new G.GraphQLList(new G.GraphQLNonNull(Invoice))),
      description: "Its invoices, one per cycle, newest first",
      args: { limit: pageArgs.limit },
      resolve: (s: { id: string }, args: { limit?: number }, ctx: Context) =>
        ctx
          .invoices(nestedLimit(args))
          .load(s.id)
          .then((list) => list.map(SubscriptionJson.invoice))
    }
  }))
  const QrCode = types.fromSchema(QrCodeRead)
  const CheckoutSession = types.fromSchema(SessionRead)
  const Event = types.fromSchema(Events.Envelope.annotations({ identifier: "Event" }))
  const WebhookEndpoint = types.fromSchema(WebhookEndpointRead)
  const WebhookDelivery = types.fromSchema(WebhookDeliveryRead)
  const Refund = types.fromSchema(RefundRead)
  const Balance = types.fromSchema(BalanceRead)
  const BalanceTransactions = types.fromSchema(BalanceTransactionList)

  const list = (type: G.GraphQLObjectType) =>
    new G.GraphQLNonNull(new G.GraphQLList(new G.GraphQLNonNull(type)))
  const MandateStatus = Types.enumOf("MandateStatus", MandateModel.Status)
  const SubscriptionStatus = Types.enumOf("SubscriptionStatus", SubscriptionModel.Status)
  const QrType = Types.enumOf("QrCodeType", QrCodeModel.Type)
  const byId = {
    id: { type: new G.GraphQLNonNull(G.GraphQLString), description: "Its id, or your reference for it" }
  }

  /**
   * A field read as a REST list: its arguments decoded by the endpoint's own URL parameters, paged as
   * REST pages (`page`), refused as the REST operation it mirrors refuses.
   */
  const listOf = <P extends Paged, I, A>(
    field: Field,
    type: G.GraphQLObjectType,
    description: string,
    args: G.GraphQLFieldConfigArgumentMap,
    schema: Schema.Schema<P, I, never>,
    read: (principal: Auth.Principal, p: P, paging: ReturnType<typeof page>) => Run<ReadonlyArray<A>>
  ): G.GraphQLFieldConfig<unknown, Context> => ({
    type: list(type),
    description: `${description} (scope ${scopeOf(field)})`,
    args,
    resolve: (_, args, ctx) => {
      allow(ctx.principal, field)
      const p = params(schema, args)
      return ctx.run(read(ctx.principal, p, page(p)))
    }
  })
  /** A field read as a REST `GET` by id or reference: `null` where REST answers `404` (`notFound`). */
  const byIdOf = <A>(
    field: Field,
    type: G.GraphQLObjectType,
    get: (tenant: Ids.Tenant, id: string) => Run<A, { readonly _tag: string }>,
    notFound: string,
    description?: string
  ): G.GraphQLFieldConfig<unknown, Context, { id: string }> => ({
    type,
    description,
    args: byId,
    resolve: (_, args, ctx) => {
      allow(ctx.principal, field)
      return ctx.run(orNull(get(Auth.tenantOf(ctx.principal), args.id), [notFound]))
    }
  })
  const Query = new G.GraphQLObjectType<unknown, Context>({
    name: "Query",
    description: "What the merchant API reads, for the key's merchant and environment",
    fields: {
      mandates: listOf(
        "mandates",
        Mandate,
        "Mandates, newest first",
        { status: { type: MandateStatus }, reference: { type: G.GraphQLString }, ...pageArgs },
        MandatesParams,
        (principal, p, paging) =>
          mandates
            .list(Auth.tenantOf(principal), { status: p.status, reference: p.reference, ...paging })
            .pipe(Effect.map((l) => l.map(MandateJson.mandate)))
      ),
      mandate: byIdOf(
        "mandate",
        Mandate,
        (tenant, id) => mandates.get(tenant, id).pipe(Effect.map(MandateJson.mandate)),
        "MandateNotFound"
      ),
      qrCodes: listOf(
        "qrCodes",
        QrCode,
        "QR codes, newest first",
        { outlet_id: { type: Types.SafeInt }, type: { type: QrType }, ...pageArgs },
        QrParams,
        (principal, p, paging) =>
          qrCodes
            .list(Auth.tenantOf(principal), { outletId: p.outlet_id, type: p.type, ...paging })
            .pipe(Effect.map((l) => l.map((c) => QrJson.qrCode(c, config.baseUrl))))
      ),
      qrCode: byIdOf(
        "qrCode",
        QrCode,
        (tenant, id) => qrCodes.get(tenant, id).pipe(Effect.map((c) => QrJson.qrCode(c, config.baseUrl))),
        "QrCodeNotFound"
      ),
      checkoutSession: byIdOf(
        "checkoutSession",
        CheckoutSession,
        (tenant, id) =>
          checkout.get(tenant, id).pipe(Effect.map((s) => CheckoutJson.session(s, config.checkoutUrl))),
        "CheckoutSessionNotFound",
        `A checkout session (scope ${scopeOf("checkoutSession")}, secret keys)`
      ),
      subscriptions: listOf(
        "subscriptions",
        Subscription,
        "Subscriptions, newest first",
        { status: { type: SubscriptionStatus }, reference: { type: G.GraphQLString }, ...pageArgs },
        SubscriptionsParams,
        (principal, p, paging) =>
          subscriptions
            .list(Auth.tenantOf(principal), { status: p.status, reference: p.reference, ...paging })
            .pipe(Effect.map((l) => l.map(SubscriptionJson.subscription)))
      ),
      refunds: listOf(
        "refunds",
        Refund,
        "Refunds, newest first, optionally of one payment",
        {
          charge_id: { type: G.GraphQLString },
          qr_payment_id: { type: G.GraphQLString },
          invoice_id: { type: G.GraphQLString },
          ...pageArgs
        },
        RefundsParams,
        (principal, p, paging) =>
          refunds
            .list(Auth.tenantOf(principal), {
              chargeId: p.charge_id,
              qrPaymentId: p.qr_payment_id,
              invoiceId: p.invoice_id,
              ...paging
            })
            .pipe(Effect.map((l) => l.map(RefundJson.json)))
      ),
      refund: byIdOf(
        "refund",
        Refund,
        (tenant, id) => refunds.get(tenant, id).pipe(Effect.map(RefundJson.json)),
        "RefundNotFound"
      ),
      balance: {
        type: new G.GraphQLNonNull(Balance),
        description: `The merchant's available balance in the key's environment (scope ${scopeOf("balance")})`,
        resolve: (_, __, ctx) => {
          allow(ctx.principal, "balance")
          return ctx.run(
            balances
              .get(Auth.tenantOf(ctx.principal))
              .pipe(Effect.map((b) => BalanceJson.balanceJson(b, ctx.principal.environment)))
          )
        }
      },
      balanceTransactions: {
        type: new G.GraphQLNonNull(BalanceTransactions),
        description: `Every movement of the merchant's balance, newest first, \`limit\` at a time after the \`starting_after\` movement (scope ${scopeOf("balanceTransactions")})`,
        args: { starting_after: { type: G.GraphQLString }, limit: pageArgs.limit },
        resolve: (_, args, ctx) => {
          allow(ctx.principal, "balanceTransactions")
          const p = params(BalanceTransactionsParams, args)
          return ctx.run(
            balances
              .list(Auth.tenantOf(ctx.principal), { startingAfter: p.starting_after, limit: p.limit ?? 25 })
              .pipe(
                Effect.map(BalanceJson.pageJson),
                // As REST's 404: the cursor is the caller's input, so it is theirs to correct.
                Effect.catchTag("BalanceTransactionNotFound", (e) =>
                  Effect.fail(
                    new G.GraphQLError(`starting_after: ${e.message}`, {
                      extensions: {
                        code: "BAD_USER_INPUT",
                        errors: [{ field: "starting_after", message: e.message }]
                      }
                    })
                  )
                )
              )
          )
        }
      },
      subscription: byIdOf(
        "subscription",
        Subscription,
        (tenant, id) => subscriptions.get(tenant, id).pipe(Effect.map(SubscriptionJson.subscription)),
        "SubscriptionNotFound"
      ),
      events: listOf(
        "events",
        Event,
        "Events as delivered, newest first",
        { type: { type: G.GraphQLString }, created_after: { type: Types.SafeInt }, ...pageArgs },
        EventsParams,
        (principal, p, paging) =>
          reads
            .events({
              merchantId: principal.merchantId,
              environment: principal.environment,
              type: p.type,
              // `created` is whole seconds: after second n is from second n + 1 (as the REST list).
              createdFrom:
                p.created_after === undefined ? undefined : DateTime.unsafeMake((p.created_after + 1) * 1000),
              ...paging
            })
            .pipe(Effect.map((l) => l.map((e) => JSON.parse(e.text) as unknown)))
      ),
      event: {
        type: Event,
        args: byId,
        resolve: (_, args: { id: string }, ctx) => {
          allow(ctx.principal, "event")
          return ctx.run(
            reads
              .event(Auth.tenantOf(ctx.principal), args.id)
              .pipe(Effect.map((e) => (e === undefined ? null : (JSON.parse(e.text) as unknown))))
          )
        }
      },
      webhookEndpoints: listOf(
        "webhookEndpoints",
        WebhookEndpoint,
        "Where events are delivered",
        pageArgs,
        PageParams,
        (principal, _, paging) =>
          endpoints.list(principal, paging).pipe(Effect.map((l) => l.map(WebhookJson.endpoint)))
      ),
      webhookDeliveries: {
        type: list(WebhookDelivery),
        description: `One endpoint's delivery attempts, newest first (scope ${scopeOf("webhookDeliveries")})`,
        args: {
          endpoint_id: { type: new G.GraphQLNonNull(G.GraphQLString) },
          event_id: { type: G.GraphQLString },
          status: { type: G.GraphQLString },
          ...pageArgs
        },
        resolve: (_, args: Record<string, unknown>, ctx) => {
          allow(ctx.principal, "webhookDeliveries")
          const { endpoint_id, ...rest } = args
          const p = params(DeliveriesParams, rest)
          return ctx.run(
            orNull(
              deliveries
                .list(Auth.tenantOf(ctx.principal), String(endpoint_id), {
                  eventId: p.event_id,
                  status: p.status,
                  ...page(p)
                })
                .pipe(Effect.map((l) => l.map(WebhookJson.delivery))),
              ["WebhookEndpointNotFound"]
            ).pipe(Effect.map((l) => l ?? []))
          )
        }
      }
    }
  })

  const schema = new G.GraphQLSchema({ query: Query })

  /** The per-request loaders: one statement per page size for all the parents a response holds. */
  const loaders = (run: Context["run"], principal: Auth.Principal) => {
    const tenant = Auth.tenantOf(principal)
    const cache = <A>(make: (limit: number) => DataLoader<string, A>) => {
      const made = new Map<number, DataLoader<string, A>>()
      return (limit: number) => {
        const known = made.get(limit)
        if (known !== undefined) return known
        const loader = make(limit)
        made.set(limit, loader)
        return loader
      }
    }
    return {
      charges: cache(
        (limit) =>
          new DataLoader<string, ReadonlyArray<Mandate.Charge>>((ids) =>
            run(reads.chargesOfMandates(tenant, ids, limit))
          )
      ),
      invoices: cache(
        (limit) =>
          new DataLoader<string, ReadonlyArray<Invoice.Invoice>>((ids) =>
            run(reads.invoicesOfSubscriptions(tenant, ids, limit))
          )
      )
    }
  }

  return { schema, loaders }
})
