/**
 * The text a QR code carries: EMV's printable ASCII for the merchant name, city and labels (59, 60, 62),
 * Thaana romanized rather than dropped, and local-script text for the language template (64). Pure string
 * functions, used by `QrScheme` when it builds a payload.
 */

/** Letters and signs that do not decompose to ASCII under NFKD. */
const latinExtras: ReadonlyMap<string, string> = new Map([
  ["ß", "ss"],
  ["ẞ", "SS"],
  ["æ", "ae"],
  ["Æ", "AE"],
  ["œ", "oe"],
  ["Œ", "OE"],
  ["ø", "o"],
  ["Ø", "O"],
  ["đ", "d"],
  ["Đ", "D"],
  ["ð", "d"],
  ["Ð", "D"],
  ["þ", "th"],
  ["Þ", "Th"],
  ["ł", "l"],
  ["Ł", "L"],
  ["ı", "i"],
  ["ħ", "h"],
  ["Ħ", "H"],
  ["ŋ", "ng"],
  ["Ŋ", "Ng"],
  ["‘", "'"],
  ["’", "'"],
  ["‚", "'"],
  ["‛", "'"],
  ["“", '"'],
  ["”", '"'],
  ["„", '"'],
  ["«", '"'],
  ["»", '"'],
  ["‐", "-"],
  ["‑", "-"],
  ["‒", "-"],
  ["–", "-"],
  ["—", "-"],
  ["×", "x"]
])

/** Thaana consonants in Malé Latin, the romanization Maldivian signage uses. Alifu is handled apart. */
const thaanaConsonants: ReadonlyMap<string, string> = new Map([
  ["\u0780", "h"],
  ["\u0781", "sh"],
  ["\u0782", "n"],
  ["\u0783", "r"],
  ["\u0784", "b"],
  ["\u0785", "lh"],
  ["\u0786", "k"],
  ["\u0788", "v"],
  ["\u0789", "m"],
  ["\u078A", "f"],
  ["\u078B", "dh"],
  ["\u078C", "th"],
  ["\u078D", "l"],
  ["\u078E", "g"],
  ["\u078F", "gn"],
  ["\u0790", "s"],
  ["\u0791", "d"],
  ["\u0792", "z"],
  ["\u0793", "t"],
  ["\u0794", "y"],
  ["\u0795", "p"],
  ["\u0796", "j"],
  ["\u0797", "ch"],
  ["\u0798", "th"],
  ["\u0799", "h"],
  ["\u079A", "kh"],
  ["\u079B", "dh"],
  ["\u079C", "z"],
  ["\u079D", "sh"],
  ["\u079E", "s"],
  ["\u079F", "dh"],
  ["\u07A0", "t"],
  ["\u07A1", "z"],
  ["\u07A2", ""],
  ["\u07A3", "gh"],
  ["\u07A4", "q"],
  ["\u07A5", "w"],
  ["\u07B1", "n"]
])

/** Thaana vowel signs (fili). */
const thaanaVowels: ReadonlyMap<string, string> = new Map([
  ["\u07A6", "a"],
  ["\u07A7", "aa"],
  ["\u07A8", "i"],
  ["\u07A9", "ee"],
  ["\u07AA", "u"],
  ["\u07AB", "oo"],
  ["\u07AC", "e"],
  ["\u07AD", "ey"],
  ["\u07AE", "o"],
  ["\u07AF", "oa"]
])

const alifu = "\u0787"
const sukun = "\u07B0"

/**
 * Thaana to Malé Latin, simplified: consonant and vowel sign letter by letter, alifu as the vowel carrier,
 * alifu with sukun doubling the next consonant (`ބައްޕަ` -> `Bappa`) or, at the end of a word, `h`. Words
 * are capitalized. Other characters pass through.
 */
const romanizeThaana = (text: string): string => {
  const chars = Array.from(text)
  let out = ""
  for (let i = 0; i < chars.length; i++) {
    const c = chars[i]!
    let piece: string | undefined
    if (c === alifu) {
      if (chars[i + 1] === sukun) {
        // Stryker disable next-line StringLiteral: no character and `""` are both no consonant; the fallback only narrows the type
        const following = thaanaConsonants.get(chars[i + 2] ?? "")
        piece = following ? following[0]! : "h"
        i++
      } else piece = ""
    } else if (c === sukun) piece = ""
    else piece = thaanaConsonants.get(c) ?? thaanaVowels.get(c)
    if (piece === undefined) {
      out += c
      continue
    }
    if (piece.length > 0 && !/[A-Za-z]$/.test(out)) piece = piece[0]!.toUpperCase() + piece.slice(1)
    out += piece
  }
  return out
}

/**
 * `text` in printable ASCII (0x20-0x7E), EMV's common character set: Thaana romanized, accents dropped
 * (`Café` -> `Cafe`), a few letters spelled out (`ß` -> `ss`), typographic quotes and dashes made plain,
 * anything else removed, whitespace collapsed and trimmed. May be empty.
 */
export const transliterate = (text: string): string => {
  let s = romanizeThaana(text)
  s = Array.from(s, (c) => latinExtras.get(c) ?? c).join("")
  s = s.normalize("NFKD").replace(/\p{M}/gu, "")
  // Stryker disable next-line Regex: the runs of spaces are collapsed again below, once the characters outside ASCII are gone
  s = s.replace(/\s+/gu, " ")
  s = s.replace(/[^\x20-\x7E]/g, "")
  return s.replace(/ {2,}/g, " ").trim()
}

/**
 * Local-script text for the language template: control characters removed, whitespace collapsed, cut to
 * `max` characters without separating a letter from its vowel signs; `null` when nothing is left.
 */
export const localText = (text: string, max: number): string | null => {
  const clean = text
    .normalize("NFC")
    .replace(/[\uD800-\uDFFF]/gu, "")
    .replace(/\p{Cc}/gu, " ")
    .replace(/\s+/gu, " ")
    .trim()
  const chars = Array.from(clean)
  let end = Math.min(max, chars.length)
  // A cut just before a combining mark would strand the mark's letter without it: cut before the letter.
  // Stryker disable next-line ConditionalExpression,EqualityOperator: with nothing cut `chars[end]` is past the end, no mark, so the loop stops at once anyway
  if (end < chars.length) {
    while (end > 0 && /\p{M}/u.test(chars[end]!)) end--
  }
  const cut = chars.slice(0, end).join("").trimEnd()
  return cut.length > 0 ? cut : null
}
