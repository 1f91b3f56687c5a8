/**
 * The remote listener's error class.
 *
 * @module
 */
import { type ErrorCode, SpecterError, type SpecterErrorOptions } from "../errors.ts";

/** Codes of remote access failures. */
export type RemoteErrorCode = Extract<ErrorCode, `E_REMOTE_${string}`>;

/** A remote access failure (a refused request, a listener that cannot start, a bad token file). */
export class RemoteError extends SpecterError {
  constructor(code: RemoteErrorCode, message: string, options: SpecterErrorOptions = {}) {
    super(code, message, options);
    this.name = "RemoteError";
  }
}
