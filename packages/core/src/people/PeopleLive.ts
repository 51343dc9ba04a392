/**
 * The `People` service over `PeopleStore`, `Credentials` and `PeopleNotices`. Every change runs in one
 * transaction with its audit note (`Audit.note`, as whoever the edge runs it as). Sessions are dated by
 * wall time (`WallClock`): a sandbox's manual clock must not keep someone signed in, or sign them out.
 *
 * What races is settled by the store's conditional writes: a session is replaced only by the request
 * that ends it, a TOTP step and a recovery code are used once, an invitation is accepted once; a team
 * change is decided on the team locked (`lockTeam`), so two demotions cannot both leave it ownerless.
 */
import { Effect, Layer } from "effect"
import type { Audit } from "../audit/Audit.js"
import type { Crypto } from "../kernel/Crypto.js"
import type { Transactor } from "../kernel/Transactor.js"
import type { WallClock } from "../kernel/WallClock.js"
import type { MerchantsStore } from "../directory/MerchantsStore.js"
import type { Credentials } from "./Credentials.js"
import { People, type PeopleService } from "./People.js"
import type { PeopleNotices } from "./PeopleNotices.js"
import * as PeopleParts from "./PeopleParts.js"
import * as PeopleSignIn from "./PeopleSignIn.js"
import type { PeopleStore } from "./PeopleStore.js"
import * as PeopleTeams from "./PeopleTeams.js"

export { Issuer, sessionOf, userOf } from "./PeopleParts.js"

/** The service over the ports in context. */
export const make: Effect.Effect<
  PeopleService,
  never,
  PeopleStore | Credentials | PeopleNotices | Transactor | WallClock | Crypto | Audit | MerchantsStore
> = Effect.map(PeopleParts.make, (parts) => ({ ...PeopleSignIn.make(parts), ...PeopleTeams.make(parts) }))

/** `People` over the ports it names: the store, credentials, notices, transactions, wall time, ids, the audit log. */
export const layer: Layer.Layer<
  People,
  never,
  PeopleStore | Credentials | PeopleNotices | Transactor | WallClock | Crypto | Audit | MerchantsStore
> = Layer.effect(People, make)
