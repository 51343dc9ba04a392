/**
 * The operator API (`Authorization: Bearer <LAARI_OPS_TOKEN>`): merchants, outlets, keys, feature gates,
 * customers, suspensions, recorded events and the manual clock.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Auth, Events, Ids, Phone } from "@laari/core"
import { Schema } from "effect"
import * as MandatesProblems from "../Mandates/Problems.js"
import * as SubscriptionsProblems from "../Subscriptions/Problems.js"
import * as Problems from "../Http/Problems.js"
import {
  Body,
  Laari,
  optionalNullable,
  PathSegment,
  TimeZone,
  Text,
  Timestamp,
  Uuid,
  WholeNumber
} from "../Http/Fields.js"
import * as Declare from "../Http/Declare.js"
import { MandateRead } from "../Mandates/Api.js"
import { SubscriptionRead } from "../Subscriptions/Api.js"

// Request fields are described at the property: a description on the schema would replace the words
// of its rule in a refusal.
const Name = Text.pipe(Schema.minLength(1), Schema.maxLength(255))
const named = (description: string) => Schema.propertySignature(Name).annotations({ description })
const Outlet = Schema.Struct({
  id: WholeNumber("The outlet's number, 1 for the merchant's first; a QR code's `outlet_id`"),
  name: Text.annotations({ description: "The outlet's name, the default title of its QR codes" })
}).annotations({ description: "A shop or till of the merchant; QR codes belong to one" })

const Scopes = Schema.Array(Auth.Scope).annotations({ description: "What the credential may do" })
const CreatedAt = Timestamp.annotations({
  description: "When it was issued: Maldives time (+05:00), whole seconds"
})
const RevokedAt = Schema.NullOr(Timestamp).annotations({
  description: "When it was revoked, Maldives time (+05:00); `null` while it works"
})

export const MerchantRead = Schema.Struct({
  id: Ids.MerchantId,
  name: Text.annotations({ description: "The merchant's name, shown to customers" }),
  city: Text.annotations({ description: "The merchant's city, written into its QR codes" }),
  mcc: Text.annotations({ description: "The merchant category code (ISO 18245), four digits" }),
  feeBps: WholeNumber("The platform's fee on each payment, in basis points (100 = 1%)"),
  features: Schema.Struct({
    mandatesLive: Schema.Boolean.annotations({ description: "`true`: live keys may create mandates" }),
    subscriptionsLive: Schema.Boolean.annotations({
      description: "`true`: live keys may sell subscriptions"
    })
  }).annotations({ description: "What the merchant may do with live keys (the sandbox allows all)" }),
  outlets: Schema.Array(Outlet).annotations({ description: "Its outlets, by number" })
}).annotations({ identifier: "OpsMerchant", description: "A merchant, as the operator sees it" })

export const CreateMerchant = Body({
  name: named("The merchant's name, shown to customers"),
  city: Schema.optional(Text.pipe(Schema.minLength(1), Schema.maxLength(255))).annotations({
    description: "The merchant's city, written into its QR codes"
  }),
  mcc: Schema.optional(
    Text.pipe(Schema.pattern(/^\d{4}$/, { message: () => "mcc must be four digits" }))
  ).annotations({ description: "The merchant category code (ISO 18245), four digits" }),
  fee_bps: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.between(0, 10_000))).annotations({
    description: "The platform's fee on each payment, in basis points: 0 to 10000 (100 = 1%, the default)"
  }),
  outlets: Schema.optional(Schema.Array(Schema.Struct({ name: named("The outlet's name") }))).annotations({
    description: "Outlets to open with it, numbered from 1 in this order"
  })
})

export const CreateKey = Body({
  environment: Schema.propertySignature(Ids.Environment).annotations({
    description: "The environment the key works in"
  }),
  kind: Schema.optional(Auth.KeyKind).annotations({ description: "`secret` (default) or `publishable`" }),
  scopes: Schema.optional(Schema.Array(Auth.Scope)).annotations({
    description: "What the key may do; by default every scope its kind allows"
  })
})

const KeyId = Text.annotations({ description: "The key's id, by which it is revoked" })

export const KeyCreated = Schema.Struct({
  id: KeyId,
  key: Text.annotations({ description: "The key itself (`sk_test_...`, `pk_live_...`), shown only here" }),
  environment: Ids.Environment,
  kind: Auth.KeyKind,
  scopes: Scopes
})

export const KeyRead = Schema.Struct({
  id: KeyId,
  prefix: Text.annotations({ description: "The key's first characters: the key itself is shown only once" }),
  environment: Ids.Environment,
  kind: Auth.KeyKind,
  scopes: Scopes,
  createdAt: CreatedAt,
  revokedAt: RevokedAt
}).annotations({ identifier: "OpsKey", description: "A merchant's API key, without the key itself" })

export const OAuthClientRead = Schema.Struct({
  client_id: Text.annotations({
    description: "The client's id, sent with its secret to `POST /oauth/token`"
  }),
  name: Schema.NullOr(Text).annotations({ description: "The operator's name for it; `null` if none" }),
  environment: Ids.Environment,
  scopes: Schema.Array(Auth.Scope).annotations({ description: "The most its tokens may do" }),
  createdAt: CreatedAt,
  revokedAt: RevokedAt
}).annotations({ identifier: "OpsOAuthClient", description: "A client of the client credentials grant" })

export const OAuthClientCreated = Schema.Struct({
  ...OAuthClientRead.fields,
  client_secret: Text.annotations({ description: "Shown only here; stored as a keyed hash" })
}).annotations({ identifier: "OpsOAuthClientCreated" })

export const CreateOAuthClient = Body({
  environment: Schema.propertySignature(Ids.Environment).annotations({
    description: "The environment its tokens work in"
  }),
  scopes: Schema.propertySignature(Schema.Array(Auth.Scope).pipe(Schema.minItems(1))).annotations({
    description: "The most its tokens may do: at least one scope"
  }),
  name: optionalNullable(Text.pipe(Schema.minLength(1), Schema.maxLength(255))).annotations({
    description: "The operator's name for it"
  })
})

const TimeZoneRead = Text.annotations({
  description: "The customer's IANA time zone, which sets the mandate period boundaries"
})

export const CustomerRead = Schema.Struct({
  id: Ids.CustomerId,
  environment: Ids.Environment,
  phone: Text.annotations({ description: "The wallet's phone number, as stored" }),
  name: Schema.NullOr(Text).annotations({ description: "The customer's name; `null` if none was given" }),
  balance: Laari("The wallet's balance in laari"),
  walletLimit: Schema.NullOr(Laari("The largest payment the wallet allows, in laari")).annotations({
    description: "The largest payment the wallet allows, in laari; `null`: no limit"
  }),
  frozen: Schema.Boolean.annotations({ description: "`true`: the wallet refuses every payment" }),
  blockedByRules: Schema.Boolean.annotations({
    description: "`true`: the wallet's rules block every payment"
  }),
  timeZone: TimeZoneRead
}).annotations({ identifier: "OpsCustomer", description: "A wallet holder in one environment" })

export const CreateCustomer = Body({
  environment: Schema.propertySignature(Ids.Environment).annotations({
    description: "The environment the wallet is in"
  }),
  phone: Schema.propertySignature(Phone.Phone).annotations({ description: "The wallet's phone number" }),
  name: optionalNullable(Text.pipe(Schema.maxLength(255))).annotations({
    description: "The customer's name"
  }),
  balance: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative())).annotations({
    description: "The wallet's opening balance in laari, default 0"
  }),
  time_zone: Schema.optional(TimeZone).annotations({
    description: "The customer's IANA time zone, default Indian/Maldives"
  })
})

export const NotificationRead = Schema.Struct({
  id: Text.annotations({ description: "The notification's id" }),
  kind: Text.annotations({
    description: "What it is about: `payment`, `one_time_code`, `mandate.approved`..."
  }),
  title: Text.annotations({ description: "Its title, as the wallet app shows it" }),
  body: Text.annotations({ description: "Its text, as the wallet app shows it" }),
  data: Schema.Record({ key: Text, value: Schema.Unknown.annotations({ jsonSchema: {} }) }).annotations({
    description:
      "Structured details for the app (amounts, ids, `merchant_name`, `plan_name`); a one-time code in `code`"
  }),
  createdAt: Timestamp.annotations({ description: "When it was sent: Maldives time (+05:00), whole seconds" })
})

export const CodeRead = Schema.Struct({
  code: Text.annotations({ description: "The one-time code" }),
  subject_kind: Text.annotations({ description: "What the code approves: mandate, checkout or wallet" }),
  subject_id: Text.annotations({
    description: "The id of the mandate, checkout session or wallet it approves"
  }),
  expires_at: Timestamp.annotations({ description: "When the code stops working: Maldives time (+05:00)" })
}).annotations({ identifier: "OpsCode" })

/** The `404` of the codes endpoint on a service not started for development; the CLI recognizes it. */
export const codesNeedDevelopment =
  "Customers' one-time codes are readable only on a development start: this endpoint exists only with LAARI_DEVELOPMENT=true"

export const ClockRead = Schema.Struct({
  now: Timestamp.annotations({
    description: "The service's current time: Maldives time (+05:00), whole seconds"
  }),
  mode: Schema.Literal("system", "manual").annotations({
    description:
      "`system`: the machine's clock; `manual`: moved only by `POST /ops/clock/advance` (`LAARI_CLOCK=manual`)"
  })
})

// Path and query fields are described at the property, so a refusal keeps the words of their rules.
const IdPath = (description: string) =>
  Schema.Struct({ id: Schema.propertySignature(PathSegment).annotations({ description }) })
/** How many rows an operator's list answers: 1 to 1000. */
const Limit = Schema.optional(
  Schema.NumberFromString.pipe(Schema.int(), Schema.between(1, 1000))
).annotations({
  description: "How many to return: 1 to 1000, default 100"
})
const merchantId = Uuid.annotations({ description: "The merchant's id" })
const MerchantPath = Schema.Struct({ id: merchantId })

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
      .setPayload(Schema.Struct({ name: named("The outlet's name, the default title of its QR codes") }))
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
      .setPath(
        Schema.Struct({
          id: merchantId,
          key: Schema.propertySignature(PathSegment).annotations({ description: "The key's id" })
        })
      )
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
      .setPath(
        Schema.Struct({
          id: merchantId,
          client: Schema.propertySignature(PathSegment).annotations({
            description: "The client's `client_id`"
          })
        })
      )
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
          mandates_live: Schema.optional(Schema.Boolean).annotations({
            description: "`true`: live keys may create mandates; absent: unchanged"
          }),
          subscriptions_live: Schema.optional(Schema.Boolean).annotations({
            description: "`true`: live keys may sell subscriptions; absent: unchanged"
          })
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
      .setPath(
        Schema.Struct({
          id: Uuid.annotations({ description: "The customer's id" })
        })
      )
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
          phone: Schema.propertySignature(Text.pipe(Schema.minLength(1))).annotations({
            description: "The customer's wallet phone number"
          }),
          environment: Schema.optional(Ids.Environment).annotations({
            description: "Only codes of this environment"
          })
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
      .setPath(IdPath("The mandate's id"))
      .addSuccess(MandateRead)
      .annotate(OpenApi.Summary, "Suspend a mandate")
      .annotate(OpenApi.Description, "An active mandate stops being chargeable.")
  )
  .add(
    Problems.post("cancelSubscription", "/ops/subscriptions/:id/cancel")
      .setPath(IdPath("The subscription's id"))
      .addSuccess(SubscriptionRead)
      .annotate(OpenApi.Summary, "Cancel a subscription")
      .annotate(OpenApi.Description, "Ends a subscription as the operator (`OPS`).")
  )
  .add(
    HttpApiEndpoint.get("events", "/ops/events")
      .setUrlParams(
        Schema.Struct({
          merchant_id: Schema.optional(Uuid).annotations({
            description: "Only this merchant's events"
          }),
          type: Schema.optional(Text).annotations({ description: "Only events of this type" }),
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
          to: Schema.optional(Text).annotations({
            description: "The time to move to: a later ISO 8601 date-time with a numeric offset"
          }),
          by_seconds: Schema.optional(Schema.Number.pipe(Schema.int(), Schema.nonNegative())).annotations({
            description: "How far to move instead, in seconds"
          })
        })
      )
      .addSuccess(
        Schema.extend(
          ClockRead,
          Schema.Struct({ processed: WholeNumber("How many pieces of work fell due and were run") })
        )
      )
      .annotate(OpenApi.Summary, "Advance the manual clock")
      .annotate(
        OpenApi.Description,
        "Moves a manual clock (`LAARI_CLOCK=manual`) forward and runs the work that fell due; `processed` counts it."
      )
  )
  .addError(Problems.NotFoundProblem)
  .addError(Problems.ConflictProblem)
  .addError(MandatesProblems.MandateNotFound)
  .addError(MandatesProblems.MandateNotSuspendable)
  .addError(SubscriptionsProblems.SubscriptionNotFound)
  .addError(SubscriptionsProblems.SubscriptionNotCancellable)
  .pipe(Declare.operator({ title: "Operations" })) {}
