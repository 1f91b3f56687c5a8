/**
 * The terminal model: what a program's terminal shows, as snapshots (`@xterm/headless` underneath,
 * loaded only when a screen is first asked for); and what of a program's output may reach a person's own
 * terminal (`OuterFilter`, `printable`).
 *
 * @module
 */
export { type SnapshotOptions, snapshotText } from "./snapshot.ts";
export { loadXterm, TerminalModel, type TerminalModelOptions } from "./model.ts";
export { HIGH_WATERMARK, LOW_WATERMARK, Watermarks } from "./watermarks.ts";
export { type HistoryEntry, OutputHistory, SCREEN_HISTORY, type Size } from "./history.ts";
export { type ModelFactory, type ScreenModel, ScreenTracker, type ScreenTrackerOptions } from "./screen.ts";
export { MAX_CLIPBOARD, OuterFilter, type OuterFilterOptions } from "./outer_filter.ts";
export { OuterModes } from "./outer_modes.ts";
export { printable, stripUnprintable, UNPRINTABLE } from "./printable.ts";
