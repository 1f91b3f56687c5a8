/**
 * Cutting output to a token budget without losing what matters: the head and the tail are kept (the tail
 * first: a failing build says so at its end), and from the cut middle every line that reports an error, a
 * failure, a warning or a traceback, with its line number. A marker says how many tokens were cut and how
 * to read them (`read_output`). Tokens are counted with a real tokenizer (o200k_base).
 *
 * @module
 */
import { countTokens } from "gpt-tokenizer/encoding/o200k_base";

/** Lines of the middle that are kept whatever the budget left (their share of it, at most). */
export const IMPORTANT_LINE: RegExp =
  /\b(?:error|errors|failed|failure|fail|fatal|panic|exception|traceback|warning|warn|denied|assert\w*)\b|^E\s|^\s*File ".*", line \d+/i;

/** Tokens set aside for the marker lines (a budget this small or smaller has none set aside). */
const MARKER_RESERVE = 60;
/** Shares of the budget: tail first, then head, then the important lines of the middle. */
const TAIL_SHARE = 0.45;
const HEAD_SHARE = 0.3;

/** A cut output. */
export interface Truncated {
  readonly output: string;
  readonly truncated: boolean;
  /** Tokens of the whole output. */
  readonly originalTokens: number;
}

/**
 * Longest run without white space given to the tokenizer at once. Byte-pair encoding is quadratic in the
 * length of one word (20,000 letters take 0.4 s), so hostile output is counted in pieces of this length;
 * text with no such run is counted exactly.
 */
export const MAX_TOKENIZED_RUN = 500;

/** Tokens of `text` (o200k_base; see {@link MAX_TOKENIZED_RUN} for very long words). */
export function tokenCount(text: string): number {
  if (text === "") return 0;
  let total = 0;
  let start = 0;
  let run = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 9 || c === 13) {
      run = 0;
      continue;
    }
    if (++run === MAX_TOKENIZED_RUN) {
      total += countTokens(text.slice(start, i + 1));
      start = i + 1;
      run = 0;
    }
  }
  return start === 0 ? countTokens(text) : total + (start < text.length ? countTokens(text.slice(start)) : 0);
}

/** Longest piece of one word shown when a budget is too small for a whole line. */
const MAX_WORD_CHARS = 40;

/**
 * The first (or, `fromEnd`, the last) words of `line` within `tokens`: at least one word (at most
 * {@link MAX_WORD_CHARS} characters of it), so that even a budget of one token shows how output starts
 * and ends.
 */
function words(line: string, tokens: number, fromEnd: boolean): string {
  const parts = line.trim().split(/\s+/).filter((part) => part !== "");
  if (fromEnd) parts.reverse();
  const out: string[] = [];
  let used = 0;
  for (const part of parts) {
    const word = part.length <= MAX_WORD_CHARS
      ? part
      : fromEnd
      ? part.slice(-MAX_WORD_CHARS)
      : part.slice(0, MAX_WORD_CHARS);
    const cost = tokenCount(word) + 1;
    if (out.length > 0 && used + cost > tokens) break;
    out.push(word);
    used += cost;
    if (word !== part) break;
  }
  if (fromEnd) out.reverse();
  return out.join(" ");
}

/**
 * `text` within `maxTokens` (see the module documentation). `hint` is appended to the marker (e.g. how to
 * read the cut part with `read_output`).
 */
export function truncateOutput(text: string, maxTokens: number, hint = ""): Truncated {
  const originalTokens = tokenCount(text);
  if (originalTokens <= maxTokens) return { output: text, truncated: false, originalTokens };
  const budget = maxTokens > 4 * MARKER_RESERVE ? maxTokens - MARKER_RESERVE : maxTokens;
  const lines = text.split("\n");
  const costs = lines.map((line) => tokenCount(line) + 1);
  // The tail: whole lines from the end, within its share (at least the last line, cut if it must be).
  let tailBudget = Math.floor(budget * TAIL_SHARE);
  let tailStart = lines.length;
  while (tailStart > 0 && costs[tailStart - 1]! <= tailBudget) tailBudget -= costs[--tailStart]!;
  let headBudget = Math.floor(budget * HEAD_SHARE);
  let headEnd = 0;
  while (headEnd < tailStart && costs[headEnd]! <= headBudget) headBudget -= costs[headEnd++]!;
  // Important lines of the middle, in order, within what is left (unused head and tail budget included).
  let middleBudget = budget - Math.floor(budget * TAIL_SHARE) - Math.floor(budget * HEAD_SHARE) +
    headBudget + tailBudget;
  const kept: string[] = [];
  for (let i = headEnd; i < tailStart; i++) {
    if (!IMPORTANT_LINE.test(lines[i]!)) continue;
    const shown = `L${i + 1}: ${lines[i]}`;
    const cost = tokenCount(shown) + 1;
    if (cost > middleBudget) break;
    middleBudget -= cost;
    kept.push(shown);
  }
  const cutTokens = costs.slice(headEnd, tailStart).reduce((a, b) => a + b, 0);
  const marker = `[… ${cutTokens} tokens cut (lines ${headEnd + 1}-${tailStart})` +
    (kept.length > 0
      ? `; ${kept.length} line${kept.length === 1 ? "" : "s"} of it that report problems follow`
      : "") +
    (hint === "" ? "" : `; ${hint}`) + " …]";
  let tail = lines.slice(tailStart);
  if (tailStart === lines.length) {
    // Not even the last line fits its share: keep the end of it.
    const last = lines[lines.length - 1]!;
    tail = [last.slice(-Math.max(1, Math.floor(budget * TAIL_SHARE) * 3))];
  }
  if (!tail.some((line) => line.trim() !== "")) {
    // Only blank lines fit (a budget of a few tokens): the last words of the last line with any.
    let last = Math.min(tailStart, lines.length) - 1;
    while (last >= headEnd && lines[last]!.trim() === "") last--;
    if (last >= headEnd) {
      tail = [words(lines[last]!, Math.max(1, Math.floor(budget * TAIL_SHARE)), true), ...tail];
    }
  }
  // No whole line fits the head's share: the first words of the first line with any.
  const first = headEnd === 0 ? lines.findIndex((line) => line.trim() !== "") : -1;
  const head = first < 0 || first >= tailStart
    ? lines.slice(0, headEnd)
    : [words(lines[first]!, Math.max(1, Math.floor(budget * HEAD_SHARE)), false)];
  const output = [
    ...head,
    marker,
    ...kept,
    ...(kept.length > 0 ? ["[… end of cut …]"] : []),
    ...tail,
  ]
    .join("\n");
  return { output, truncated: true, originalTokens };
}
