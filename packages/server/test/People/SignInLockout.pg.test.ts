/**
 * The dashboard's sign-in lock-out across two real server processes on one PostgreSQL database: wrong
 * passwords sent turn by turn to each process lock the account after five, as on one process (counted
 * apart, the two would allow ten), and while it is locked the right password is refused too, by both.
 * Another account is not locked by them. Needs `DATABASE_URL`.
 */
import { Effect, Exit, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { SignInsPerAccount } from "../../src/Http/RateLimit.js"
import * as People from "../support/DashboardPeople.js"
import * as F from "../support/Fixtures.js"
import * as ServerProcess from "../support/ServerProcess.js"
import * as TestDatabase from "../support/TestDatabase.js"
import * as TestServer from "../support/TestServer.js"

const url = TestDatabase.postgresUrl
if (url === undefined)
  console.warn("SignInLockout.pg.test: DATABASE_URL is not set; the lock-out across processes is NOT tested")

describe.skipIf(url === undefined)("sign-in lock-out across two server processes", () => {
  let servers: ReadonlyArray<ServerProcess.ServerProcess> = []
  let drop: (() => Promise<void>) | undefined
  const clients = () => servers.map((s) => ({ ...TestServer.client(s.baseUrl), close: async () => {} }))

  beforeAll(async () => {
    const scope = Effect.runSync(Scope.make())
    drop = () => Effect.runPromise(Scope.close(scope, Exit.void))
    const databaseUrl = await Effect.runPromise(Scope.extend(TestDatabase.createDatabase(url!), scope))
    const env = { DATABASE_URL: databaseUrl, LAARI_OPS_TOKEN: TestServer.OpsToken, LAARI_PROCESSES: "1" }
    // One after the other: the second finds the schema migrated.
    const first = await ServerProcess.start({ env })
    servers = [first, await ServerProcess.start({ env })]
  }, 240_000)
  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()))
    await drop?.()
  }, 60_000)

  /** One sign-in at `server`, with a fresh visit's CSRF cookie and token: its status. */
  const attempt = async (server: TestServer.TestServer, email: string, password: string) => {
    const { csrf, token } = await People.visit(server)
    const res = await People.post(
      server,
      "/dashboard/sign-in",
      { laari_csrf: csrf },
      { email, password, _csrf: token }
    )
    await res.arrayBuffer()
    return res.status
  }

  it("five wrong passwords spread over both lock the account in both; the right one is refused while locked", async () => {
    const [one, two] = clients()
    const m = await F.merchant(one!)
    const locked = await People.create(one!, m.id, "viewer")
    const other = await People.create(one!, m.id, "viewer")
    const statuses: Array<number> = []
    for (let i = 0; i < SignInsPerAccount.capacity; i++)
      statuses.push(await attempt(i % 2 === 0 ? one! : two!, locked.email, `wrong password ${i} here`))
    expect(statuses).toEqual(Array(SignInsPerAccount.capacity).fill(401))
    // Locked now, in both processes, whatever the password.
    expect(await attempt(two!, locked.email, `wrong password again here`)).toBe(429)
    expect(await attempt(one!, locked.email, locked.password)).toBe(429)
    expect(await attempt(two!, locked.email, locked.password)).toBe(429)
    // The lock is the account's: another account on the same address signs in.
    expect(await attempt(one!, other.email, other.password)).toBe(303)
  }, 120_000)
})
