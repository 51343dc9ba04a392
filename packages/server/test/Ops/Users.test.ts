/**
 * People from the operator API over real HTTP on PGlite: `POST /ops/users` makes a team member's or a
 * staff member's account with a one-time password (none for an account that exists), refuses what is not
 * a person with 422 and an unknown merchant with 404; `GET /ops/users` lists a team; and
 * `GET /ops/users/invitations` answers the pending invitations' links on a development start only, 404
 * elsewhere, as customers' codes are. Every endpoint wants the operator token.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { invitationsNeedDevelopment } from "../../src/Ops/UsersApi.js"
import * as OpsPeople from "../support/OpsPeople.js"
import type * as TestServer from "../support/TestServer.js"

const { merchant } = OpsPeople
let development: TestServer.LocalTestServer
let production: TestServer.LocalTestServer
let pair: OpsPeople.Pair | undefined

beforeAll(async () => {
  pair = await OpsPeople.start()
  ;({ development, production } = pair)
}, 180_000)
afterAll(() => OpsPeople.close(pair))

interface Created {
  readonly user: {
    readonly id: string
    readonly email: string
    readonly must_change_password: boolean
    readonly two_factor: boolean
    readonly operator_role: string | null
  }
  readonly merchant_id: string | null
  readonly role: string | null
  readonly password: string | null
}

const create = async (server: TestServer.TestServer, body: unknown) => {
  const res = await server.ops<Created>("POST", "/ops/users", body)
  expect(res.status, res.text).toBe(201)
  return res.body
}

/** A refusal's field errors, by field. */
const refused = async (body: unknown) => {
  const res = await development.ops("POST", "/ops/users", body)
  expect(res.status, res.text).toBe(422)
  return (res.body.errors as ReadonlyArray<{ field: string }>).map((e) => e.field)
}

describe("people from the operator API", () => {
  it("a team member's account: a one-time password, to change at first sign-in; listed with the team", async () => {
    const id = await merchant(development, "Ops Users Cafe")
    const owner = await create(development, { merchant_id: id, email: "Owner@Cafe.mv ", role: "owner" })
    expect(owner).toEqual({
      user: {
        id: expect.any(String),
        email: "owner@cafe.mv",
        must_change_password: true,
        two_factor: false,
        operator_role: null
      },
      merchant_id: id,
      role: "owner",
      password: expect.any(String)
    })
    expect(owner.password!.length).toBeGreaterThanOrEqual(12)
    const finance = await create(development, { merchant_id: id, email: "books@cafe.mv", role: "finance" })
    expect(finance.password).not.toBe(owner.password)

    const team = await development.ops("GET", `/ops/users?merchant_id=${id}`)
    expect(team.status, team.text).toBe(200)
    expect(team.body).toEqual([
      {
        user_id: owner.user.id,
        email: "owner@cafe.mv",
        role: "owner",
        two_factor: false,
        joined_at: expect.any(String)
      },
      {
        user_id: finance.user.id,
        email: "books@cafe.mv",
        role: "finance",
        two_factor: false,
        joined_at: expect.any(String)
      }
    ])
    expect(team.text).not.toContain(owner.password)
  })

  it("an email that has an account joins another team with no new password; staff get an operator role", async () => {
    const [a, b] = await Promise.all([
      merchant(development, "First Shop"),
      merchant(development, "Second Shop")
    ])
    const first = await create(development, { merchant_id: a, email: "both@shops.mv", role: "developer" })
    const again = await create(development, { merchant_id: b, email: "BOTH@shops.mv", role: "viewer" })
    expect(again).toMatchObject({ merchant_id: b, role: "viewer", password: null })
    expect(again.user.id).toBe(first.user.id)
    const team = await development.ops("GET", `/ops/users?merchant_id=${b}`)
    expect(team.body.map((m: { email: string; role: string }) => [m.email, m.role])).toEqual([
      ["both@shops.mv", "viewer"]
    ])

    const staff = await create(development, { email: "support@provider.mv", operator_role: "ops_support" })
    expect(staff).toMatchObject({
      user: { email: "support@provider.mv", operator_role: "ops_support", must_change_password: true },
      merchant_id: null,
      role: null,
      password: expect.any(String)
    })
  })

  it("refuses what is not a person with 422, naming the field; an unknown merchant is 404", async () => {
    const id = await merchant(development, "Strict Shop")
    expect(await refused({ merchant_id: id, email: "not an email", role: "owner" })).toEqual(["email"])
    expect(await refused({ merchant_id: id, email: "a@b.mv", role: "cashier" })).toEqual(["role"])
    expect(await refused({ merchant_id: "x", email: "a@b.mv", role: "owner" })).toEqual(["merchant_id"])
    expect(await refused({ email: "a@b.mv", operator_role: "root" })).toEqual(["operator_role"])
    expect(await refused({ merchant_id: id, email: "a@b.mv", role: "owner", name: "A" })).toEqual(["name"])
    // Exactly one of a team (merchant and role) or the staff (operator role).
    expect(await refused({ email: "a@b.mv" })).toEqual(["merchant_id", "role"])
    expect(await refused({ email: "a@b.mv", role: "owner" })).toEqual(["merchant_id"])
    expect(await refused({ merchant_id: id, email: "a@b.mv" })).toEqual(["role"])
    expect(
      await refused({ merchant_id: id, email: "a@b.mv", role: "owner", operator_role: "ops_admin" })
    ).toEqual(["operator_role"])
    // Nothing was made by a refusal.
    expect((await development.ops("GET", `/ops/users?merchant_id=${id}`)).body).toEqual([])

    const unknown = "00000000-0000-4000-8000-000000000000"
    const made = await development.ops("POST", "/ops/users", {
      merchant_id: unknown,
      email: "a@b.mv",
      role: "owner"
    })
    expect(made.status, made.text).toBe(404)
    expect(made.body.message).toBe("Merchant not found")
    expect((await development.ops("GET", `/ops/users?merchant_id=${unknown}`)).status).toBe(404)
    expect((await development.ops("GET", `/ops/users/invitations?merchant_id=${unknown}`)).status).toBe(404)
    expect((await development.ops("GET", "/ops/users")).status).toBe(422)
  })

  it("on a development start, the pending invitations with the links they were sent with", async () => {
    const id = await merchant(development, "Inviting Shop")
    expect((await development.ops("GET", `/ops/users/invitations?merchant_id=${id}`)).body).toEqual([])
    const owner = await create(development, { merchant_id: id, email: "boss@inviting.mv", role: "owner" })
    const sent = await OpsPeople.invite(development, {
      merchantId: id,
      email: "cashier@inviting.mv",
      role: "support",
      by: owner.user.id
    })
    const res = await development.ops("GET", `/ops/users/invitations?merchant_id=${id}`)
    expect(res.status, res.text).toBe(200)
    expect(res.body).toEqual([
      {
        id: sent.invitation.id,
        email: "cashier@inviting.mv",
        role: "support",
        link: OpsPeople.link(sent.token),
        expires_at: expect.stringMatching(/\+05:00$/)
      }
    ])
    // Another merchant's invitations are not this one's.
    const other = await merchant(development, "Quiet Shop")
    expect((await development.ops("GET", `/ops/users/invitations?merchant_id=${other}`)).body).toEqual([])
  })

  it("elsewhere the invitations' endpoint does not exist (404), as customers' codes do not", async () => {
    const id = await merchant(production, "Production Shop")
    const res = await production.ops("GET", `/ops/users/invitations?merchant_id=${id}`)
    expect(res.status).toBe(404)
    expect(res.body.message).toBe(invitationsNeedDevelopment)
    expect(invitationsNeedDevelopment).toContain("only with LAARI_DEVELOPMENT=true")
    // The rest of the people's endpoints are there.
    expect((await production.ops("GET", `/ops/users?merchant_id=${id}`)).status).toBe(200)
  })

  it("every endpoint wants the operator token", async () => {
    const id = await merchant(development, "Guarded Shop")
    for (const [method, path, body] of [
      ["POST", "/ops/users", { merchant_id: id, email: "x@guarded.mv", role: "owner" }],
      ["GET", `/ops/users?merchant_id=${id}`, undefined],
      ["GET", `/ops/users/invitations?merchant_id=${id}`, undefined]
    ] as const) {
      expect((await development.request(method, path, { body })).status, `${method} ${path}`).toBe(401)
      expect((await development.request(method, path, { body, key: "ops_wrong" })).status).toBe(401)
    }
    expect((await development.ops("GET", `/ops/users?merchant_id=${id}`)).body).toEqual([])
  })
})
