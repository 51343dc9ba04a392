/**
 * The failover suite (`pnpm test:failover`, its own CI step): a pg_auto_failover formation of a monitor and
 * three PostgreSQL nodes and two laari hosts behind HAProxy, started on this machine (Debian's
 * `postgresql-15-auto-failover` and `haproxy`, `scripts/install-ha.sh`). Not part of `pnpm test`: it needs
 * those packages and the `postgres` user, and takes minutes of formation start-up and faults.
 */
import { defineConfig } from "vitest/config"
import { budgets, sourceConditions } from "../../vitest.shared"

export default defineConfig({
  ...sourceConditions,
  root: import.meta.dirname,
  test: {
    ...budgets,
    name: "failover",
    include: ["test/**/*.ha.test.ts"],
    globalSetup: ["../../scripts/build-dist.ts"]
  }
})
