import { suite } from "../support/MandateHttpSuite.js"
import * as TestServer from "../support/TestServer.js"

suite("mandates over HTTP on embedded PGlite", () => TestServer.start())
