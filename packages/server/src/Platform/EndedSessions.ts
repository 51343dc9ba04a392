/**
 * Sessions ended by signing out, for the dashboard and the wallet: their cookies are sealed, so a saved
 * copy would otherwise work until it expires. The port through which the pages refuse one in every
 * process and on every host, across restarts, without naming where they are kept (`Sql/EndedSessions`).
 */
import { randomBytes } from "node:crypto"
import { Context, type Effect } from "effect"

/** A new session's id: 128 random bits, in hex. */
export const newId = (): string => randomBytes(16).toString("hex")

export interface EndedSessionsService {
  /** Whether session `id` was signed out. */
  readonly isEnded: (id: string) => Effect.Effect<boolean>
  /** Ends session `id`, which would have expired at `expiresAt`; forgets sessions past their expiry. */
  readonly end: (id: string, expiresAt: Date) => Effect.Effect<void>
}

export class EndedSessions extends Context.Tag("laari/server/EndedSessions")<
  EndedSessions,
  EndedSessionsService
>() {}
