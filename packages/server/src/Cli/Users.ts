/**
 * `laari users`: people through the running service's operator API. `create` makes an account for a
 * member of a merchant's team (or of the provider's staff) and prints its one-time password once; `list`
 * shows a team; `invitations` reads the pending invitations' links on a development start, where no
 * notification channel may be there to send them.
 */
import { Command, Options } from "@effect/cli"
// Core's modules one by one: its index loads the whole domain, which no command here needs.
import * as Role from "@laari/core/people/Role"
import { Effect, Option } from "effect"
import * as Remote from "./Remote.js"

// The operator API's definition, loaded only by `invitations`, which reads its refusal text.
const loadUsersApi = Effect.promise(() => import("../Ops/UsersApi.js"))

const merchant = Options.text("merchant").pipe(
  Options.withDescription("The merchant's id (laari merchants list)")
)

const create = Command.make(
  "create",
  {
    ...Remote.operator,
    email: Options.text("email").pipe(Options.withDescription("The person's email address, to sign in with")),
    merchant: merchant.pipe(
      Options.withDescription("The merchant whose team they join (its id), with --role"),
      Options.optional
    ),
    role: Options.choice("role", Role.merchantRoles).pipe(
      Options.withDescription("Their role in the team: owner, admin, developer, finance, support or viewer"),
      Options.optional
    ),
    operatorRole: Options.choice("operator-role", Role.operatorRoles).pipe(
      Options.withDescription(
        "Instead of --merchant and --role, for the provider's staff: ops_admin, ops_support or ops_risk"
      ),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      const staff = Option.isSome(o.operatorRole)
      if (staff === (Option.isSome(o.merchant) || Option.isSome(o.role)))
        return yield* Effect.fail(
          new Remote.Refusal(
            staff
              ? "Give either --merchant and --role (a merchant's team) or --operator-role (the provider's staff), not both."
              : "Say whose: --merchant <id> --role <role> for a merchant's team, or --operator-role <role> for the provider's staff."
          )
        )
      if (!staff && (Option.isNone(o.merchant) || Option.isNone(o.role)))
        return yield* Effect.fail(new Remote.Refusal("Give both --merchant <id> and --role <role>."))
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const created = yield* client.opsUsers.createUser({
        payload: {
          email: o.email,
          merchant_id: Option.getOrUndefined(o.merchant),
          role: Option.getOrUndefined(o.role),
          operator_role: Option.getOrUndefined(o.operatorRole)
        }
      })
      const where =
        created.merchant_id === null
          ? `${created.user.operator_role} on the provider's staff`
          : `${created.role} of merchant ${created.merchant_id}`
      yield* Remote.print(o.json, created, () => [
        `${created.user.email}: ${where}`,
        ...(created.password === null
          ? ["  The account already existed: it keeps its own password."]
          : [
              `  one-time password: ${created.password}`,
              "  Shown once: it must be changed at the first sign-in."
            ])
      ])
    }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "Add a person to a merchant's team (or the provider's staff), making the account with a one-time password if new"
  )
)

const list = Command.make("list", { ...Remote.operator, merchant }, (o) =>
  Effect.gen(function* () {
    const client = yield* Remote.opsClient(o.url, o.opsToken)
    const team = yield* client.opsUsers.listUsers({ urlParams: { merchant_id: o.merchant } })
    yield* Remote.print(o.json, team, () =>
      team.length === 0
        ? [`No members: laari users create --merchant ${o.merchant} --email <email> --role owner`]
        : team.map(
            (m) => `${m.email}  ${m.role}  two-factor ${m.two_factor ? "on" : "off"}  since ${m.joined_at}`
          )
    )
  }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("A merchant's team: each member's role and second factor, owners first"))

const invitations = Command.make("invitations", { ...Remote.operator, merchant }, (o) =>
  Effect.gen(function* () {
    const { invitationsNeedDevelopment } = yield* loadUsersApi
    const client = yield* Remote.opsClient(o.url, o.opsToken)
    const pending = yield* client.opsUsers.invitations({ urlParams: { merchant_id: o.merchant } }).pipe(
      Effect.catchIf(
        // A `Problem` is failed by the client's transform, outside its typed errors.
        (e: unknown) =>
          e instanceof Remote.Problem && e.status === 404 && e.body.message === invitationsNeedDevelopment,
        () =>
          Effect.fail(
            new Remote.Refusal(
              `No invitations: the service at ${o.url} is not in development mode. Start it with LAARI_DEVELOPMENT=true (e.g. LAARI_DEVELOPMENT=true pnpm start) to read invitations' links; otherwise they go out through LAARI_NOTIFY_URL.`
            )
          )
      )
    )
    yield* Remote.print(o.json, pending, () =>
      pending.length === 0
        ? [`No pending invitation for merchant ${o.merchant}.`]
        : pending.map((i) => `${i.email}  ${i.role}  expires ${i.expires_at}\n  ${i.link}`)
    )
  }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "A merchant's pending invitations with their links, newest first (a service started with LAARI_DEVELOPMENT=true)"
  )
)

export const users = Command.make("users").pipe(
  Command.withDescription(
    "People: create team members and staff, list a team, read invitations (development)"
  ),
  Command.withSubcommands([create, list, invitations])
)
