/** Types of ensure-built.mjs (a plain node script, so `pnpm start` needs no compiler to decide). */
export interface Build {
  readonly root: string
  readonly tsconfig: string
  readonly stamp: string
  readonly outputs: ReadonlyArray<string>
  /** Scripts run after `tsc -b` by the default build (the server's and the CLI's bundles); inputs of the build too. */
  readonly bundles?: ReadonlyArray<string>
}
export declare const staleness: (build: Build) => string | undefined
export declare const ensureBuilt: (build: Build & { readonly build?: (reason: string) => void }) => boolean
export declare const server: Build & { readonly bundles: ReadonlyArray<string> }
/** Runs the module `entry` in this process as `node <entry> ...args` would. */
export declare const runEntry: (entry: string, args: ReadonlyArray<string>) => Promise<void>
