/**
 * A Thaana font served from this origin (Noto Sans Thaana, OFL, from `@fontsource`), so Dhivehi renders
 * on devices without one and the policy keeps `font-src 'self'`.
 */
import { createRequire } from "node:module"
import { readFileSync } from "node:fs"

const require = createRequire(import.meta.url)

/** Regular, medium (Dhivehi's running text: Thaana at 400 reads thin beside Latin at 400) and bold. */
const Weights = [400, 500, 700] as const

const load = (weight: (typeof Weights)[number]): Uint8Array =>
  readFileSync(
    require.resolve(`@fontsource/noto-sans-thaana/files/noto-sans-thaana-thaana-${weight}-normal.woff2`)
  )

export const files = Object.fromEntries(Weights.map((w) => [`thaana-${w}.woff2`, load(w)]))

/** The `@font-face` rules; the font covers only Thaana, so Latin text keeps the system font. */
export const faces = (assets: string) =>
  Weights.map(
    (w) =>
      `@font-face{font-family:"Noto Sans Thaana";font-weight:${w};font-display:swap;src:url(${assets}/assets/thaana-${w}.woff2) format("woff2");unicode-range:U+0780-07BF,U+060C,U+061B,U+061F,U+FDF2,U+FDFD}`
  ).join("\n")
