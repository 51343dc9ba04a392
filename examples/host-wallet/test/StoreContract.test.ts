/**
 * The host's ports through the testkit's store contract: the whole suite (every repository, the
 * transactions, and the wallet tests: refusal order, balanced idempotent transfers, one move under
 * concurrency, rollback of a transfer with its transaction) with the host ledger as the `Wallet`.
 */
import * as StoreContract from "@laari/testkit/StoreContract"
import * as HostPorts from "../src/HostPorts.js"

StoreContract.suite("host ledger", () => HostPorts.ports())
