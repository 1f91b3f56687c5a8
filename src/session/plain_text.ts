/**
 * Turning raw terminal output into plain text for people and token budgets: ANSI sequences removed,
 * CRLF folded to LF, and a line redrawn with carriage returns (progress bars) reduced to its final state.
 *
 * @module
 */

// CSI, OSC (BEL or ST terminated), DCS/SOS/PM/APC (ST terminated), and two/three-byte ESC sequences.
const ANSI =
  // deno-lint-ignore no-control-regex -- matching control characters is the point of this regex
  /\x1b\[[0-?]*[ -\/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)|\x1b[PX^_][^\x1b]*\x1b\\|\x1b[ -\/]*[0-~]|[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]/g;

/** Removes ANSI escape sequences and control characters other than `\n`, `\r` and `\t`. */
export function stripAnsi(text: string): string {
  return text.replace(ANSI, "");
}

/** Plain text: ANSI stripped, `\r\n` → `\n`, and of a line rewritten with `\r` only the last state kept. */
export function plainText(text: string): string {
  const lines = stripAnsi(text).split("\n");
  return lines
    .map((line, i) => {
      // Carriage returns before a newline are dropped. Not with a regex: `/\r+\n/` backtracks over a
      // run of CRs at each of its positions, quadratic in a megabyte of them.
      if (i < lines.length - 1) {
        let end = line.length;
        while (end > 0 && line.charCodeAt(end - 1) === 13) end--;
        line = line.slice(0, end);
      }
      const cr = line.lastIndexOf("\r", line.length - 2);
      const last = cr >= 0 ? line.slice(cr + 1) : line;
      return last.endsWith("\r") ? last.slice(0, -1) : last;
    })
    .join("\n");
}
