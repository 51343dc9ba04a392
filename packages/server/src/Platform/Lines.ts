/**
 * Log lines written together: stdout is a pipe under a supervisor or a log shipper, and Node writes to a
 * pipe synchronously on Linux, one system call a line. Under load the access log alone made one per
 * request (about a tenth of a charge's cost in `pnpm bench`). Lines are kept until the event loop's turn
 * ends (`setImmediate`) and written as one chunk, in order; at exit what is kept is written at once.
 * A `kill -9` loses at most the lines of the turn it interrupts.
 */
export interface Lines {
  /** Keeps `line` (without its newline) for the end of this turn. */
  readonly write: (line: string) => void
  /** Writes what is kept now. */
  readonly flush: () => void
}

/** Lines handed to `sink` a chunk per turn of the event loop, joined by newlines. */
export const make = (sink: (chunk: string) => void): Lines => {
  let kept: Array<string> = []
  let scheduled = false
  const flush = () => {
    scheduled = false
    if (kept.length === 0) return
    const chunk = kept.join("\n")
    kept = []
    sink(chunk)
  }
  return {
    write: (line) => {
      kept.push(line)
      if (!scheduled) {
        scheduled = true
        setImmediate(flush)
      }
    },
    flush
  }
}

let stdoutLines: Lines | undefined

/**
 * This process's stdout, kept a turn and written by `console.log` (which ends the chunk with a newline and
 * ignores a reader gone away); flushed when the process exits (a pipe is written
 * synchronously, so the last lines are out before it ends; a `kill -9` loses one turn's).
 */
export const stdout = (): Lines => {
  if (stdoutLines === undefined) {
    const lines = make((chunk) => globalThis.console.log(chunk))
    process.once("exit", lines.flush)
    stdoutLines = lines
  }
  return stdoutLines
}
