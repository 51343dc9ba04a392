export * as Seed from "./Seed.js"
