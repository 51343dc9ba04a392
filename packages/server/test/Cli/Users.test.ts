/**
 * `laari users` as an operator runs it (what `pnpm laari` runs) against a real service over HTTP: one on a
 * development start (manual clock) and one as production runs (system clock, no LAARI_DEVELOPMENT).
 * `create` prints the one-time password once with the rule that it must be changed, or says the account
 * keeps its own; `--operator-role` makes staff; `list` shows the team; `invitations` prints the pending
 * links on a development start and, elsewhere, says how to get one.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as CliProcess from "../support/CliProcess.js"
import * as OpsPeople from "../support/OpsPeople.js"
import * as TestServer from "../support/TestServer.js"

const { merchant } = OpsPeople
let development: TestServer.LocalTestServer
let production: TestServer.LocalTestServer
let pair: OpsPeople.Pair | undefined

beforeAll(async () => {
  pair = await OpsPeople.start()
  ;({ development, production } = pair)
}, 180_000)
afterAll(() => OpsPeople.close(pair))

const cli = (server: TestServer.TestServer, args: ReadonlyArray<string>) =>
  CliProcess.run(["users", ...args], { LAARI_URL: server.baseUrl, LAARI_OPS_TOKEN: TestServer.OpsToken })

const ok = async (server: TestServer.TestServer, args: ReadonlyArray<string>) => {
  const run = await cli(server, args)
  expect(run.stderr, `laari users ${args.join(" ")}`).toBe("")
  expect(run.code).toBe(0)
  return run.stdout
}

describe("laari users", { timeout: 120_000 }, () => {
  it("create prints the one-time password once, to be changed; an existing account keeps its own", async () => {
    const id = await merchant(development, "Cli People Cafe")
    const out = await ok(development, [
      "create",
      "--merchant",
      id,
      "--email",
      "Owner@CliCafe.mv",
      "--role",
      "owner"
    ])
    const printed = new RegExp(
      `^owner@clicafe\\.mv: owner of merchant ${id}\\n {2}one-time password: (\\S{12,})\\n {2}Shown once: it must be changed at the first sign-in\\.\\n$`
    ).exec(out)
    expect(printed, out).not.toBeNull()

    // The same person joins a second merchant's team with the account they have.
    const second = await merchant(development, "Cli People Bakery")
    const again = await ok(development, [
      "create",
      "--merchant",
      second,
      "--email",
      "owner@clicafe.mv",
      "--role",
      "admin"
    ])
    expect(again).toBe(
      `owner@clicafe.mv: admin of merchant ${second}\n  The account already existed: it keeps its own password.\n`
    )
    const finance = JSON.parse(
      await ok(development, [
        "create",
        "--merchant",
        id,
        "--email",
        "books@clicafe.mv",
        "--role",
        "finance",
        "--json"
      ])
    ) as { role: string; password: string | null; user: { must_change_password: boolean } }
    expect(finance).toMatchObject({ role: "finance", user: { must_change_password: true } })
    expect(finance.password).not.toBe(printed![1])

    const list = await ok(development, ["list", "--merchant", id])
    expect(list).toMatch(
      /^owner@clicafe\.mv {2}owner {2}two-factor off {2}since \S+\+05:00\nbooks@clicafe\.mv {2}finance {2}two-factor off {2}since \S+\n$/
    )
    expect(list).not.toContain(printed![1])
    const empty = await merchant(development, "Cli Empty Cafe")
    expect(await ok(development, ["list", "--merchant", empty])).toContain("No members: laari users create")
  })

  it("--operator-role makes a member of the provider's staff", async () => {
    const out = await ok(development, [
      "create",
      "--email",
      "risk@provider.mv",
      "--operator-role",
      "ops_risk"
    ])
    expect(out).toMatch(
      /^risk@provider\.mv: ops_risk on the provider's staff\n {2}one-time password: \S{12,}\n/
    )
  })

  it("refuses a command that does not say whose team, or says both, and what the service refuses", async () => {
    const id = await merchant(development, "Cli Strict Cafe")
    /** Refused with `says` on stderr, nothing on stdout, exit status 1. */
    const refuses = async (args: ReadonlyArray<string>, says: string) => {
      const run = await cli(development, args)
      expect(run, args.join(" ")).toMatchObject({ code: 1, stdout: "" })
      expect(run.stderr).toContain(says)
    }
    const person = ["create", "--email", "x@strict.mv"]
    const team = ["--merchant", id, "--role", "owner"]
    await refuses([...person, ...team, "--operator-role", "ops_admin"], "not both")
    await refuses(person, "--merchant <id> --role <role>")
    await refuses([...person, "--merchant", id], "Give both --merchant <id> and --role <role>.")
    await refuses([...person, "--merchant", id, "--role", "cashier"], "Usage: laari users create ")
    await refuses(["create", "--email", "not-an-email", ...team], "must be an email address")
    await refuses(
      ["list", "--merchant", "00000000-0000-4000-8000-000000000000"],
      "404: NOT_FOUND: Merchant not found"
    )
    expect((await development.ops("GET", `/ops/users?merchant_id=${id}`)).body).toEqual([])
  })

  it("invitations prints the pending links on a development start", async () => {
    const id = await merchant(development, "Cli Inviting Cafe")
    expect(await ok(development, ["invitations", "--merchant", id])).toBe(
      `No pending invitation for merchant ${id}.\n`
    )
    const owner = JSON.parse(
      await ok(development, [
        "create",
        "--merchant",
        id,
        "--email",
        "boss@inviting.mv",
        "--role",
        "owner",
        "--json"
      ])
    ) as { user: { id: string } }
    const sent = await OpsPeople.invite(development, {
      merchantId: id,
      email: "till@inviting.mv",
      role: "support",
      by: owner.user.id
    })
    const out = await ok(development, ["invitations", "--merchant", id])
    expect(out).toMatch(/^till@inviting\.mv {2}support {2}expires \S+\+05:00\n/)
    expect(out).toContain(`\n  ${OpsPeople.link(sent.token)}\n`)
  })

  it("elsewhere invitations says the links are not readable and how to start for development", async () => {
    const id = await merchant(production, "Cli Production Cafe")
    const run = await cli(production, ["invitations", "--merchant", id])
    expect(run).toMatchObject({ code: 1, stdout: "" })
    expect(run.stderr).toContain(`the service at ${production.baseUrl} is not in development mode`)
    expect(run.stderr).toContain("Start it with LAARI_DEVELOPMENT=true")
    // The team's commands work there as anywhere.
    expect(await ok(production, ["list", "--merchant", id])).toContain("No members")
  })
})
