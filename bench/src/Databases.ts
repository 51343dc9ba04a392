/**
 * The suite's databases on one PostgreSQL server, named `prefix` + part: the smoke's are its own (a full run
 * may be going on beside it) and dropped at the end; `BENCH_DB_PREFIX` gives a full run its own names too,
 * so two runs on one server do not drop each other's.
 */
import pg from "pg"

export const make = (admin: string, prefix: string) => {
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix))
    throw new Error(`BENCH_DB_PREFIX must be a lowercase SQL name, got ${prefix}`)
  const made: Array<string> = []

  const url = (name: string) => {
    const u = new URL(admin)
    u.pathname = `/${name}`
    return u.toString()
  }

  return {
    prefix,
    /** A new, empty database `prefix` + `part`; its URL. */
    fresh: async (part: string) => {
      const name = `${prefix}${part}`
      made.push(name)
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.query(`CREATE DATABASE ${name}`)
      await client.end()
      return url(name)
    },
    /** pgbench's connection arguments for database `prefix` + `part`. */
    pgbenchArgs: (part: string) => {
      const u = new URL(admin)
      const user = decodeURIComponent(u.username || "postgres")
      return ["-h", u.hostname, "-p", u.port || "5432", "-U", user, `${prefix}${part}`]
    },
    /** Drops every database `fresh` made. */
    dropAll: async () => {
      const client = new pg.Client({ connectionString: admin })
      await client.connect()
      for (const name of made) await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await client.end()
    }
  }
}
