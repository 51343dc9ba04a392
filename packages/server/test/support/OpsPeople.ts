/**
 * What the operator's people tests share: a service on a development start (a manual clock: one-time
 * codes and invitation links readable) beside one started as production runs (the system clock, no
 * LAARI_DEVELOPMENT), a merchant made over the operator API, and an invitation, which no operator
 * endpoint makes, staged through `People` in the service's own runtime.
 */
import { type Ids, People, type Person, type Role } from "@laari/core"
import { Effect } from "effect"
import { expect } from "vitest"
import * as TestServer from "./TestServer.js"

export interface Pair {
  readonly development: TestServer.LocalTestServer
  readonly production: TestServer.LocalTestServer
}

export const start = async (): Promise<Pair> => {
  const [development, production] = await Promise.all([
    TestServer.start(),
    TestServer.start({ config: { clock: "system" } })
  ])
  return { development, production }
}

export const close = (pair: Pair | undefined) =>
  Promise.all([pair?.development.close(), pair?.production.close()])

/** A new merchant's id. */
export const merchant = async (server: TestServer.TestServer, name: string): Promise<string> => {
  const res = await server.ops("POST", "/ops/merchants", { name })
  expect(res.status, res.text).toBe(201)
  return res.body.id as string
}

/** The link an invitation's token completes, as the dashboard makes it. */
export const link = (token: string) => `http://laari.test/dashboard/invitations/${token}`

/** Invites `email` to the merchant's team as `by`, through the service itself. */
export const invite = (
  server: TestServer.LocalTestServer,
  input: {
    readonly merchantId: string
    readonly email: string
    readonly role: Role.MerchantRole
    readonly by: string
  }
) =>
  server.sql(
    Effect.flatMap(People.People, (people) =>
      people.invite({
        merchantId: input.merchantId as Ids.MerchantId,
        email: input.email,
        role: input.role,
        by: input.by as Person.UserId,
        link
      })
    ) as unknown as Effect.Effect<
      { readonly invitation: Person.Invitation; readonly token: string },
      never,
      never
    >
  )
