/** A Node bench script's `--name=value` flags. */

/** The value of `--name=…`, or undefined when it is not given. */
export const flag = (name: string): string | undefined => process.argv.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3)

/** The number given as `--name=N`, or undefined when it is not given, not a number, or 0. */
export const numberFlag = (name: string): number | undefined => Number(flag(name)) || undefined
