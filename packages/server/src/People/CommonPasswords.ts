/**
 * The common passwords a person may not choose: the 49,233 of zxcvbn's "passwords-common" dictionary
 * (the npm package `@zxcvbn-ts/language-common`, MIT, from leaked-password frequency lists), compared
 * case-insensitively. Only those of 12 characters and more can matter once the length is checked; the
 * whole list is kept all the same, so a longer minimum later needs nothing here. Read into a set on first
 * use (about 25 ms), then kept.
 */
import { dictionary } from "@zxcvbn-ts/language-common"

let passwords: ReadonlySet<string> | undefined

const all = (): ReadonlySet<string> => {
  passwords ??= new Set(dictionary["passwords-common"].map((p) => p.toLowerCase()))
  return passwords
}

/** Whether `password` is in the list, whatever its letters' case. */
export const has = (password: string): boolean => all().has(password.toLowerCase())

/** How many passwords the list holds. */
export const size = (): number => all().size
