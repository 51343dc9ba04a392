/**
 * Named prepared statements for batches (`PgBatch`): a statement text this process sends
 * again and again (a charge's claim, its lock, its writes) is parsed and planned by
 * PostgreSQL once per connection, under a name, instead of once per use. What runs is unchanged: the
 * same text, the same parameters, in the same order; only the Parse message is left out once the
 * connection holds the statement.
 *
 * A name is recorded for a connection only once the server has surely parsed it: every statement of a
 * batch that succeeded, or that completed ahead of the one an error answered. The statement the error
 * answered may or may not have been parsed, so its name is never used again (its text gets a new name
 * next time): a stray statement costs the connection a little memory until it closes, never a wrong
 * answer. The names each connection is given are bounded (`MaxNamed`), and only texts already seen in
 * this process (`Recurring`) get one, so texts that vary (a batch of renewals of its own size) stay
 * unnamed as before.
 *
 * A connection that can drop statements as it goes (`Options.evict`: PGlite's one session, which lives as
 * long as the process) instead holds at most `MaxNamed` at a time: past it, the least recently used is
 * dropped (a Close message ahead of the next batch: `dropped`) to name the new one. A statement whose Parse
 * may have run but whose name was not recorded, or a stale one, is dropped too.
 */

/** Times a text is seen in this process before it is prepared by name. */
const Recurring = 2

/** Texts counted before the count starts over (a bound on what the counting keeps). */
const MaxCounted = 500

/** Names a connection is given at most; past it, its statements go unnamed, as before. */
export const MaxNamed = 256

/**
 * Never named: transaction control has no plan worth keeping, and a COMMIT whose name the server had
 * dropped would fail at Bind without ending the transaction.
 */
const Control = new Set(["BEGIN", "COMMIT", "ROLLBACK"])

/** The texts seen, and how often, in this process. */
const seen = new Map<string, number>()

/** What one connection has prepared. */
interface Names {
  /** Texts whose named statement the server holds. */
  readonly byText: Map<string, string>
  /** Names given so far on this connection, recorded or not (so none is given twice). */
  given: number
  /** Whether the connection drops statements (`Options.evict`); then `byText` is in order of last use. */
  evicts: boolean
  /** Names to drop on the server ahead of the next batch (`dropped`). */
  drop: Array<string>
}

const connections = new WeakMap<object, Names>()

const namesOf = (connection: object): Names => {
  let names = connections.get(connection)
  if (names === undefined) {
    names = { byText: new Map(), given: 0, evicts: false, drop: [] }
    connections.set(connection, names)
  }
  return names
}

/** How one statement of a batch is sent: under `name` (`""`: unnamed), with a Parse message or not. */
export interface Plan {
  readonly name: string
  readonly parse: boolean
}

const Unnamed: Plan = { name: "", parse: true }

export interface Options {
  /** The connection drops statements it no longer needs (see the module's comment). */
  readonly evict?: boolean
}

/**
 * Makes room for one more name on an evicting connection: drops the least recently used statement that
 * this batch does not use. False when there is none to drop.
 */
const evictOne = (names: Names, batchTexts: ReadonlyArray<string>): boolean => {
  for (const [text, name] of names.byText) {
    if (batchTexts.includes(text)) continue
    names.byText.delete(text)
    names.drop.push(name)
    return true
  }
  return false
}

/** How each of `texts`, in order in one batch on `connection`, is sent. */
export const plan = (
  connection: object,
  texts: ReadonlyArray<string>,
  options?: Options
): ReadonlyArray<Plan> => {
  const names = namesOf(connection)
  const evicts = options?.evict === true
  names.evicts ||= evicts
  // Named earlier in this same batch: its Parse goes ahead of this use (and if it fails, so does this).
  const batch = new Map<string, string>()
  return texts.map((text) => {
    if (Control.has(text)) return Unnamed
    const held = names.byText.get(text)
    if (held !== undefined && evicts) {
      // Last used now: the last to be dropped.
      names.byText.delete(text)
      names.byText.set(text, held)
    }
    const name = held ?? batch.get(text)
    if (name !== undefined) return { name, parse: false }
    const count = (seen.get(text) ?? 0) + 1
    if (seen.size >= MaxCounted && count === 1) seen.clear()
    seen.set(text, count)
    if (count < Recurring) return Unnamed
    if (
      evicts ? names.byText.size + batch.size >= MaxNamed && !evictOne(names, texts) : names.given >= MaxNamed
    )
      return Unnamed
    const given = `laari_${++names.given}`
    batch.set(text, given)
    return { name: given, parse: true }
  })
}

/**
 * After the batch: the first `completed` statements ran (all of them when it succeeded), so the server
 * holds the statements they parsed by name. `error`, the batch's failure if it failed: when it says the
 * connection's names are stale, they are forgotten (`forgetOnStale`).
 */
export const settle = (
  connection: object,
  texts: ReadonlyArray<string>,
  plans: ReadonlyArray<Plan>,
  completed: number,
  error?: unknown
): void => {
  const names = namesOf(connection)
  for (let i = 0; i < plans.length; i++) {
    const p = plans[i]!
    if (!p.parse || p.name === "") continue
    if (i < completed) names.byText.set(texts[i]!, p.name)
    // Its Parse may have run: an evicting connection drops it rather than keep it unnamed for good.
    else if (names.evicts) names.drop.push(p.name)
  }
  if (error !== undefined) forgetOnStale(connection, error)
}

/** The names an evicting connection must drop (Close) ahead of its next batch; taken once. */
export const dropped = (connection: object): ReadonlyArray<string> => {
  const names = namesOf(connection)
  if (names.drop.length === 0) return []
  const drop = names.drop
  names.drop = []
  return drop
}

/**
 * SQLSTATEs that say the connection's prepared statements are not what was recorded: one gone
 * (`26000`, after a `DEALLOCATE` or `DISCARD`), or one whose result type a migration changed
 * (`0A000`, "cached plan must not change result type", e.g. a column added to a table read with `*`),
 * or one whose parameter types, fixed at Parse, no longer fit a column whose type a migration changed
 * (`42804`, `42883`: never raised by a correct statement of laari's, so a genuine one only costs a retry).
 * The connection's names are then forgotten and its texts prepared anew (under new names) on their
 * next use; the transaction it failed is run again once (`PgTransaction`).
 */
const Stale = new Set(["26000", "0A000", "42804", "42883"])

/** Whether `error` (pg's) says the connection's named statements are stale. */
export const isStale = (error: unknown): boolean => {
  const code = (error as { readonly code?: unknown } | null | undefined)?.code
  return typeof code === "string" && Stale.has(code)
}

const forgetOnStale = (connection: object, error: unknown): void => {
  if (!isStale(error)) return
  const names = namesOf(connection)
  if (names.evicts) names.drop.push(...names.byText.values())
  names.byText.clear()
}
