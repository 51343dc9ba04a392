/**
 * The operator API (`Authorization: Bearer <LAARI_OPS_TOKEN>`): merchants, outlets, keys, feature gates,
 * customers, suspensions, recorded events and the manual clock.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Auth, Events, Ids, Phone } from "@laari/core"
import { Schema } from "effect"
import * as DomainProblems from "../Http/DomainProblems.js"
import * as Problems from "../Http/Problems.js"
import { Body, optionalNullable, PathSegment, TimeZone, Text } from "../Http/Fields.js"
import { OpsAuthentication } from "../Http/Authentication.js"
import * as Access from "../Http/Access.js"
import { MandateRead } from "../Mandates/Api.js"
import { SubscriptionRead } from "../Subscriptions/Api.js"

const Name = Text.pipe(Schema.minLength(1), Schema.maxLength(255))
const Outlet = Schema.Struct({ id: Schema.Int, name: Text })

export const MerchantRead = Schema.Struct({
  id: Text,
  name: Text,
  city: Text,
  mcc: Text,
  feeBps: Schema.Int,
  features: Schema.Struct({ mandatesLive: Schema.Boolean, subscriptionsLive: Schema.Boolean }),
  outlets: Schema.Array(Outlet)
}).annotations({ identifier: "OpsMerchant" })

export const CreateMerchant = Body({
  name: Name,
  city: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(255))),
  mcc: Schema.optional(Text.pipe(Schema.pattern(/^\d{4}$/, { message: () => "mcc must be four digits" }))),
  fee_bps: Schema.optional(Schema.Int.pipe(Schema.between(0, 10_000))),
  outlets: Schema.optional(Schema.Array(Schema.Struct({ name: Name })))
})

export const CreateKey = Body({
  environment: Ids.Environment,
  kind: Schema.optional(Auth.KeyKind),
  scopes: Schema.optional(Schema.Array(Auth.Scope))
})

export const KeyCreated = Schema.Struct({
  id: Text,
  key: Text,
  environment: Ids.Environment,
  kind: Auth.KeyKind,
  scopes: Schema.Array(Auth.Scope)
})

export const KeyRead = Schema.Struct({
  id: Text,
  prefix: Text.annotations({ description: "The key's first characters: the key itself is shown only once" }),
  environment: Ids.Environment,
  kind: Auth.KeyKind,
  scopes: Schema.Array(Auth.Scope),
  createdAt: Text,
  revokedAt: Schema.NullOr(Text)
}).annotations({ identifier: "OpsKey" })

export const OAuthClientRead = Schema.Struct({
  client_id: Text,
  name: Schema.NullOr(Text),
  environment: Ids.Environment,
  scopes: Schema.Array(Auth.Scope),
  createdAt: Text,
  revokedAt: Schema.NullOr(Text)
}).annotations({ identifier: "OpsOAuthClient" })

export const OAuthClientCreated = Schema.Struct({
  ...OAuthClientRead.fields,
  client_secret: Text.annotations({ description: "Shown only here; stored as a keyed hash" })
}).annotations({ identifier: "OpsOAuthClientCreated" })

export const CreateOAuthClient = Body({
  environment: Ids.Environment,
  scopes: Schema.Array(Auth.Scope).pipe(Schema.minItems(1)),
  name: optionalNullable(Text.pipe(Schema.minLength(1), Schema.maxLength(255)))
})

export const CustomerRead = Schema.Struct({
  id: Text,
  environment: Ids.Environment,
  phone: Text,
  name: Schema.NullOr(Text),
  balance: Schema.Int,
  walletLimit: Schema.NullOr(Schema.Int),
  frozen: Schema.Boolean,
  blockedByRules: Schema.Boolean,
  timeZone: Text
}).annotations({ identifier: "OpsCustomer" })

export const CreateCustomer = Body({
  environment: Ids.Environment,
  phone: Phone.Phone,
  name: optionalNullable(Text.pipe(Schema.maxLength(255))),
  balance: Schema.optional(Schema.Int.pipe(Schema.nonNegative())),
  time_zone: Schema.optional(TimeZone)
})

export const NotificationRead = Schema.Struct({
  id: Text,
  kind: Text,
  title: Text,
  body: Text,
  data: Schema.Record({ key: Text, value: Schema.Unknown.annotations({ jsonSchema: {} }) }),
  createdAt: Text
})

export const CodeRead = Schema.Struct({
  code: Text,
  subject_kind: Text.annotations({ description: "What the code approves: mandate, checkout or wallet" }),
  subject_id: Text,
  expires_at: Text
}).annotations({ identifier: "OpsCode" })

/** The `404` of the codes endpoint on a service not started for development; the CLI recognizes it. */
export const codesNeedDevelopment =
  "Customers' one-time codes are readable only on a development start: this endpoint exists only with LAARI_DEVELOPMENT=true"

export const ClockRead = Schema.Struct({ now: Text, mode: Schema.Literal("system", "manual") })

const IdPath = Schema.Struct({ id: PathSegment })
/** How many rows an operator's list answers: 1 to 1000. */
const Limit = Schema.optional(Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000)))
const MerchantPath = Schema.Struct({ id: Schema.UUID })

export class OpsApi extends HttpApiGroup.make("ops")
  .add(
    Problems.post("createMerchant", "/ops/merchants")
      .setPayload(CreateMerchant)
      .addSuccess(MerchantRead, { status: 201 })
      .annotate(OpenApi.Summary, "Create a merchant")
      .annotate(
        OpenApi.Description,
        "With its outlets, fee and merchant category code; its sandbox payer is created with it."
      )
  )
  .add(
    HttpApiEndpoint.get("listMerchants", "/ops/merchants")
      .setUrlParams(Schema.Struct({ limit: Limit }))
      .addSuccess(Schema.Array(MerchantRead))
      .annotate(OpenApi.Summary, "List merchants")
      .annotate(OpenApi.Description, "Oldest first, with their outlets; 100 by default, at most 1000.")
  )
  .add(
    Problems.post("addOutlet", "/ops/merchants/:id/outlets")
      .setPath(MerchantPath)
      .setPayload(Schema.Struct({ name: Name }))
      .addSuccess(Outlet, { status: 201 })
      .annotate(OpenApi.Summary, "Add an outlet")
      .annotate(OpenApi.Description, "Outlets are numbered; QR codes belong to one.")
  )
  .add(
    Problems.post("createKey", "/ops/merchants/:id/keys")
      .setPath(MerchantPath)
      .setPayload(CreateKey)
      .addSuccess(KeyCreated, { status: 201 })
      .annotate(OpenApi.Summary, "Issue a key")
      .annotate(
        OpenApi.Description,
        "A secret or publishable key for one environment with its scopes; the key is shown only here."
      )
  )
  .add(
    HttpApiEndpoint.get("listKeys", "/ops/merchants/:id/keys")
      .setPath(MerchantPath)
      .addSuccess(Schema.Array(KeyRead))
      .annotate(OpenApi.Summary, "List a merchant's keys")
      .annotate(OpenApi.Description, "Oldest first, revoked ones too; prefixes only, never the keys.")
  )
  .add(
    Problems.post("revokeKey", "/ops/merchants/:id/keys/:key/revoke")
      .setPath(Schema.Struct({ id: Schema.UUID, key: PathSegment }))
      .addSuccess(KeyRead)
      .annotate(OpenApi.Summary, "Revoke a key")
      .annotate(OpenApi.Description, "From now on the key is refused with 401, in every process.")
  )
  .add(
    Problems.post("createOAuthClient", "/ops/merchants/:id/oauth-clients")
      .setPath(MerchantPath)
      .setPayload(CreateOAuthClient)
      .addSuccess(OAuthClientCreated, { status: 201 })
      .annotate(OpenApi.Summary, "Register an OAuth client")
      .annotate(
        OpenApi.Description,
        "A client of the client credentials grant (`POST /oauth/token`) for one environment; its tokens carry at most these scopes. The secret is shown only here."
      )
  )
  .add(
    HttpApiEndpoint.get("listOAuthClients", "/ops/merchants/:id/oauth-clients")
      .setPath(MerchantPath)
      .addSuccess(Schema.Array(OAuthClientRead))
      .annotate(OpenApi.Summary, "List a merchant's OAuth clients")
      .annotate(OpenApi.Description, "Oldest first, revoked ones too; never the secrets.")
  )
  .add(
    Problems.post("revokeOAuthClient", "/ops/merchants/:id/oauth-clients/:client/revoke")
      .setPath(Schema.Struct({ id: Schema.UUID, client: PathSegment }))
      .addSuccess(OAuthClientRead)
      .annotate(OpenApi.Summary, "Revoke an OAuth client")
      .annotate(
        OpenApi.Description,
        "The client can get no more tokens, and every token it holds is refused with 401."
      )
  )
  .add(
    Problems.post("setFeatures", "/ops/merchants/:id/features")
      .setPath(MerchantPath)
      .setPayload(
        Schema.Struct({
          mandates_live: Schema.optional(Schema.Boolean),
          subscriptions_live: Schema.optional(Schema.Boolean)
        })
      )
      .addSuccess(MerchantRead)
      .annotate(OpenApi.Summary, "Set feature gates")
      .annotate(OpenApi.Description, "Enables live mandates or live subscriptions for the merchant.")
  )
  .add(
    Problems.post("createCustomer", "/ops/customers")
      .setPayload(CreateCustomer)
      .addSuccess(CustomerRead, { status: 201 })
      .annotate(OpenApi.Summary, "Create a customer")
      .annotate(
        OpenApi.Description,
        "A wallet holder with a phone number, balance and time zone, in one environment."
      )
  )
  .add(
    HttpApiEndpoint.get("notifications", "/ops/customers/:id/notifications")
      .setPath(Schema.Struct({ id: Schema.UUID }))
      .addSuccess(Schema.Array(NotificationRead))
      .annotate(OpenApi.Summary, "A customer's notifications")
      .annotate(
        OpenApi.Description,
        "What the wallet app shows the customer, newest first; one-time codes only on a development start (LAARI_DEVELOPMENT=true, or LAARI_CLOCK=manual)."
      )
  )
  .add(
    HttpApiEndpoint.get("customerCodes", "/ops/customers/codes")
      .setUrlParams(
        Schema.Struct({
          phone: Text.pipe(Schema.minLength(1)),
          environment: Schema.optional(Ids.Environment)
        })
      )
      .addSuccess(Schema.Array(CodeRead))
      .annotate(OpenApi.Summary, "A customer's current one-time codes (development)")
      .annotate(
        OpenApi.Description,
        "Unexpired, unused and not locked, newest first. Only on a development start (LAARI_DEVELOPMENT=true, or LAARI_CLOCK=manual); otherwise 404."
      )
  )
  .add(
    Problems.post("suspendMandate", "/ops/mandates/:id/suspend")
      .setPath(IdPath)
      .addSuccess(MandateRead)
      .annotate(OpenApi.Summary, "Suspend a mandate")
      .annotate(OpenApi.Description, "An active mandate stops being chargeable.")
  )
  .add(
    Problems.post("cancelSubscription", "/ops/subscriptions/:id/cancel")
      .setPath(IdPath)
      .addSuccess(SubscriptionRead)
      .annotate(OpenApi.Summary, "Cancel a subscription")
      .annotate(OpenApi.Description, "Ends a subscription as the operator (`OPS`).")
  )
  .add(
    HttpApiEndpoint.get("events", "/ops/events")
      .setUrlParams(
        Schema.Struct({
          merchant_id: Schema.optional(Schema.UUID),
          type: Schema.optional(Text),
          limit: Limit
        })
      )
      .addSuccess(Schema.Array(Events.Envelope))
      .annotate(OpenApi.Summary, "Recorded events")
      .annotate(OpenApi.Description, "The outbox's envelopes, newest first, optionally by merchant and type.")
  )
  .add(
    HttpApiEndpoint.get("clock", "/ops/clock")
      .addSuccess(ClockRead)
      .annotate(OpenApi.Summary, "The clock")
      .annotate(OpenApi.Description, "The service's current time and whether it is manual.")
  )
  .add(
    Problems.post("advanceClock", "/ops/clock/advance")
      .setPayload(
        Schema.Struct({
          to: Schema.optional(Text),
          by_seconds: Schema.optional(Schema.Int.pipe(Schema.nonNegative()))
        })
      )
      .addSuccess(Schema.extend(ClockRead, Schema.Struct({ processed: Schema.Int })))
      .annotate(OpenApi.Summary, "Advance the manual clock")
      .annotate(
        OpenApi.Description,
        "Moves a manual clock (`LAARI_CLOCK=manual`) forward and runs the work that fell due; `processed` counts it."
      )
  )
  .addError(Problems.NotFoundProblem)
  .addError(Problems.ConflictProblem)
  .addError(DomainProblems.MandateNotFound)
  .addError(DomainProblems.MandateNotSuspendable)
  .addError(DomainProblems.SubscriptionNotFound)
  .addError(DomainProblems.SubscriptionNotCancellable)
  .addError(Problems.InvalidRequest)
  .addError(Problems.ServiceUnavailable)
  .middleware(OpsAuthentication)
  .annotate(Access.Access, Access.operator)
  .annotate(OpenApi.Title, "Operations")
  .annotate(OpenApi.Exclude, true) {}
