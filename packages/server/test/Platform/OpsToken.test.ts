/**
 * Where the CLI and `pnpm start` look for the repository's `.data` (the saved ops token): found from the
 * source (`src/Platform`), as from dist and the bundle, however deep the file sits.
 */
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as OpsToken from "../../src/Platform/OpsToken.js"

const repository = Path.resolve(Path.dirname(fileURLToPath(import.meta.url)), "../../../..")

describe("OpsToken.repositoryDataDir", () => {
  it("is the repository's .data when run from its sources", () => {
    expect(OpsToken.repositoryDataDir()).toBe(Path.join(repository, ".data"))
  })

  it("is searched after LAARI_DATA_DIR and ./.data, each once", () => {
    const dirs = OpsToken.searchDirs("/tmp/elsewhere")
    expect(dirs[0]).toBe("/tmp/elsewhere")
    expect(dirs).toContain(Path.join(repository, ".data"))
    expect(new Set(dirs).size).toBe(dirs.length)
  })
})
