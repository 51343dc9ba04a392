/**
 * `LAARI_WALLET_*`: unset, the connector is off (the built-in ledger); set, each value is what it may be or
 * the start fails in one line naming the variable and what is allowed, never showing the token.
 */
import { ConfigProvider, Effect, Exit, Redacted } from "effect"
import { describe, expect, it } from "vitest"
import * as WalletConfig from "../../src/WalletConnector/Config.js"

const fromEnv = (env: Record<string, string>) =>
  Effect.runPromiseExit(
    WalletConfig.fromEnv.pipe(Effect.withConfigProvider(ConfigProvider.fromMap(new Map(Object.entries(env)))))
  )

const on = { LAARI_WALLET_URL: "https://core.bank.example/connector/", LAARI_WALLET_TOKEN: "tok_0123456789" }

/** The failure's text: one line, naming `variable` and saying `allowed`. */
const refusal = async (env: Record<string, string>) => {
  const exit = await fromEnv(env)
  expect(Exit.isFailure(exit), JSON.stringify(env)).toBe(true)
  const text = Exit.isFailure(exit) ? String(exit.cause) : ""
  expect(text.split("\n").length, text).toBe(1)
  return text
}

describe("LAARI_WALLET_*", () => {
  it("unset URL: the built-in ledger, whatever else is set", async () => {
    const exit = await fromEnv({ LAARI_WALLET_TOKEN: "tok", LAARI_WALLET_ENVIRONMENTS: "test,live" })
    expect(Exit.isSuccess(exit) && exit.value).toBeUndefined()
  })

  it("a URL and a token: the defaults are live, 5000 ms and 60 s; the URL loses its trailing slash", async () => {
    const exit = await fromEnv(on)
    expect(Exit.isSuccess(exit)).toBe(true)
    const config = Exit.isSuccess(exit) ? exit.value! : undefined
    expect({ ...config, token: config && Redacted.value(config.token) }).toEqual({
      url: "https://core.bank.example/connector",
      token: "tok_0123456789",
      environments: ["live"],
      timeoutMs: 5000,
      cancelAfterS: 60,
      feeWallet: "laari-fees"
    })
    expect(WalletConfig.clientConfig(config!)).toEqual({
      url: "https://core.bank.example/connector",
      token: "tok_0123456789",
      timeoutMs: 5000
    })
  })

  it("takes each allowed value", async () => {
    for (const [value, environments] of [
      ["live", ["live"]],
      ["test", ["test"]],
      ["test,live", ["test", "live"]],
      [" live , test ", ["test", "live"]]
    ] as const) {
      const exit = await fromEnv({ ...on, LAARI_WALLET_ENVIRONMENTS: value })
      expect(Exit.isSuccess(exit) && exit.value?.environments, value).toEqual(environments)
    }
    const exit = await fromEnv({ ...on, LAARI_WALLET_TIMEOUT_MS: "100", LAARI_WALLET_CANCEL_AFTER_S: "3600" })
    expect(Exit.isSuccess(exit) && [exit.value?.timeoutMs, exit.value?.cancelAfterS]).toEqual([100, 3600])
    const most = await fromEnv({ ...on, LAARI_WALLET_TIMEOUT_MS: "60000", LAARI_WALLET_CANCEL_AFTER_S: "1" })
    expect(Exit.isSuccess(most) && [most.value?.timeoutMs, most.value?.cancelAfterS]).toEqual([60000, 1])
  })

  it("a URL without a token fails naming the token", async () => {
    expect(await refusal({ LAARI_WALLET_URL: on.LAARI_WALLET_URL })).toMatch(
      /LAARI_WALLET_TOKEN.*required when LAARI_WALLET_URL is set/
    )
  })

  it("each bad value fails in one line naming the variable and what it may be", async () => {
    const cases: ReadonlyArray<readonly [Record<string, string>, RegExp]> = [
      [{ LAARI_WALLET_URL: "core.bank.example" }, /LAARI_WALLET_URL.*must be an http:\/\/ or https:\/\/ URL/],
      [{ LAARI_WALLET_URL: "ftp://core" }, /LAARI_WALLET_URL.*must be an http/],
      [{ LAARI_WALLET_TOKEN: "has space" }, /LAARI_WALLET_TOKEN.*visible ASCII characters, no spaces/],
      [{ LAARI_WALLET_TOKEN: "" }, /LAARI_WALLET_TOKEN.*visible ASCII/],
      ...["prod", "", "live,live", "test;live", "LIVE"].map(
        (v) =>
          [
            { LAARI_WALLET_ENVIRONMENTS: v },
            /LAARI_WALLET_ENVIRONMENTS.*must be live, test, or test,live/
          ] as const
      ),
      ...["99", "60001", "5s", "1.5", "-1", ""].map(
        (v) =>
          [
            { LAARI_WALLET_TIMEOUT_MS: v },
            /LAARI_WALLET_TIMEOUT_MS.*whole number of milliseconds from 100 to 60000/
          ] as const
      ),
      ...["0", "3601", "a minute", "2.5"].map(
        (v) =>
          [
            { LAARI_WALLET_CANCEL_AFTER_S: v },
            /LAARI_WALLET_CANCEL_AFTER_S.*whole number of seconds from 1 to 3600/
          ] as const
      )
    ]
    for (const [env, message] of cases) expect(await refusal({ ...on, ...env })).toMatch(message)
    // Checked with the connector off too: a typo fails now, not the day it is turned on.
    expect(await refusal({ LAARI_WALLET_TIMEOUT_MS: "5s" })).toMatch(/LAARI_WALLET_TIMEOUT_MS/)
  })

  it("never shows the token", async () => {
    expect(await refusal({ ...on, LAARI_WALLET_TOKEN: "secret value" })).not.toContain("secret value")
  })
})
