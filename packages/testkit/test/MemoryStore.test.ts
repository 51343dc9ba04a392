import * as StoreContract from "../src/contract/StoreContract.js"
import * as Testkit from "../src/Testkit.js"

StoreContract.suite("memory", () => Testkit.ports())
