/**
 * Loading xterm: `@xterm/headless` and its unicode11 addon, imported once per process on first use.
 *
 * Importing xterm costs ~50 ms and ~46 MiB, which a process that never snapshots a screen must not pay
 * (1000 idle sessions fit in 100 MiB only without it): it is loaded with a dynamic `import()`, and only
 * types are imported statically.
 *
 * @module
 */
import type { Terminal } from "@xterm/headless";
import type { Unicode11Addon } from "@xterm/addon-unicode11";

/** The classes xterm's packages provide, once loaded. */
export interface Xterm {
  readonly Terminal: typeof Terminal;
  readonly Unicode11Addon: typeof Unicode11Addon;
}

let loading: Promise<Xterm> | null = null;

/** xterm's idle task queue (memory clean-up after a resize) reports a slow task on `console.warn`. */
const XTERM_DEADLINE_WARNING = /^task queue exceeded allotted deadline by \d+ms$/;

let muted = false;

/**
 * Drops xterm's deadline warnings: they would reach the CLI's stderr (which carries Specter's own
 * messages) whenever the machine is busy, and say nothing a user can act on. Every other warning passes.
 */
function muteDeadlineWarnings(): void {
  if (muted) return;
  muted = true;
  const warn = console.warn;
  console.warn = function (...args: unknown[]): void {
    if (args.length === 1 && typeof args[0] === "string" && XTERM_DEADLINE_WARNING.test(args[0])) return;
    warn.apply(console, args);
  };
}

/** Loads xterm and the unicode11 addon once per process (later calls share the first load). */
export function loadXterm(): Promise<Xterm> {
  muteDeadlineWarnings();
  loading ??= Promise.all([import("@xterm/headless"), import("@xterm/addon-unicode11")]).then(
    ([headless, unicode]) => ({
      Terminal: headless.default.Terminal,
      Unicode11Addon: unicode.default.Unicode11Addon,
    }),
    (error: unknown) => {
      loading = null; // Let a later request try again rather than fail forever.
      throw error;
    },
  );
  return loading;
}
