/**
 * Debian's Chromium driven by playwright-core, for the tests of pages; never a downloaded browser. In CI
 * (`CI=true`) a missing Chromium fails the run instead of skipping it.
 */
import { existsSync, mkdirSync } from "node:fs"
import * as Path from "node:path"
import { fileURLToPath } from "node:url"
import { type Browser, chromium, type Page } from "playwright-core"

export const Chromium = "/usr/bin/chromium"
export const available = existsSync(Chromium)

export const requireOrWarn = (suite: string) => {
  if (available) return
  if (process.env.CI === "true")
    throw new Error(`${Chromium} is missing: .ci/run installs it; the browser tests must run in CI`)
  console.warn(`\n!!! SKIPPING ${suite}: ${Chromium} is missing (apt-get install -y chromium) !!!\n`)
}

export const launch = (): Promise<Browser> =>
  chromium.launch({ executablePath: Chromium, args: ["--no-sandbox"] })

/** Where screenshots go: `artifacts/screenshots` at the repository root (CI keeps it). */
export const screenshots = Path.resolve(
  fileURLToPath(import.meta.url),
  "../../../../../artifacts/screenshots"
)

/** Screenshots of the page at a phone's width (375 px) and a desktop's (1280 px). */
export const capture = async (page: Page, name: string) => {
  mkdirSync(screenshots, { recursive: true })
  // Web fonts load lazily (the Thaana one only once Thaana text is laid out): wait for them.
  await page.evaluate(async () => {
    await Promise.all([
      document.fonts.load('400 16px "Noto Sans Thaana"', "ދ"),
      document.fonts.load('500 16px "Noto Sans Thaana"', "ދ"),
      document.fonts.load('700 16px "Noto Sans Thaana"', "ދ")
    ])
    await document.fonts.ready
  })
  const size = page.viewportSize() ?? { width: 1280, height: 900 }
  for (const width of [375, 1280]) {
    await page.setViewportSize({ width, height: 900 })
    await page.screenshot({ path: Path.join(screenshots, `${name}-${width}.png`), fullPage: true })
  }
  await page.setViewportSize(size)
}
