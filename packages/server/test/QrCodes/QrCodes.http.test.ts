import { suite } from "../support/QrHttpSuite.js"
import * as TestServer from "../support/TestServer.js"

suite("QR codes over HTTP on embedded PGlite", () => TestServer.start())
