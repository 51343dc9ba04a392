/**
 * A Thaana font served from this origin (Noto Sans Thaana, OFL, from `@fontsource`), so Dhivehi renders
 * on devices without one and the policy keeps `font-src 'self'`.
 */
import { createRequire } from "node:module"
import { readFileSync } from "node:fs"

const require = createRequire(import.meta.url)

const load = (weight: 400 | 700): Uint8Array =>
  readFileSync(
    require.resolve(`@fontsource/noto-sans-thaana/files/noto-sans-thaana-thaana-${weight}-normal.woff2`)
  )

export const files = { "thaana-400.woff2": load(400), "thaana-700.woff2": load(700) } as const

/** The `@font-face` rules; the font covers only Thaana, so Latin text keeps the system font. */
export const faces = (assets: string) =>
  ([400, 700] as const)
    .map(
      (w) =>
        `@font-face{font-family:"Noto Sans Thaana";font-weight:${w};font-display:swap;src:url(${assets}/assets/thaana-${w}.woff2) format("woff2");unicode-range:U+0780-07BF,U+060C,U+061B,U+061F,U+FDF2,U+FDFD}`
    )
    .join("\n")
