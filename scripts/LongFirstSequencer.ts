/**
 * The order `pnpm test` starts its files in: the long ones first, so that the two workers finish
 * together instead of one long file running alone at the end.
 *
 * Vitest's own order runs files by their last durations when its cache has them, and by size when it
 * does not, as in a clean clone (CI): there the smallest files start last, and some of the longest
 * are a few lines that run a shared suite (`Subscriptions.*`, `Mandates.*`: `support/*HttpSuite.ts`).
 * `Long` names the files that take a minute or more, about longest first (measured side by side, two
 * files at a time); the rest keep vitest's order after them. A file missing from the list only
 * starts later than it could.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node"

/** Repository paths, about longest first, with `DATABASE_URL` set (the PostgreSQL files run). */
export const Long: ReadonlyArray<string> = [
  "packages/server/test/Cli/Cli.test.ts",
  "packages/server/test/Pages/Pages.test.ts",
  "packages/server/test/Subscriptions/Subscriptions.http.test.ts",
  "packages/server/test/Subscriptions/Subscriptions.pg.test.ts",
  "packages/server/test/Pages/Accessibility.test.ts",
  "packages/server/test/Mandates/Mandates.pg.test.ts",
  "packages/server/test/Http/Edge.test.ts",
  "packages/server/test/GraphQL/GraphQL.test.ts",
  "packages/server/test/Webhooks/Webhooks.test.ts",
  "packages/server/test/Mandates/Mandates.http.test.ts",
  "packages/server/test/Http/Contract.test.ts",
  "packages/server/test/Notify/Notify.test.ts",
  "packages/server/test/Subscriptions/Billing.test.ts",
  "packages/server/test/Sql/Reliability.pg.test.ts",
  "packages/server/test/Sql/Crash.pg.test.ts",
  "packages/server/test/Ops/DevelopmentCodes.test.ts",
  "packages/server/test/Sql/SqlSubscriptions.test.ts"
]

const rank = (spec: TestSpecification) => {
  const path = spec.moduleId.replaceAll("\\", "/")
  const i = Long.findIndex((long) => path.endsWith(`/${long}`))
  return i === -1 ? Long.length : i
}

export default class LongFirstSequencer extends BaseSequencer {
  override async sort(files: Array<TestSpecification>): Promise<Array<TestSpecification>> {
    const theirs = await super.sort(files)
    // Array.prototype.sort is stable: the files outside the list keep vitest's order.
    return [...theirs].sort((a, b) => rank(a) - rank(b))
  }
}
