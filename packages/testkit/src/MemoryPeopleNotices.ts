/**
 * Core's `PeopleNotices` in memory: an invitation's message is kept in the `MemoryDb`, in the caller's
 * transaction (gone with it when it rolls back, as the SQL outbox's row is), and read back by tests.
 * Nothing is sent.
 */
import { PeopleNotices } from "@laari/core"
import { Chunk, Context, Effect, Layer } from "effect"
import { MemoryDb } from "./MemoryDb.js"

export interface MemoryPeopleNoticesService {
  /** Every invitation message queued by a committed transaction (or the current one), oldest first. */
  readonly queued: Effect.Effect<ReadonlyArray<PeopleNotices.InvitationNotice>>
}

export class MemoryPeopleNotices extends Context.Tag("laari/testkit/MemoryPeopleNotices")<
  MemoryPeopleNotices,
  MemoryPeopleNoticesService
>() {}

/** The port, and the queue's reader, over the `MemoryDb`. */
export const layer: Layer.Layer<PeopleNotices.PeopleNotices | MemoryPeopleNotices, never, MemoryDb> =
  Layer.effectContext(
    Effect.map(MemoryDb, (db) =>
      Context.make(PeopleNotices.PeopleNotices, {
        invitation: (notice) =>
          db.update((t) => ({ ...t, peopleNotices: Chunk.append(t.peopleNotices, notice) }))
      }).pipe(
        Context.add(MemoryPeopleNotices, {
          queued: Effect.map(db.get, (t) => Chunk.toReadonlyArray(t.peopleNotices))
        })
      )
    )
  )
