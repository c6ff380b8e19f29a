/** The command line was wrong: exit code 2, with a pointer to the command's help. */
export class UsageError extends Error {
  override readonly name = 'UsageError'
}

/** The command ran and failed (refused, unreachable, unreadable): exit code 1. */
export class CommandFailure extends Error {
  override readonly name = 'CommandFailure'
}
