/** Types of bundle-server.mjs (a plain node script, run after `tsc -b`). */
export declare const entry: string
export declare const external: ReadonlyArray<string>
/** The files of a library that are in an esbuild metafile's inputs more than once (one build each). */
export declare const duplicates: (metafile: {
  readonly inputs: Readonly<Record<string, unknown>>
}) => Array<string>
export declare const bundleServer: () => Promise<void>
