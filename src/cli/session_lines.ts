/**
 * What `specter new` and `specter ls` print for people (`--json` prints the daemon's entries for
 * programs): one line for a started session, and the table of sessions in a stable order.
 *
 * @module
 */
import type { SessionEntry } from "../protocol/mod.ts";
import { printable } from "../terminal/mod.ts";

/** `new`'s line: what started and how to reach it. */
export function startedLine(entry: Pick<SessionEntry, "name" | "pid">): string {
  return `started ${printable(entry.name)} (pid ${entry.pid}); attach with: specter attach ${
    printable(entry.name)
  }`;
}

/** What `ls` prints when the daemon has no session. */
export const NO_SESSIONS = "no sessions";

/** A duration for people: `850ms`, `30s`, `2m5s`, `1h2m`. */
export function humanDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const seconds = Math.round(ms / 1000);
  if (seconds < 60) return `${seconds}s`;
  const minutes = Math.floor(seconds / 60);
  if (minutes < 60) return `${minutes}m${seconds % 60 === 0 ? "" : `${seconds % 60}s`}`;
  const hours = Math.floor(minutes / 60);
  return `${hours}h${minutes % 60 === 0 ? "" : `${minutes % 60}m`}`;
}

/** A session's STATUS column: running, exited N, timed out after D, killed (SIG). */
export function statusText(entry: SessionEntry): string {
  if (entry.running) return "running";
  // A timeout ends the program with SIGHUP: "killed (HUP)" would read as somebody's kill.
  if (entry.timed_out) {
    return entry.duration_ms === null ? "timed out" : `timed out after ${humanDuration(entry.duration_ms)}`;
  }
  if (entry.signal !== null) return `killed (${entry.signal})`;
  return `exited ${entry.exit_code}`;
}

/** `ls`' order: by creation time, then name (the daemon's own order changes when it restarts). */
export function sortSessions(sessions: readonly SessionEntry[]): SessionEntry[] {
  return [...sessions].sort((a, b) =>
    a.started - b.started || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0)
  );
}

/** `ls`' table: a header and one row per session, tab-separated, each field one line of plain text. */
export function sessionTable(sessions: readonly SessionEntry[]): string[] {
  const rows = ["NAME\tSTATUS\tPID\tCLIENTS\tCOMMAND"];
  for (const entry of sortSessions(sessions)) {
    // argv is the user's or an agent's and may hold anything: escaped, so that the row stays one line of
    // text on the reader's terminal (the exact strings are in --json).
    const fields = [
      entry.name,
      statusText(entry),
      String(entry.pid),
      String(entry.clients),
      entry.argv.join(" "),
    ];
    rows.push(fields.map(printable).join("\t"));
  }
  return rows;
}
