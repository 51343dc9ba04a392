export * as Arbitraries from "./Arbitraries.js"
export * as MemoryBalance from "./MemoryBalance.js"
export * as ControllableClock from "./ControllableClock.js"
export * as MemoryDb from "./MemoryDb.js"
export * as MemoryMerchants from "./MemoryMerchants.js"
export * as MemoryQrImages from "./MemoryQrImages.js"
export * as MemorySeed from "./MemorySeed.js"
export * as MemoryStore from "./MemoryStore.js"
export * as MemoryWallet from "./MemoryWallet.js"
export * as Seed from "./Seed.js"
export * as StandardWebhooksVector from "./fixtures/StandardWebhooksVector.js"
export * as Testkit from "./Testkit.js"
// `StoreContract` registers vitest suites, so it is not re-exported here (the library must load outside a
// test runner): adapters import it as `@laari/testkit/StoreContract` (`contract/StoreContract.ts`).
