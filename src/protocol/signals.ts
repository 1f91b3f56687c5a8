/**
 * Signal names as frames, driver messages and results carry them.
 *
 * @module
 */

/** The signal names Specter can send or report, without the `SIG` prefix. */
export const SIGNAL_NAMES = [
  "HUP",
  "INT",
  "QUIT",
  "ILL",
  "TRAP",
  "ABRT",
  "BUS",
  "FPE",
  "KILL",
  "USR1",
  "SEGV",
  "USR2",
  "PIPE",
  "ALRM",
  "TERM",
  "CHLD",
  "CONT",
  "STOP",
  "TSTP",
  "TTIN",
  "TTOU",
  "URG",
  "XCPU",
  "XFSZ",
  "VTALRM",
  "PROF",
  "WINCH",
  "IO",
  "SYS",
] as const;

/** A signal name without the `SIG` prefix, e.g. `"TERM"`. */
export type SignalName = typeof SIGNAL_NAMES[number];
