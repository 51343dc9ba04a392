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
export declare const ensureBuilt: {
  (build: Build & { readonly build: (reason: string) => Promise<void> }): Promise<boolean>
  (build: Build & { readonly build?: (reason: string) => void }): boolean
}
/** The project (its tsconfig) whose compiling a line of `tsc -b --verbose` announces, if any. */
export declare const compiling: (line: string) => string | undefined
/** The build of `pnpm start` and `pnpm laari`, saying as it goes what it does. */
export declare const buildWithProgress: (
  build: Build & {
    readonly tsc?: string
    readonly log?: (line: string) => void
    readonly show?: (line: string) => void
    readonly quietMs?: number
  }
) => () => Promise<void>
export declare const server: Build & { readonly bundles: ReadonlyArray<string> }
/** Runs the module `entry` in this process as `node <entry> ...args` would. */
export declare const runEntry: (entry: string, args: ReadonlyArray<string>) => Promise<void>
