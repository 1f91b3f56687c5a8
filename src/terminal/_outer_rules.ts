/**
 * Which complete escape, control and OSC sequences {@link OuterFilter} lets through to a person's
 * terminal, and in what form. Private to `src/terminal/`.
 *
 * Everything is an allow-list: what a full-screen program needs to draw (SGR, cursor motion, erases,
 * scroll regions, the modes of the alternate screen, mouse, bracketed paste, focus events, keyboard
 * protocols, cursor shape, charsets, titles and colours) passes; queries, reports, window manipulation,
 * printing, clipboard access and anything not named are dropped. A passed sequence is rebuilt from its
 * parsed parts in 7-bit form, so the person's terminal only ever sees complete, well-formed sequences.
 *
 * @module
 */
import { stripUnprintable } from "./printable.ts";

/** Longest title passed on (characters); the rest is cut. */
export const MAX_TITLE = 512;

/**
 * DEC private modes (`CSI ? Pm h/l`, and XTSAVE/XTRESTORE `CSI ? Pm s/r`) that pass: cursor keys, screen
 * and cursor appearance, origin and wrap, autorepeat, the alternate screens, mouse tracking and its
 * encodings, focus events, meta/delete keys, bracketed paste and synchronized output. Not among them: 3
 * (132 columns resizes the window), 1001 (highlight tracking waits for an answer), 1043 (raises the
 * window), 2031 and 2048 (reports of the person's theme and window size).
 */
// deno-fmt-ignore -- one mode a line would be 33 lines.
const DEC_MODES = new Set([
  1, 4, 5, 6, 7, 8, 9, 12, 25, 45, 47, 66, 67, 69,
  1000, 1002, 1003, 1004, 1005, 1006, 1007, 1015, 1016,
  1034, 1035, 1036, 1037, 1039, 1047, 1048, 1049, 2004, 2026,
]);

/** ANSI modes (`CSI Pm h/l`) that pass: insert (IRM) and newline (LNM); not 2 (locks the keyboard) or 12. */
const ANSI_MODES = new Set([4, 20]);

/**
 * Control sequences that pass as they are, by private prefix + intermediates + final byte. Drawing:
 * ICH, cursor moves (CUU…CHA, CUP, HPA/HPR, VPA/VPR, HVP), CHT/CBT, ED/EL, IL/DL, DCH, SU, ECH, REP, TBC,
 * SGR, DECSTBM, SCOSC/DECSLRM, SCORC, DECSED/DECSEL, XTMODKEYS (`>m`, `>n`), the pointer mode (`>p`), the
 * kitty keyboard protocol's push/pop/set (`>u`, `<u`, `=u`, not its query `?u`), DECSCUSR (` q`), DECSTR
 * (`!p`), DECSCA (`"q`), DECIC/DECDC, SL/SR and the rectangle operations (`$x $z ${ $r $t $v`).
 */
const PASS = new Set([
  ..."@ABCDEFGHIJKLMPSTXZ`abdefgmrsu",
  "?J",
  "?K",
  ">m",
  ">n",
  ">p",
  ">u",
  "<u",
  "=u",
  " q",
  "!p",
  '"q',
  "'}",
  "'~",
  " @",
  " A",
  "$x",
  "$z",
  "${",
  "$r",
  "$t",
  "$v",
]);

/** Modes filtered parameter by parameter: the allowed ones of each sequence pass. */
const MODE_SETS: Readonly<Record<string, ReadonlySet<number>>> = {
  "h": ANSI_MODES,
  "l": ANSI_MODES,
  "?h": DEC_MODES,
  "?l": DEC_MODES,
  "?s": DEC_MODES,
  "?r": DEC_MODES,
};

/**
 * The control sequence to pass for `CSI body final` (`body`: parameter and intermediate bytes), or `null`
 * to drop it. Dropped among others: DA1/DA2/DA3 (`c`), DSR/CPR (`n`, `?n`), DECRQM (`$p`), XTVERSION
 * (`>q`), DECRQCRA (`*y`), window operations and their reports (`t`, but for 22/23 which push and pop the
 * title), title modes (`>t`, `>T`: hex titles would bypass the title filter), media copy (`i`), DECSCL
 * (`"p`), page size changes (`$|`, `*|`), mouse highlight (`T` with more than one parameter).
 */
export function csiRule(body: string, final: string): string | null {
  let start = 0;
  const prefix = body.length > 0 && "<=>?".includes(body[0]!) ? body[0]! : "";
  if (prefix !== "") start = 1;
  let end = body.length;
  while (end > start && body.charCodeAt(end - 1) >= 0x20 && body.charCodeAt(end - 1) <= 0x2f) end--;
  const params = body.slice(start, end);
  const intermediates = body.slice(end);
  // Parameters are digits, `;` and `:`; anything else (a second prefix, a parameter byte after an
  // intermediate) is a sequence xterm ignores or one of another terminal's: not passed on.
  if (!/^[0-9;:]*$/.test(params)) return null;
  const key = prefix + intermediates + final;
  const modes = MODE_SETS[key];
  if (modes !== undefined) {
    const kept = params.split(";").filter((p) => /^\d+$/.test(p) && modes.has(Number(p)));
    return kept.length === 0 ? null : `\x1b[${prefix}${kept.join(";")}${final}`;
  }
  if (key === "t") {
    const first = params.split(";")[0]!;
    return first === "22" || first === "23" ? `\x1b[${params}t` : null;
  }
  if (key === "T" && params.includes(";")) return null;
  return PASS.has(key) ? `\x1b[${body}${final}` : null;
}

/**
 * The escape sequence to pass for `ESC intermediates final`, or `null`. Passed: DECSC/DECRC (`7`, `8`),
 * keypad modes (`=`, `>`), IND, NEL, HTS, RI, RIS, single and locking shifts, charset designations
 * (`( ) * + - . /` and a charset's name) and DEC line sizes/alignment (`# 3`…`# 8`). Dropped: DECID (`Z`, a DA query), a stray
 * ST, S7C1T/S8C1T (`ESC SP F/G`), and `ESC %` (leaving UTF-8 would let the bytes of later text act as
 * C1 controls).
 */
export function escapeRule(intermediates: string, final: string): string | null {
  if (intermediates === "") return "78=>DEHMNOcno|}~".includes(final) ? `\x1b${final}` : null;
  if (/^[()*+\-./][\x20-\x2f]?$/.test(intermediates) && /^[0-9A-Za-z<=>`]$/.test(final)) {
    return `\x1b${intermediates}${final}`;
  }
  if (intermediates === "#" && final >= "3" && final <= "8") return `\x1b#${final}`;
  return null;
}

/** Printable ASCII only (a colour spec, a URI, link parameters). */
const ASCII = /^[\x20-\x7e]*$/;

/**
 * The OSC to pass for `ESC ] payload` ended by `terminator` (BEL or ST, kept as the program sent it), or
 * `null`. Passed: titles (OSC 0/1/2, unprintable characters removed, at most {@link MAX_TITLE}
 * characters), hyperlinks (OSC 8) to http(s) URIs (others are dropped: the text stays, unlinked), colour
 * sets and resets (OSC 4, 5, 10–19, 104, 105, 110–119; any `?` makes one a query, dropped) and, with
 * `allowClipboard`, clipboard writes (OSC 52; its read `?` never). Everything else (OSC 7, 9, 46, 50,
 * 777, 1337, …) is dropped.
 */
export function oscRule(payload: string, terminator: string, allowClipboard: boolean): string | null {
  const match = /^(\d{1,4})(?:;|$)/.exec(payload);
  if (match === null) return null;
  const command = Number(match[1]);
  const rest = payload.slice(match[0].length);
  const osc = (text: string) => `\x1b]${text}${terminator}`;
  if (command <= 2) return osc(`${command};${stripUnprintable(rest).slice(0, MAX_TITLE)}`);
  if (command === 8) {
    const cut = rest.indexOf(";");
    if (cut < 0) return null;
    const params = rest.slice(0, cut);
    const uri = rest.slice(cut + 1);
    if (!ASCII.test(params)) return null;
    if (uri === "") return osc(`8;${params};`);
    return /^https?:\/\/[\x21-\x7e]+$/i.test(uri) ? osc(`8;${params};${uri}`) : null;
  }
  const colour = command === 4 || command === 5 || (command >= 10 && command <= 19);
  const reset = command === 104 || command === 105 || (command >= 110 && command <= 119);
  // Checked whole (digits, then printable ASCII without `?`), so passed as sent.
  if (colour || reset) return ASCII.test(rest) && !rest.includes("?") ? osc(payload) : null;
  if (command === 52 && allowClipboard && /^[cpqs0-7]*;[A-Za-z0-9+/=]*$/.test(rest)) {
    return osc(`52;${rest}`);
  }
  return null;
}
