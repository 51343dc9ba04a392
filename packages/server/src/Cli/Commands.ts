/**
 * The operator's commands: serve, migrate, merchants, keys, customers and the manual clock. All but
 * `serve` and `migrate` talk to a running service over its operator API.
 */
import { Args, Command, HelpDoc, Options, ValidationError } from "@effect/cli"
// Core's modules one by one: its index loads the whole domain, which no command here needs.
import * as Auth from "@laari/core/kernel/Auth"
import * as Phone from "@laari/core/kernel/Phone"
import { Console, Duration, Effect, Option } from "effect"
import * as ServerConfig from "../Platform/Config.js"
import * as DataDir from "../Platform/DataDir.js"
import * as Remote from "./Remote.js"

// The server and the database drivers are loaded only by the commands that run them: every other
// command (and `--help`) starts without reading them (about half of the CLI's start-up).
const loadServe = Effect.promise(() => import("../Serve.js"))
const loadMigrate = Effect.promise(() => import("../Migrate.js"))
// The operator API's definition, likewise: only `customers codes` reads its refusal text.
const loadOpsApi = Effect.promise(() => import("../Ops/Api.js"))

const environment = Options.choice("environment", ["test", "live"]).pipe(
  Options.withDescription("The environment: test (the sandbox) or live"),
  Options.withDefault("test" as const)
)

/**
 * A phone number in any usual spelling, made E.164 here by core's own rule (`Phone`): the client encodes
 * requests from the decoded side, which is E.164 only.
 */
const phoneOption = Options.text("phone").pipe(
  Options.mapEffect((typed) =>
    Option.match(Phone.normalize(typed), {
      onNone: () =>
        Effect.fail(ValidationError.invalidValue(HelpDoc.p(`--phone ${typed}: ${Phone.Message}`))),
      onSome: Effect.succeed
    })
  )
)

const merchantId = Options.text("merchant").pipe(
  Options.withDescription("The merchant's id (laari merchants list)")
)

// ---------------------------------------------------------------------------------------------------------

const serve = Command.make("serve", {}, () => Effect.flatMap(loadServe, (Serve) => Serve.run)).pipe(
  Command.withDescription(
    "Run the service (PORT, DATABASE_URL, LAARI_* variables configure it; see the README). The same as pnpm start."
  )
)

const migrate = Command.make("migrate", {}, () =>
  Effect.gen(function* () {
    const config = yield* ServerConfig.fromEnv
    const Migrate = yield* loadMigrate
    if (config.databaseUrl === undefined) {
      const dir = config.dataDir ?? ServerConfig.defaults.dataDir
      yield* DataDir.prepare(dir)
      // Refused before a word of progress when a service (or another migrate) has the directory.
      yield* DataDir.lock(dir, "laari migrate")
    }
    const target =
      config.databaseUrl === undefined ? `PGlite in ${config.dataDir}` : "PostgreSQL (DATABASE_URL)"
    const { names } = Migrate
    yield* Console.log(`Migrating ${target}: ${names.length} migrations known...`)
    const started = Date.now()
    // A line as each migration starts; they commit together, in one transaction, at the end.
    const progress = (name: string) =>
      Console.log(
        `  [${names.indexOf(name) + 1}/${names.length}] ${name} (${Duration.format(Duration.millis(Date.now() - started))})`
      )
    const applied = yield* Migrate.run({ databaseUrl: config.databaseUrl, dataDir: config.dataDir }, progress)
    yield* Console.log(
      applied.length === 0
        ? "The schema is up to date."
        : `${applied.length} applied in ${Duration.format(Duration.millis(Date.now() - started))}; the schema is up to date.`
    )
  }).pipe(Effect.scoped, Remote.report(""))
).pipe(
  Command.withDescription("Bring the database schema up to date (the service also does it when it starts)")
)

// ---------------------------------------------------------------------------------------------------------

const merchantsCreate = Command.make(
  "create",
  {
    ...Remote.operator,
    name: Options.text("name").pipe(Options.withDescription("The merchant's trading name")),
    city: Options.text("city").pipe(
      Options.withDescription("The city its QR codes name (default Male)"),
      Options.optional
    ),
    mcc: Options.text("mcc").pipe(
      Options.withDescription("Merchant category code, four digits"),
      Options.optional
    ),
    feeBps: Options.integer("fee-bps").pipe(
      Options.withDescription("Fee in basis points (default 100)"),
      Options.optional
    ),
    outlets: Options.text("outlet").pipe(
      Options.withDescription("An outlet's name; one outlet for each --outlet given"),
      Options.repeated
    ),
    mandatesLive: Options.boolean("mandates-live").pipe(Options.withDescription("Allow live mandates")),
    subscriptionsLive: Options.boolean("subscriptions-live").pipe(
      Options.withDescription("Allow live subscriptions")
    )
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      let merchant = yield* client.ops.createMerchant({
        payload: {
          name: o.name,
          city: Option.getOrUndefined(o.city),
          mcc: Option.getOrUndefined(o.mcc),
          fee_bps: Option.getOrUndefined(o.feeBps),
          outlets: o.outlets.length === 0 ? undefined : o.outlets.map((name) => ({ name }))
        }
      })
      if (o.mandatesLive || o.subscriptionsLive)
        merchant = yield* client.ops.setFeatures({
          path: { id: merchant.id },
          payload: {
            mandates_live: o.mandatesLive || undefined,
            subscriptions_live: o.subscriptionsLive || undefined
          }
        })
      yield* Remote.print(o.json, merchant, () => [
        `Created merchant "${merchant.name}": ${merchant.id}`,
        ...merchant.outlets.map((x) => `  outlet ${x.id} "${x.name}"`),
        `Next: laari keys create --merchant ${merchant.id} --environment test`
      ])
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("Create a merchant (with its outlets and sandbox payer)"))

const merchantsList = Command.make("list", Remote.operator, (o) =>
  Effect.gen(function* () {
    const client = yield* Remote.opsClient(o.url, o.opsToken)
    const list = yield* client.ops.listMerchants({ urlParams: { limit: 1000 } })
    yield* Remote.print(o.json, list, () =>
      list.length === 0
        ? ["No merchants yet: laari merchants create --name <name>"]
        : list.map(
            (m) =>
              `${m.id}  ${m.name}  (${m.city}, mcc ${m.mcc}, ${m.outlets.length} outlet${m.outlets.length === 1 ? "" : "s"}` +
              `${m.features.mandatesLive ? ", live mandates" : ""}${m.features.subscriptionsLive ? ", live subscriptions" : ""})`
          )
    )
  }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("List merchants, oldest first"))

const onOff = (name: string, what: string) =>
  Options.choice(name, ["true", "false"]).pipe(
    Options.withDescription(`Turn ${what} on or off`),
    Options.map((v) => v === "true"),
    Options.optional
  )

const merchantsFeatures = Command.make(
  "features",
  {
    ...Remote.operator,
    merchant: merchantId,
    mandatesLive: onOff("mandates-live", "live mandates"),
    subscriptionsLive: onOff("subscriptions-live", "live subscriptions")
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const merchant = yield* client.ops.setFeatures({
        path: { id: o.merchant },
        payload: {
          mandates_live: Option.getOrUndefined(o.mandatesLive),
          subscriptions_live: Option.getOrUndefined(o.subscriptionsLive)
        }
      })
      const state = (on: boolean) => (on ? "on" : "off")
      yield* Remote.print(o.json, merchant, () => [
        `${merchant.name} (${merchant.id}): live mandates ${state(merchant.features.mandatesLive)}, live subscriptions ${state(merchant.features.subscriptionsLive)}`
      ])
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("Show or set a merchant's feature gates (live mandates, subscriptions)"))

const merchants = Command.make("merchants").pipe(
  Command.withDescription("Create and list merchants, and set their feature gates"),
  Command.withSubcommands([merchantsCreate, merchantsList, merchantsFeatures])
)

// ---------------------------------------------------------------------------------------------------------

const keysCreate = Command.make(
  "create",
  {
    ...Remote.operator,
    merchant: merchantId,
    environment,
    kind: Options.choice("kind", Auth.KeyKind.literals).pipe(
      Options.withDescription(
        "secret (sk_..., for the merchant's server) or publishable (pk_..., may be seen in a browser: checkout sessions only)"
      ),
      Options.withDefault("secret" as const)
    ),
    scopes: Options.choice("scope", Auth.Scope.literals).pipe(
      Options.withDescription("A scope the key may use; default: every scope for a secret key"),
      Options.repeated
    )
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const key = yield* client.ops.createKey({
        path: { id: o.merchant },
        payload: {
          environment: o.environment,
          kind: o.kind,
          scopes: o.scopes.length === 0 ? undefined : o.scopes
        }
      })
      yield* Remote.print(o.json, key, () => [
        key.key,
        `  ${key.kind} key for ${key.environment}, id ${key.id}, scopes ${key.scopes.join(" ")}`,
        "  Shown once: store it now (laari keys list shows only its prefix)."
      ])
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("Issue a key for a merchant; the key is printed once"))

const keysList = Command.make("list", { ...Remote.operator, merchant: merchantId }, (o) =>
  Effect.gen(function* () {
    const client = yield* Remote.opsClient(o.url, o.opsToken)
    const keys = yield* client.ops.listKeys({ path: { id: o.merchant } })
    yield* Remote.print(o.json, keys, () =>
      keys.length === 0
        ? ["No keys: laari keys create --merchant <id>"]
        : keys.map(
            (k) =>
              `${k.id}  ${k.prefix}...  ${k.kind} ${k.environment}  created ${k.createdAt}` +
              (k.revokedAt === null ? "" : `  REVOKED ${k.revokedAt}`)
          )
    )
  }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("List a merchant's keys (prefixes only)"))

const keysRevoke = Command.make(
  "revoke",
  {
    ...Remote.operator,
    merchant: merchantId,
    id: Args.text({ name: "key-id" }).pipe(Args.withDescription("The key's id (laari keys list)"))
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const key = yield* client.ops.revokeKey({ path: { id: o.merchant, key: o.id } })
      yield* Remote.print(o.json, key, () => [`Revoked ${key.prefix}... (${key.id}) at ${key.revokedAt}`])
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("Revoke a key: from now on it is refused with 401"))

const keys = Command.make("keys").pipe(
  Command.withDescription("Issue, list and revoke merchants' API keys"),
  Command.withSubcommands([keysCreate, keysList, keysRevoke])
)

// ---------------------------------------------------------------------------------------------------------

const customersCreate = Command.make(
  "create",
  {
    ...Remote.operator,
    environment,
    phone: phoneOption.pipe(
      Options.withDescription("The wallet's phone number, e.g. 7771234 or +960 777 1234")
    ),
    name: Options.text("name").pipe(Options.withDescription("The wallet holder's name"), Options.optional),
    balance: Options.integer("balance").pipe(
      Options.withDescription("Opening balance in laari (100 laari = MVR 1.00)"),
      Options.optional
    ),
    timeZone: Options.text("time-zone").pipe(
      Options.withDescription("IANA zone, default Indian/Maldives"),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const customer = yield* client.ops.createCustomer({
        payload: {
          environment: o.environment,
          phone: o.phone,
          name: Option.getOrUndefined(o.name),
          balance: Option.getOrUndefined(o.balance),
          time_zone: Option.getOrUndefined(o.timeZone)
        }
      })
      yield* Remote.print(o.json, customer, () => [
        `Created customer ${customer.id} (${customer.phone}, ${customer.environment}), balance ${customer.balance} laari`
      ])
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("Create a wallet customer"))

const customersCodes = Command.make(
  "codes",
  {
    ...Remote.operator,
    environment,
    phone: phoneOption.pipe(Options.withDescription("The customer's phone number, in any usual spelling"))
  },
  (o) =>
    Effect.gen(function* () {
      const { codesNeedDevelopment } = yield* loadOpsApi
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const codes = yield* client.ops
        .customerCodes({ urlParams: { phone: o.phone, environment: o.environment } })
        .pipe(
          Effect.catchIf(
            // A `Problem` is failed by the client's transform, outside its typed errors.
            (e: unknown) =>
              e instanceof Remote.Problem && e.status === 404 && e.body.message === codesNeedDevelopment,
            () =>
              Effect.fail(
                new Remote.Refusal(
                  `No codes: the service at ${o.url} is not in development mode. Start it with LAARI_DEVELOPMENT=true (e.g. LAARI_DEVELOPMENT=true pnpm start) to read customers' one-time codes.`
                )
              )
          )
        )
      yield* Remote.print(o.json, codes, () =>
        codes.length === 0
          ? [`No current one-time code for ${o.phone} (${o.environment}).`]
          : codes.map((c) => `${c.code}  ${c.subject_kind} ${c.subject_id}  expires ${c.expires_at}`)
      )
    }).pipe(Remote.report(o.url))
).pipe(
  Command.withDescription(
    "A customer's current one-time codes, newest first (a service started with LAARI_DEVELOPMENT=true)"
  )
)

const customers = Command.make("customers").pipe(
  Command.withDescription("Create wallet customers and read their one-time codes (development)"),
  Command.withSubcommands([customersCreate, customersCodes])
)

// ---------------------------------------------------------------------------------------------------------

/** `90s`, `30m`, `12h`, `3d`, `2w`, or an ISO 8601 duration such as `P1M` is refused: months vary. */
export const parseDuration = (text: string): number | undefined => {
  const m = /^(\d+)\s*(s|m|h|d|w)$/.exec(text.trim())
  if (m === null) return undefined
  const unit = { s: 1, m: 60, h: 3600, d: 86_400, w: 604_800 }[m[2] as "s" | "m" | "h" | "d" | "w"]
  return Number(m[1]) * unit
}

const clockAdvance = Command.make(
  "advance",
  {
    ...Remote.operator,
    by: Options.text("by").pipe(Options.withDescription("How far: 90s, 30m, 12h, 3d, 2w"), Options.optional),
    to: Options.text("to").pipe(
      Options.withDescription("To an ISO 8601 instant, e.g. 2026-12-01T00:00:00+05:00"),
      Options.optional
    )
  },
  (o) =>
    Effect.gen(function* () {
      if (Option.isSome(o.by) === Option.isSome(o.to))
        return yield* Effect.fail(
          new Remote.Refusal("Say how far with exactly one of --by (e.g. 3d) or --to (an ISO instant).")
        )
      const bySeconds = Option.map(o.by, (text) => parseDuration(text))
      if (Option.isSome(bySeconds) && bySeconds.value === undefined)
        return yield* Effect.fail(
          new Remote.Refusal(
            `--by ${Option.getOrElse(o.by, () => "")}: use a number and a unit, s, m, h, d or w (e.g. 3d).`
          )
        )
      const client = yield* Remote.opsClient(o.url, o.opsToken)
      const clock = yield* client.ops.advanceClock({
        payload: { by_seconds: Option.getOrUndefined(bySeconds), to: Option.getOrUndefined(o.to) }
      })
      yield* Remote.print(o.json, clock, () => [
        `The clock is now ${clock.now}; ${clock.processed} due item(s) processed.`
      ])
    }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("Move a manual clock (LAARI_CLOCK=manual) forward and run what fell due"))

const clockShow = Command.make("now", Remote.operator, (o) =>
  Effect.gen(function* () {
    const client = yield* Remote.opsClient(o.url, o.opsToken)
    const clock = yield* client.ops.clock()
    yield* Remote.print(o.json, clock, () => [`${clock.now} (${clock.mode} clock)`])
  }).pipe(Remote.report(o.url))
).pipe(Command.withDescription("The service's time and whether its clock is manual"))

const clock = Command.make("clock").pipe(
  Command.withDescription("Read and move the service's clock"),
  Command.withSubcommands([clockShow, clockAdvance])
)

export const operator = [serve, migrate, merchants, keys, customers, clock] as const
