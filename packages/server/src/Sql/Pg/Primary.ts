/**
 * A pg pool that follows the primary of a host list (`HostList`): node-postgres connects to one host, so
 * this finds the one to write to and gives every new connection its address.
 *
 * - Finding: every host is asked at once (`SHOW transaction_read_only` for `read-write`,
 *   `pg_is_in_recovery()` for `primary`, nothing for `any`); for `read-write` and `primary` the first
 *   that qualifies is taken (there is one primary), for `any` the first in the list's order, as libpq.
 *   Bounded by the connect bound: a host that does not answer by then does not qualify.
 * - Losing it: a connection lost, or a server saying it cannot take writes or is going away (SQLSTATE
 *   25006 read_only_sql_transaction, 57P01 admin_shutdown, 57P02 crash_shutdown, 57P03
 *   cannot_connect_now), ends the generation: every connection of it is dropped (idle ones leave the
 *   pool, busy ones fail their statement, which rolls back and answers 503), and the next connection
 *   finds the primary again. Errors of an older generation's connections change nothing.
 * - Waiting: a connection, the finding included, is had within the connect bound or refused (a 503 to
 *   the request), never waited for past it.
 *
 * What a `201` means with a primary and a standby. laari answers once its COMMIT
 * returned. With synchronous replication (pg_auto_failover sets `synchronous_standby_names` on the
 * primary) a COMMIT returns only once the standby has the transaction's WAL on disk, so the standby a
 * failover promotes has every acknowledged payment; asynchronously, the last commits before a crash can
 * be lost (Failover.pg.test saw 1 of 68 201s missing on the promoted standby before it replicated
 * synchronously). The trade-off is pg_auto_failover's, per formation:
 * - `number_sync_standbys = 0` (the default, and what a primary and one secondary run): the secondary is
 *   synchronous while healthy. When it is down or lags, the monitor removes it from
 *   `synchronous_standby_names` (the primary is `wait_primary`): writes go on, acknowledged on the primary
 *   alone, and failover is not allowed until the secondary has caught up, so nothing acknowledged is lost
 *   by a failover; losing the primary's disk in that window loses those writes.
 * - `number_sync_standbys >= 1` (needs at least that many standbys, plus one to stay writable with one
 *   down): a COMMIT waits for that many; with fewer standbys up, commits wait. laari's client then gives
 *   the connection up after `queryTimeout` and answers `503` `OUTCOME_UNKNOWN` (the commit is on the
 *   primary, not yet acknowledged): the retry with the same key replays it once the wait ends.
 * A commit cut off from its connection is always `OUTCOME_UNKNOWN` (`Errors.OutcomeUnknown`, core's).
 */
import pg from "pg"
import * as HostList from "./HostList.js"

/** SQLSTATEs by which a server says it is not, or is no longer, a primary that takes writes. */
const NotPrimaryStates = new Set(["25006", "57P01", "57P02", "57P03"])

/** How long a finding that found no primary stands before the next one. */
const RetryFindingMs = 100

/** pg's error for a TLS request to a server without TLS: `sslmode=prefer` then tries without. */
const NoTls = "The server does not support SSL connections"

/** Whether `error` says the primary went away: a lost connection, or a server refusing as above. */
export const isLost = (error: unknown): boolean => {
  if (typeof error !== "object" || error === null) return false
  const e = error as { readonly severity?: unknown; readonly code?: unknown; readonly message?: unknown }
  if (typeof e.severity === "string") return typeof e.code === "string" && NotPrimaryStates.has(e.code)
  // No server answered: a socket error (ECONNRESET, ...) or pg's own words for a dead connection.
  return (
    typeof e.code === "string" ||
    (typeof e.message === "string" && /connection|terminated|timeout|socket|closed/i.test(e.message))
  )
}

/** Every host was asked and none qualified: what each said. */
export class NoPrimary extends Error {
  readonly code = "LAARI_NO_PRIMARY"
  constructor(
    readonly list: HostList.HostList,
    /** Per host, in order: `standby` (answered, does not qualify) or the error that stopped the asking. */
    readonly answers: ReadonlyArray<"standby" | Error>
  ) {
    const said = list.hosts.map((h, i) => {
      const a = answers[i]
      const what = a === "standby" ? "read-only" : a === undefined ? "no answer" : a.message
      return `${h.host}:${h.port} (${what})`
    })
    super(`no host of DATABASE_URL takes writes: ${said.join(", ")}`, {
      cause: answers.find((a): a is Error => a instanceof Error)
    })
  }
  /** Every host answered, and each is a standby: a configuration naming no primary. */
  get allStandbys(): boolean {
    return this.answers.length === this.list.hosts.length && this.answers.every((a) => a === "standby")
  }
}

/** Where a connection of the current generation goes. */
interface Chosen {
  readonly url: string
  readonly generation: number
}

type Probe =
  | { readonly ok: true; readonly url: string }
  | { readonly ok: false; readonly why: "standby" | Error }

export class Finder {
  generation = 0
  private chosen: Chosen | undefined
  private finding: Promise<Chosen> | undefined
  private none: { readonly at: number; readonly error: unknown } | undefined
  private readonly live = new Map<pg.Client, number>()

  constructor(
    readonly list: HostList.HostList,
    /** Options of every connection but its address. */
    private readonly base: pg.ClientConfig,
    private readonly connectMs: number
  ) {}

  /** The primary of this generation; asked for once, however many wait for it. */
  primary(): Promise<Chosen> {
    if (this.chosen !== undefined) return Promise.resolve(this.chosen)
    // A finding that found none is the answer for a moment: requests arriving during a switch must not
    // each open a connection to every host (to the standby being promoted, among them).
    if (this.finding === undefined && this.none !== undefined && Date.now() - this.none.at < RetryFindingMs)
      return Promise.reject(this.none.error)
    if (this.finding === undefined) {
      const generation = this.generation
      this.finding = this.find()
        .then(
          (url) => {
            const chosen = { url, generation }
            if (this.generation === generation) this.chosen = chosen
            this.none = undefined
            return chosen
          },
          (error: unknown) => {
            this.none = { at: Date.now(), error }
            throw error
          }
        )
        .finally(() => {
          this.finding = undefined
        })
    }
    return this.finding
  }

  /** The primary of the current generation when known: the address a new connection is given. */
  get current(): Chosen | undefined {
    return this.chosen
  }

  /** A connection of `generation` failed with `error`: if that says the primary went, a new generation. */
  failed(generation: number, error: unknown): void {
    if (generation !== this.generation || !isLost(error)) return
    this.generation++
    this.chosen = undefined
    // Forgotten as well: a connection that never connected ends with no `end` event.
    for (const [client, of] of this.live)
      if (of < this.generation) {
        this.live.delete(client)
        destroy(client)
      }
  }

  track(client: pg.Client, generation: number): void {
    this.live.set(client, generation)
    client.once("end", () => this.live.delete(client))
  }

  private find(): Promise<string> {
    const hosts = this.list.hosts
    const inOrder = this.list.attrs === "any"
    const results: Array<Probe | undefined> = hosts.map(() => undefined)
    return new Promise((resolve, reject) => {
      let settled = false
      const decide = () => {
        if (settled) return
        for (const r of results) {
          if (r === undefined) {
            // For `any` an earlier host that has not answered yet comes first.
            if (inOrder) return
            continue
          }
          if (r.ok) {
            settled = true
            return resolve(r.url)
          }
        }
        if (results.some((r) => r === undefined)) return
        settled = true
        reject(
          new NoPrimary(
            this.list,
            results.map((r) => (r === undefined || r.ok ? "standby" : r.why))
          )
        )
      }
      hosts.forEach((host, i) => {
        void this.probe(host).then((r) => {
          results[i] = r
          decide()
        })
      })
    })
  }

  /** Whether `host` qualifies, within the connect bound. */
  private async probe(host: HostList.Host): Promise<Probe> {
    let last: Error = new Error("no answer")
    for (const url of host.urls) {
      const client = new pg.Client({
        ...this.base,
        connectionString: url,
        connectionTimeoutMillis: this.connectMs,
        query_timeout: this.connectMs
      })
      client.on("error", () => {})
      try {
        await client.connect()
        if (this.list.attrs === "any") return { ok: true, url }
        const { rows } = await client.query<{ read_only: string; recovery: boolean }>(
          "SELECT current_setting('transaction_read_only') AS read_only, pg_is_in_recovery() AS recovery"
        )
        const row = rows[0]
        const qualifies =
          this.list.attrs === "read-write" ? row?.read_only === "off" : row?.recovery === false
        return qualifies ? { ok: true, url } : { ok: false, why: "standby" }
      } catch (e) {
        last = e instanceof Error ? e : new Error(String(e))
        if (last.message === NoTls) continue
        return { ok: false, why: last }
      } finally {
        void client.end().catch(() => {})
      }
    }
    return { ok: false, why: last }
  }
}

/** Closes a connection's socket: its statement in flight fails, and its pool drops it. */
export const destroy = (client: pg.Client): void => {
  const connection = (
    client as unknown as { readonly connection?: { readonly stream?: { destroy(): void } } }
  ).connection
  connection?.stream?.destroy()
}

type Callback = (
  error: Error | undefined,
  client?: pg.PoolClient,
  release?: (e?: boolean | Error) => void
) => void

/**
 * The pool and the client class over `finder`: `Base` is the client every connection is (pg's, or one
 * that bounds its reads); each connection reports its errors to the finder.
 */
export const make = (finder: Finder, Base: typeof pg.Client, options: pg.PoolConfig, connectMs: number) => {
  class PrimaryClient extends Base {
    readonly generation: number
    private readonly stale: boolean
    constructor(config: pg.ClientConfig = {}) {
      const chosen = finder.current
      const first = finder.list.hosts[0]!.urls[0]!
      super({ ...config, connectionString: chosen?.url ?? first })
      this.generation = finder.generation
      // Made between a failover and the next finding: it would not know where to go.
      this.stale = chosen === undefined || chosen.generation !== this.generation
      finder.track(this, this.generation)
      this.on("error", (e) => finder.failed(this.generation, e))
    }

    // pg's `connect` and `query` have many overloads; these pass every argument through.
    override connect(...args: Array<unknown>): never {
      if (this.stale) {
        const error = new Error("Connection to the former primary refused: the primary changed")
        const callback = args[0]
        if (typeof callback === "function") {
          queueMicrotask(() => callback(error))
          return undefined as never
        }
        return Promise.reject(error) as never
      }
      // A connection that cannot be made to the primary is a failover too (the host is gone).
      const report = (error: unknown) => {
        if (error) finder.failed(this.generation, error)
      }
      const callback = args[0]
      if (typeof callback === "function")
        args[0] = (error: unknown) => {
          report(error)
          return callback(error)
        }
      const made = (super.connect as (...a: Array<unknown>) => unknown).apply(this, args)
      if (!(made instanceof Promise)) return made as never
      return made.catch((e: unknown) => {
        report(e)
        throw e
      }) as never
    }

    override query(...args: Array<unknown>): never {
      const last = args.length - 1
      const callback = args[last]
      if (typeof callback === "function")
        args[last] = (error: Error | null | undefined, result: unknown) => {
          if (error) finder.failed(this.generation, error)
          return callback(error, result)
        }
      return (super.query as (...a: Array<unknown>) => never).apply(this, args)
    }
  }

  class PrimaryPool extends pg.Pool {
    // Finds the primary first, all within the connect bound.
    override connect(...args: Array<unknown>): never {
      const callback = args[0] as Callback | undefined
      const had = new Promise<pg.PoolClient>((resolve, reject) => {
        let settled = false
        const timer = setTimeout(() => {
          settled = true
          reject(new Error("timeout exceeded when trying to connect: no primary within the bound"))
        }, connectMs)
        finder.primary().then(
          () => {
            if (settled) return
            ;(super.connect as (cb: Callback) => void).call(this, (error, client) => {
              if (settled) return client?.release()
              settled = true
              clearTimeout(timer)
              if (error !== undefined && error !== null) reject(error)
              else resolve(client!)
            })
          },
          (error: unknown) => {
            if (settled) return
            settled = true
            clearTimeout(timer)
            reject(error)
          }
        )
      })
      if (callback === undefined) return had as never
      had.then(
        (client) => callback(undefined, client, client.release),
        (error: Error) => callback(error)
      )
      return undefined as never
    }
  }

  const pool = new PrimaryPool({ ...options, Client: PrimaryClient })
  /** A connection of its own to the primary (LISTEN), outside the pool. */
  const connect = async (): Promise<pg.Client> => {
    await finder.primary()
    const client = new PrimaryClient(options)
    // As the single host's `Connector`: listened to from the start, before the caller's own listener.
    client.on("error", () => {})
    await client.connect()
    return client
  }
  return { pool, connect }
}
