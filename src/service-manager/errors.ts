/**
 * The one error the service manager throws. `configuration` marks what the user fixes in a file or a
 * variable (the command exits 2); everything else exits 1. The message names the file or variable and
 * the fix.
 */
export class ServiceError extends Error {
  constructor(
    message: string,
    readonly configuration = false,
  ) {
    super(message);
  }
}
