/**
 * `DATABASE_URL` as libpq reads it (`Sql/Pg/HostList`): a host list with `target_session_attrs` and
 * `sslmode`, what `pg_autoctl show uri` prints, and the bad input said in one start-up line
 * (`Startup.explain`), without PostgreSQL.
 */
import { SqlError } from "@effect/sql/SqlError"
import { Cause } from "effect"
import { describe, expect, it } from "vitest"
import { redactUrl } from "../../src/Ops/Banner.js"
import * as HostList from "../../src/Sql/Pg/HostList.js"
import * as Primary from "../../src/Sql/Pg/Primary.js"
import * as Repository from "../../src/Sql/Repository.js"
import * as Startup from "../../src/Startup.js"

const badness = (url: string) => {
  try {
    HostList.parse(url)
    return undefined
  } catch (e) {
    expect(e).toBeInstanceOf(HostList.BadDatabaseUrl)
    return (e as Error).message
  }
}

describe("HostList.parse", () => {
  it("a URL of one host without target_session_attrs is left to node-postgres", () => {
    expect(HostList.parse("postgres://u:p@db:5432/laari?sslmode=require")).toBeUndefined()
    expect(HostList.parse("not a url")).toBeUndefined()
  })

  it("pg_autoctl's URI: the hosts in order, each a URL node-postgres reads, read-write", () => {
    const list = HostList.parse(
      "postgres://app:s%40cret@node-a:5432,10.0.0.2:5433,[::1]/laari?target_session_attrs=read-write&sslmode=require&application_name=x"
    )!
    expect(list.attrs).toBe("read-write")
    expect(list.hosts.map((h) => [h.host, h.port])).toEqual([
      ["node-a", 5432],
      ["10.0.0.2", 5433],
      ["::1", 5432]
    ])
    expect(list.hosts[2]!.urls).toEqual([
      "postgres://app:s%40cret@[::1]:5432/laari?sslmode=require&application_name=x&uselibpqcompat=true"
    ])
    expect(HostList.describe(list)).toBe("node-a:5432,10.0.0.2:5433,[::1]:5432")
  })

  it("sslmode as libpq: prefer tries TLS then none, disable none, absent left as is", () => {
    const prefer = HostList.parse("postgres://a:1,b:2/d?sslmode=prefer")!
    expect(prefer.hosts[0]!.urls).toEqual([
      "postgres://a:1/d?sslmode=require&uselibpqcompat=true",
      "postgres://a:1/d?sslmode=disable"
    ])
    expect(HostList.parse("postgres://a:1,b:2/d?sslmode=allow")!.hosts[1]!.urls).toEqual([
      "postgres://b:2/d?sslmode=disable"
    ])
    expect(HostList.parse("postgres://a:1,b:2/d")!.hosts[1]!.urls).toEqual(["postgres://b:2/d"])
  })

  it("without target_session_attrs several hosts mean read-write; primary and any are kept", () => {
    expect(HostList.parse("postgres://a,b/d")!.attrs).toBe("read-write")
    expect(HostList.parse("postgres://a/d?target_session_attrs=primary")!.attrs).toBe("primary")
    expect(HostList.parse("postgres://a,b/d?target_session_attrs=any")!.attrs).toBe("any")
  })

  it("refuses what cannot be used, in words", () => {
    expect(badness("postgres://a,b/d?target_session_attrs=read-mostly")).toBe(
      "target_session_attrs=read-mostly is unknown: use read-write, primary or any"
    )
    expect(badness("postgres://a,b/d?target_session_attrs=prefer-standby")).toContain("to a standby")
    expect(badness("postgres://a,,b/d")).toBe("a host of the list is empty")
    expect(badness("postgres://a:5432,b:99999/d")).toBe("port 99999 of b is not a port")
    expect(badness("postgres://a:x,b/d")).toBe('"a:x" is not a host or host:port')
    expect(badness("postgres://a,b/d?sslmode=sometimes")).toContain("sslmode=sometimes")
    expect(badness("postgres://a,b/d?port=5")).toContain("port cannot be combined")
    expect(badness("postgres://a,b/d#frag")).toContain("is not postgres://")
  })
})

describe("the banner's database line", () => {
  it("hides the password of a host list, as of one host", () => {
    expect(redactUrl("postgres://app:s3cr%40t@a:1,b:2/d?target_session_attrs=read-write")).toBe(
      "postgres://app:***@a:1,b:2/d?target_session_attrs=read-write"
    )
    expect(redactUrl("postgres://app@a:1,b:2/d")).toBe("postgres://app@a:1,b:2/d")
    expect(redactUrl("postgres://app:pw@a:1/d")).toBe("postgres://app:***@a:1/d")
  })
})

describe("start-up lines for a host list", () => {
  const failed = (cause: unknown) =>
    Cause.fail({ _tag: "SqlError", message: "PgClient: Failed to connect", cause })

  it("a malformed list or an unknown target_session_attrs: the reason, no secret", () => {
    const url = "postgres://app:secret@a,b/d?target_session_attrs=whatever"
    const line = Startup.explain(
      failed(
        new HostList.BadDatabaseUrl(
          "target_session_attrs=whatever is unknown: use read-write, primary or any"
        )
      ),
      {
        port: 1,
        databaseUrl: url
      }
    )
    expect(line).toBe(
      "DATABASE_URL cannot be used: target_session_attrs=whatever is unknown: use read-write, primary or any"
    )
  })

  it("every host a standby: one line naming them; hosts unreachable: the network line", () => {
    const url = "postgres://app:secret@a:1,b:2/d?target_session_attrs=read-write"
    const list = HostList.parse(url)!
    const standbys = Startup.explain(failed(new Primary.NoPrimary(list, ["standby", "standby"])), {
      port: 1,
      databaseUrl: url
    })
    expect(standbys).toBe(
      "every host of DATABASE_URL is a standby (read-only): PostgreSQL at a:1,b:2. Name the primary among them, or promote one (pg_autoctl show state tells which is which)"
    )
    const refused = Object.assign(new Error("connect ECONNREFUSED"), { code: "ECONNREFUSED" })
    const down = Startup.explain(failed(new Primary.NoPrimary(list, ["standby", refused])), {
      port: 1,
      databaseUrl: url
    })
    expect(down).toBe(
      "cannot reach PostgreSQL at a:1,b:2 (ECONNREFUSED): is PostgreSQL running there? Check DATABASE_URL"
    )
    expect(standbys).not.toContain("secret")
  })
})

describe("Primary.isLost", () => {
  it("a lost connection and the SQLSTATEs of a server that is no primary; not a statement's own error", () => {
    const pgError = (code: string) => ({ severity: "ERROR", code, message: "x" })
    for (const code of ["25006", "57P01", "57P02", "57P03"]) expect(Primary.isLost(pgError(code))).toBe(true)
    for (const code of ["23505", "57014", "40001", "55P03"]) expect(Primary.isLost(pgError(code))).toBe(false)
    expect(Primary.isLost(new Error("Connection terminated unexpectedly"))).toBe(true)
    expect(Primary.isLost(Object.assign(new Error("read ECONNRESET"), { code: "ECONNRESET" }))).toBe(true)
    expect(Primary.isLost(new TypeError("Cannot read properties of undefined"))).toBe(false)
  })

  it("a write refused as read-only is a 503 (Repository.isUnavailable), not a bug in the statement", () => {
    const cause = {
      severity: "ERROR",
      code: "25006",
      message: "cannot execute INSERT in a read-only transaction"
    }
    expect(Repository.isUnavailable(new SqlError({ cause, message: "Failed to execute statement" }))).toBe(
      true
    )
  })
})
