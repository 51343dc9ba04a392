/**
 * People from the operator API: an account made for a member of a merchant's team or of the provider's
 * staff, with a one-time password to change at first sign-in (`laari users create`); a merchant's team
 * (`laari users list`); and, on a development start only, the invitations still waiting with their links
 * (`laari users invitations`), which otherwise leave only through the notification channel.
 */
import * as HttpApiEndpoint from "@effect/platform/HttpApiEndpoint"
import * as HttpApiGroup from "@effect/platform/HttpApiGroup"
import * as OpenApi from "@effect/platform/OpenApi"
import { Ids, Person, Role } from "@laari/core"
import { Schema } from "effect"
import * as Declare from "../Http/Declare.js"
import { Text, Timestamp, Uuid } from "../Http/Fields.js"
import * as Problems from "../Http/Problems.js"

// Request fields are described at the property: a description on the schema would replace the words
// of its rule in a refusal.
const Email = Text.pipe(
  Schema.filter((s) => Person.isEmail(Person.normalEmail(s)), {
    message: () => "must be an email address (name@example.mv), at most 254 characters"
  })
)

export const CreateUser = Schema.Struct({
  email: Schema.propertySignature(Email).annotations({
    description: "The person's email address, which they sign in with (kept lower-cased)"
  }),
  merchant_id: Schema.optional(Uuid).annotations({
    description: "The merchant whose team they join, with `role`; absent for the provider's staff"
  }),
  role: Schema.optional(Role.MerchantRole).annotations({
    description:
      "Their role in the merchant's team, with `merchant_id`: `owner`, `admin`, `developer`, `finance`, `support` or `viewer`"
  }),
  operator_role: Schema.optional(Role.OperatorRole).annotations({
    description:
      "Instead of `merchant_id` and `role`: their role on the provider's staff, in the operator console: `ops_admin`, `ops_support` or `ops_risk`"
  })
}).annotations({ parseOptions: { onExcessProperty: "error", errors: "all" } })

export const UserRead = Schema.Struct({
  id: Person.UserId,
  email: Text.annotations({ description: "The email address the person signs in with, lower-cased" }),
  must_change_password: Schema.Boolean.annotations({
    description: "`true`: the account has a one-time password, to be changed at its first sign-in"
  }),
  two_factor: Schema.Boolean.annotations({
    description: "Whether an authenticator app (TOTP) is enrolled"
  }),
  operator_role: Schema.NullOr(Role.OperatorRole).annotations({
    description: "Their role on the provider's staff; `null` for a member of merchants' teams only"
  })
}).annotations({ identifier: "OpsUser", description: "A person's account" })

export const UserCreated = Schema.Struct({
  user: UserRead,
  merchant_id: Schema.NullOr(Ids.MerchantId).annotations({
    description: "The merchant whose team they joined; `null` for the provider's staff"
  }),
  role: Schema.NullOr(Role.MerchantRole).annotations({
    description: "Their role in that team; `null` for the provider's staff"
  }),
  password: Schema.NullOr(Text).annotations({
    description:
      "The one-time password, shown only here, to be changed at first sign-in; `null` when the email already had an account, which keeps its own"
  })
}).annotations({ identifier: "OpsUserCreated" })

export const MemberRead = Schema.Struct({
  user_id: Person.UserId,
  email: Text.annotations({ description: "The member's email address" }),
  role: Role.MerchantRole,
  two_factor: Schema.Boolean.annotations({ description: "Whether the member has an authenticator enrolled" }),
  joined_at: Timestamp.annotations({
    description: "When they joined the team: Maldives time (+05:00), whole seconds"
  })
}).annotations({ identifier: "OpsMember", description: "A member of a merchant's team" })

export const InvitationRead = Schema.Struct({
  id: Text.annotations({ description: "The invitation's id" }),
  email: Text.annotations({ description: "The address it was sent to" }),
  role: Role.MerchantRole,
  link: Text.annotations({
    description: "The link that accepts it, its token included: good once, until `expires_at`"
  }),
  expires_at: Timestamp.annotations({
    description: "When the link stops working: Maldives time (+05:00), whole seconds"
  })
}).annotations({ identifier: "OpsInvitation", description: "An invitation not yet accepted, with its link" })

/** The `404` of the invitations endpoint on a service not started for development; the CLI recognizes it. */
export const invitationsNeedDevelopment =
  "Invitations' links are readable only on a development start: this endpoint exists only with LAARI_DEVELOPMENT=true"

// Query fields are described at the property, so a refusal keeps the words of their rules.
const MerchantQuery = Schema.Struct({
  merchant_id: Schema.propertySignature(Uuid).annotations({ description: "The merchant's id" })
})

export class OpsUsersApi extends HttpApiGroup.make("opsUsers")
  .add(
    Problems.post("createUser", "/ops/users")
      .setPayload(CreateUser)
      .addSuccess(UserCreated, { status: 201 })
      .annotate(OpenApi.Summary, "Create a user")
      .annotate(
        OpenApi.Description,
        "Adds `email` to a merchant's team with `role` (`merchant_id` and `role`), or to the provider's staff (`operator_role`), making the account if it is new: its one-time password is answered once and must be changed at first sign-in. An existing account keeps its password (`password` is `null`)."
      )
  )
  .add(
    HttpApiEndpoint.get("listUsers", "/ops/users")
      .setUrlParams(MerchantQuery)
      .addSuccess(Schema.Array(MemberRead))
      .annotate(OpenApi.Summary, "A merchant's team")
      .annotate(
        OpenApi.Description,
        "Its members with their roles and second factor: owners first, then by email."
      )
  )
  .add(
    HttpApiEndpoint.get("invitations", "/ops/users/invitations")
      .setUrlParams(MerchantQuery)
      .addSuccess(Schema.Array(InvitationRead))
      .annotate(OpenApi.Summary, "A merchant's pending invitations with their links (development)")
      .annotate(
        OpenApi.Description,
        "The links the notification channel sends, newest first. Only on a development start (LAARI_DEVELOPMENT=true, or LAARI_CLOCK=manual); otherwise 404."
      )
  )
  .addError(Problems.NotFoundProblem)
  .pipe(Declare.operator({ title: "Operations: users" })) {}
