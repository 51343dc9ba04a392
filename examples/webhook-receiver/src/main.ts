/**
 * `LAARI_WEBHOOK_SECRET=whsec_... PORT=4242 pnpm start`: prints every event laari delivers.
 * To try it, forward the merchant's events with `laari listen --forward-to http://localhost:4242/` and set
 * LAARI_WEBHOOK_SECRET to the secret it prints (or pass it `--secret`); endpoints may target local
 * addresses only on a laari started with LAARI_WEBHOOK_ALLOW_PRIVATE=true.
 */
import { createReceiver } from "./receiver.js"

const secrets = (process.env.LAARI_WEBHOOK_SECRET ?? "").split(",").filter((s) => s !== "")
if (secrets.length === 0) {
  console.error(
    "Set LAARI_WEBHOOK_SECRET to the endpoint's whsec_ secret (two, comma-separated, during a rotation)"
  )
  process.exit(1)
}
const port = Number(process.env.PORT ?? 4242)

createReceiver({
  secrets,
  onEvent: (e) => console.log(`${e.type} ${e.id} sequence ${e.sequence} ${JSON.stringify(e.data.object)}`),
  onSkip: (reason, id) => console.log(`skipped (${reason}) ${id ?? ""}`)
}).listen(port, () => console.log(`listening on http://localhost:${port}/`))
