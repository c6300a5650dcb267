import pkg from '../../package.json' with { type: 'json' }

/** The version of this build, from package.json (inlined by the bundler). */
export const VERSION: string = pkg.version
