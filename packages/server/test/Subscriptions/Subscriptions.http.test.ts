import { suite } from "../support/SubscriptionHttpSuite.js"
import * as TestServer from "../support/TestServer.js"

suite("subscriptions and checkout over HTTP on embedded PGlite", () => TestServer.start())
