/**
 * Teams, the half of `People` the team page, the seed and the CLI call: accounts made for someone,
 * invitations and their acceptance, roles and removals. A team change is decided on the team locked
 * (`lockTeam`), so two concurrent demotions cannot both leave it without an owner.
 */
import { DateTime, Effect } from "effect"
import { InvalidRequest } from "../kernel/Errors.js"
import type { MerchantId } from "../kernel/Ids.js"
import { registeredMerchant } from "../directory/MerchantsStore.js"
import type { PeopleService } from "./People.js"
import { invitationOf, notMember, type Parts, peopleChange, userOf } from "./PeopleParts.js"
import * as Person from "./Person.js"
import type { Account, StoredInvitation } from "./PeopleStore.js"
import { type MerchantRole, requiresTwoFactor } from "./Role.js"

type Teams = Pick<
  PeopleService,
  | "createMember"
  | "createOperator"
  | "members"
  | "invite"
  | "invitations"
  | "revokeInvitation"
  | "invitation"
  | "accept"
  | "setRole"
  | "removeMember"
>

export const make = (parts: Parts): Teams => {
  const { store, credentials, notices, tx, crypto, audit, merchants, now, refused } = parts
  const { newAccount, ensureAccount, checkedEmail, noteCreated } = parts

  const createMember: PeopleService["createMember"] = (input) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const email = yield* checkedEmail(input.email)
        const merchant = yield* merchants.get(input.merchantId)
        if (merchant === undefined) return yield* InvalidRequest.field("merchant_id", "No such merchant.")
        const moment = yield* now
        yield* store.lockTeam(merchant.id)
        const made = yield* ensureAccount(email, moment)
        const added = yield* store.addMembership({
          userId: made.account.id,
          merchantId: merchant.id,
          role: input.role,
          createdAt: moment
        })
        if (!added) return yield* notMember()
        yield* noteCreated(merchant.id, made)
        yield* audit.note(
          peopleChange(
            merchant.id,
            "member.create",
            { type: "member", id: made.account.id },
            { email, role: input.role }
          )
        )
        return { user: userOf(made.account), password: made.password }
      })
    )

  const createOperator: PeopleService["createOperator"] = (input) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const email = yield* checkedEmail(input.email)
        const made = yield* ensureAccount(email, yield* now)
        const before = made.account.operatorRole
        if (before !== input.role) yield* store.setOperatorRole(made.account.id, input.role)
        yield* noteCreated(null, made)
        if (before !== input.role)
          yield* audit.note(
            peopleChange(
              null,
              "operator.role_change",
              { type: "user", id: made.account.id },
              { email, from: before, to: input.role }
            )
          )
        return { user: { ...userOf(made.account), operatorRole: input.role }, password: made.password }
      })
    )

  const invite: PeopleService["invite"] = (input) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const email = yield* checkedEmail(input.email)
        const team = yield* store.lockTeam(input.merchantId)
        const problem = Person.invitationProblem(team.find((m) => m.userId === input.by)?.role, input.role)
        if (problem !== undefined) return yield* new Person.TeamRuleBroken({ message: problem })
        const existing = yield* store.userByEmail(email)
        if (existing !== undefined && team.some((m) => m.userId === existing.id)) return yield* notMember()
        const merchant = yield* registeredMerchant(merchants, input.merchantId)
        const moment = yield* now
        const token = yield* credentials.newToken
        const stored: StoredInvitation = {
          id: yield* crypto.uuid,
          merchantId: merchant.id,
          email,
          role: input.role,
          invitedBy: input.by,
          createdAt: moment,
          expiresAt: DateTime.add(moment, { hours: Person.InvitationHours }),
          acceptedAt: null,
          revokedAt: null,
          tokenHash: yield* credentials.digest(token)
        }
        yield* store.insertInvitation(stored)
        yield* notices.invitation({
          invitationId: stored.id,
          merchantId: merchant.id,
          merchantName: merchant.name,
          email,
          role: input.role,
          link: input.link(token),
          expiresAt: stored.expiresAt
        })
        yield* audit.note(
          peopleChange(
            merchant.id,
            "member.invite",
            { type: "invitation", id: stored.id },
            { email, role: input.role }
          )
        )
        return { invitation: invitationOf(stored), token }
      })
    )

  const revokeInvitation: PeopleService["revokeInvitation"] = (merchantId, invitationId) =>
    tx.withTransaction(
      Effect.gen(function* () {
        if (!(yield* store.revokeInvitation(merchantId, invitationId.toLowerCase(), yield* now)))
          return yield* new Person.PersonNotFound({ message: "No such invitation." })
        yield* audit.note(
          peopleChange(merchantId.toLowerCase(), "invitation.revoke", {
            type: "invitation",
            id: invitationId.toLowerCase()
          })
        )
      })
    )

  /** The pending invitation a token names at `moment`. */
  const pending = (token: string, moment: DateTime.Utc) =>
    Effect.map(Effect.flatMap(credentials.digest(token), store.invitationByToken), (found) =>
      found !== undefined && Person.invitationState(found, moment) === "pending" ? found : undefined
    )

  const invitation: PeopleService["invitation"] = (token) =>
    Effect.gen(function* () {
      const found = yield* pending(token, yield* now)
      if (found === undefined) return undefined
      return {
        invitation: invitationOf(found),
        existing: (yield* store.userByEmail(found.email)) !== undefined
      }
    })

  /** The account `email` has, proven by `password`; `SignInRefused` when the password is not its. */
  const proven = (account: Account, password: string) =>
    Effect.flatMap(credentials.verifyPassword(account.passwordHash, password), (right) =>
      right ? Effect.succeed(account) : refused()
    )

  const accept: PeopleService["accept"] = (token, password) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const moment = yield* now
        const found = yield* pending(token, moment)
        if (found === undefined || !(yield* store.acceptInvitation(found.id, moment)))
          return yield* new Person.PersonNotFound({ message: "This invitation is no longer valid." })
        let account = yield* store.userByEmail(found.email, { forUpdate: true })
        if (account !== undefined) yield* proven(account, password)
        else {
          const problem = credentials.passwordProblem(password, found.email)
          if (problem !== undefined) return yield* InvalidRequest.field("password", problem)
          const made = yield* newAccount(found.email, password, false, moment)
          if (yield* store.insertUser(made)) {
            account = made
            yield* noteCreated(found.merchantId, { account, password })
          } else {
            // Made meanwhile by another invitation's acceptance: it must be this person's.
            const other = yield* store.userByEmail(found.email, { forUpdate: true })
            if (other === undefined)
              return yield* Effect.dieMessage(`no account for ${found.email} after a conflict`)
            account = yield* proven(other, password)
          }
        }
        yield* store.addMembership({
          userId: account.id,
          merchantId: found.merchantId,
          role: found.role,
          createdAt: moment
        })
        yield* audit.note(
          peopleChange(
            found.merchantId,
            "invitation.accept",
            { type: "invitation", id: found.id },
            {
              email: found.email,
              role: found.role
            }
          )
        )
        return userOf(account)
      })
    )

  /** The team change decided on the team locked: the member's membership, or the rule it breaks. */
  const teamChange = (
    input: { readonly merchantId: MerchantId; readonly userId: Person.UserId; readonly by: Person.UserId },
    next: MerchantRole | null
  ) =>
    Effect.gen(function* () {
      const team = yield* store.lockTeam(input.merchantId)
      const member = team.find((m) => m.userId === input.userId)
      if (member === undefined)
        return yield* new Person.PersonNotFound({ message: "No such member of this team." })
      const problem = Person.teamChangeProblem({
        actor: team.find((m) => m.userId === input.by)?.role,
        self: input.by === input.userId,
        current: member.role,
        next,
        owners: Person.owners(team)
      })
      if (problem !== undefined) return yield* new Person.TeamRuleBroken({ message: problem })
      return member
    })

  /** Ends the member's dashboard sessions on that team. */
  const endDashboardSessions = (member: Person.Membership) =>
    Effect.flatMap(now, (moment) =>
      store.endSessions(member.userId, moment, { merchantId: member.merchantId, console: "dashboard" })
    )

  const setRole: PeopleService["setRole"] = (input) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const member = yield* teamChange(input, input.role)
        if (member.role === input.role) return
        yield* store.setRole(member.merchantId, member.userId, input.role)
        const account = yield* store.userById(member.userId)
        // A role that needs a second factor the account has not got: signed in again, to enrol.
        if (account !== undefined && !account.twoFactor && requiresTwoFactor(input.role))
          yield* endDashboardSessions(member)
        yield* audit.note(
          peopleChange(
            member.merchantId,
            "member.role_change",
            { type: "member", id: member.userId },
            {
              from: member.role,
              to: input.role
            }
          )
        )
      })
    )

  const removeMember: PeopleService["removeMember"] = (input) =>
    tx.withTransaction(
      Effect.gen(function* () {
        const member = yield* teamChange(input, null)
        yield* store.removeMembership(member.merchantId, member.userId)
        yield* endDashboardSessions(member)
        yield* audit.note(
          peopleChange(
            member.merchantId,
            "member.remove",
            { type: "member", id: member.userId },
            { role: member.role }
          )
        )
      })
    )

  return {
    createMember,
    createOperator,
    members: (merchantId) => store.members(merchantId),
    invite,
    invitations: (merchantId) => store.invitations(merchantId),
    revokeInvitation,
    invitation,
    accept,
    setRole,
    removeMember
  }
}
