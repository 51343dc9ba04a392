/**
 * Handlers of the operator API's users: accounts made through `People`, a merchant's team, and the
 * pending invitations' links on a development start.
 */
import { Errors, Ids, Merchants, People } from "@laari/core"
import { Effect } from "effect"
import * as Operation from "../Http/Operation.js"
import * as Problems from "../Http/Problems.js"
import * as Notices from "../People/Notices.js"
import * as ServerConfig from "../Platform/Config.js"
import * as Json from "./Json.js"
import * as UsersApi from "./UsersApi.js"

/** A person is added either to a merchant's team or to the provider's staff: exactly one of the two. */
const target = (payload: typeof UsersApi.CreateUser.Type) => {
  const team = payload.merchant_id !== undefined || payload.role !== undefined
  if (team && payload.operator_role !== undefined)
    return Effect.fail(
      Errors.InvalidRequest.field(
        "operator_role",
        "give either `merchant_id` and `role` (a merchant's team) or `operator_role` (the provider's staff), not both"
      )
    )
  if (payload.operator_role !== undefined)
    return Effect.succeed({ _tag: "staff", role: payload.operator_role } as const)
  const why = team ? "is required for a merchant's team" : "is required (or `operator_role`, for the staff)"
  const missing = [
    ...(payload.merchant_id === undefined ? [{ field: "merchant_id", message: why }] : []),
    ...(payload.role === undefined ? [{ field: "role", message: why }] : [])
  ]
  if (payload.merchant_id === undefined || payload.role === undefined)
    return Effect.fail(Errors.InvalidRequest.of(missing))
  return Effect.succeed({
    _tag: "team",
    merchantId: Ids.MerchantId.make(payload.merchant_id),
    role: payload.role
  } as const)
}

export const OpsUsersLive = Operation.handlers(UsersApi.OpsUsersApi, (handlers) =>
  Effect.gen(function* () {
    const merchants = yield* Merchants.Merchants
    const people = yield* People.People
    // The same rule as customers' one-time codes: links are secrets a production service only sends.
    const showLinks = ServerConfig.codesVisible(yield* ServerConfig.ServerConfigTag)

    /** Fails `404` unless `id` is a merchant's. */
    const known = (id: string) =>
      Effect.flatMap(merchants.get(id), (m) =>
        m === undefined ? Effect.fail(new Problems.NotFound({ message: "Merchant not found" })) : Effect.void
      )

    return handlers
      .handle("createUser", ({ payload }) =>
        Effect.gen(function* () {
          const to = yield* target(payload)
          if (to._tag === "staff")
            return Json.userCreated(
              yield* people.createOperator({ email: payload.email, role: to.role }),
              undefined
            )
          yield* known(to.merchantId)
          const created = yield* people.createMember({
            merchantId: to.merchantId,
            email: payload.email,
            role: to.role
          })
          return Json.userCreated(created, to)
        })
      )
      .handle("listUsers", ({ urlParams }) =>
        Effect.gen(function* () {
          yield* known(urlParams.merchant_id)
          return (yield* people.members(Ids.MerchantId.make(urlParams.merchant_id))).map(Json.member)
        })
      )
      .handle("invitations", ({ urlParams }) =>
        Effect.gen(function* () {
          if (!showLinks)
            return yield* Effect.fail(new Problems.NotFound({ message: UsersApi.invitationsNeedDevelopment }))
          yield* known(urlParams.merchant_id)
          return (yield* Notices.pendingInvitations(Ids.MerchantId.make(urlParams.merchant_id))).map(
            Json.invitation
          )
        })
      )
  })
)
