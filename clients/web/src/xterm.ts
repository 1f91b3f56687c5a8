/// <reference lib="dom" />
/**
 * The web viewer's view of xterm.js: the part of its Terminal and fit addon the page uses, and the loader
 * for the modules the daemon serves from their npm packages (xterm.js is not bundled).
 *
 * @module
 */

/** The part of xterm.js's Terminal this page uses (the module is loaded from /assets at run time). */
export interface XtermTerminal {
  cols: number;
  rows: number;
  options: { disableStdin?: boolean; cursorBlink?: boolean };
  open(element: HTMLElement): void;
  write(data: string | Uint8Array, callback?: () => void): void;
  resize(cols: number, rows: number): void;
  reset(): void;
  focus(): void;
  onData(listener: (data: string) => void): void;
  loadAddon(addon: unknown): void;
  buffer: {
    active: { length: number; getLine(y: number): { translateToString(trim?: boolean): string } | undefined };
  };
}
/** The part of xterm.js's fit addon this page uses. */
export interface FitAddon {
  fit(): void;
  proposeDimensions(): { cols: number; rows: number } | undefined;
}

/** Loads a module the daemon serves from its npm package (not bundled: the bundler leaves this alone). */
export function load(name: string): Promise<unknown> {
  return import(`/assets/${name}`);
}
