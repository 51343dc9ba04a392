import * as StoreContract from "../src/StoreContract.js"
import * as Testkit from "../src/Testkit.js"

StoreContract.suite("memory", () => Testkit.ports())
