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
  /**
   * Tokens of the whole output: exact for output kept whole; counted line by line beyond that (see
   * {@link OutputCut}), which is within a few tokens of it (a newline may share a token with what follows).
   */
  readonly originalTokens: number;
}

/**
 * Longest run of one kind (white space, or anything else) given to the tokenizer at once. Byte-pair
 * encoding is quadratic in the length of one piece (20,000 letters take 0.4 s, 100,000 spaces 7 s), so
 * hostile output is counted in pieces of this length; text with no such run is counted exactly.
 */
export const MAX_TOKENIZED_RUN = 500;

/** Tokens of `text` (o200k_base; see {@link MAX_TOKENIZED_RUN} for very long words). */
export function tokenCount(text: string): number {
  if (text === "") return 0;
  let total = 0;
  let start = 0;
  let run = 0;
  let space = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    // A run of white space is one piece to the tokenizer too: runs of either kind are cut.
    const isSpace = c === 32 || c === 10 || c === 9 || c === 13;
    if (isSpace !== space) {
      space = isSpace;
      run = 0;
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
  const cut = new OutputCut(maxTokens);
  cut.push(text);
  return cut.end(hint);
}

/** Options of an {@link OutputCut} (for tests). */
export interface OutputCutOptions {
  /**
   * Tokens of output kept whole before the cut goes on line by line (default: twice the budget). Below it
   * the result is exact; above it, memory stays within the budget whatever the output's size.
   */
  readonly keepAllTokens?: number;
}

/** Longest unfinished line held: a longer one (output with no newline at all) is cut into lines of this. */
const MAX_LINE_CHARS = 1 << 20;
/** Characters kept of a line that a fallback may show a few words of (its start or its end). */
const FALLBACK_CHARS = 4096;

/**
 * {@link truncateOutput} for output that comes in pieces and may be far larger than memory should hold:
 * `push` the text in order, then `end`. It keeps everything while the output is small (the result is then
 * exactly {@link truncateOutput}'s), and beyond that only the head, the tail, the lines of the middle
 * that report problems and counts: line numbers and token counts are of the whole output.
 */
export class OutputCut {
  readonly #max: number;
  readonly #budget: number;
  readonly #keepAll: number;
  readonly #tailShare: number;
  readonly #headShare: number;
  /** The unfinished line, in the pieces it came in (joined once it ends: no rescan per piece). */
  #pending: string[] = [];
  #pendingLength = 0;
  /** The unfinished line was cut at {@link MAX_LINE_CHARS}: what follows is more of the same line. */
  #continues = false;
  /** Every line so far, while the output is small (null once the cut goes line by line). */
  #lines: string[] | null = [];
  #costs: number[] = [];
  #tokens = 0;
  #count = 0;
  // Line by line: the head, the tail window, and what passed between them.
  #head: string[] = [];
  #headLeft: number;
  #headClosed = false;
  #tail: string[] = [];
  #tailCosts: number[] = [];
  /** The number (0-based) of each line in the tail window. */
  #tailAts: number[] = [];
  /** The number of the line after the head (0-based). */
  #headEnd = 0;
  #tailCost = 0;
  #middleTokens = 0;
  #important: { shown: string; cost: number }[] = [];
  #importantCost = 0;
  #firstNonBlank: { at: number; text: string } | null = null;
  #lastNonBlankMiddle: string | null = null;
  #lastLineEnd = "";

  constructor(maxTokens: number, options: OutputCutOptions = {}) {
    this.#max = maxTokens;
    this.#budget = maxTokens > 4 * MARKER_RESERVE ? maxTokens - MARKER_RESERVE : maxTokens;
    this.#keepAll = options.keepAllTokens ?? 2 * maxTokens;
    this.#tailShare = Math.floor(this.#budget * TAIL_SHARE);
    this.#headShare = Math.floor(this.#budget * HEAD_SHARE);
    this.#headLeft = this.#headShare;
  }

  /**
   * Takes the next piece of the output. A line longer than {@link MAX_LINE_CHARS} is held no longer: it
   * goes on in pieces of that length, shown as lines of their own but numbered as the one line they are.
   */
  push(text: string): void {
    let from = 0;
    for (let nl = text.indexOf("\n"); nl >= 0; nl = text.indexOf("\n", from)) {
      this.#pending.push(text.slice(from, nl));
      this.#finish();
      from = nl + 1;
    }
    if (from === text.length) return;
    this.#pending.push(from === 0 ? text : text.slice(from));
    this.#pendingLength += text.length - from;
    if (this.#pendingLength <= MAX_LINE_CHARS) return;
    let long = this.#pending.join("");
    while (long.length > MAX_LINE_CHARS) {
      this.#line(long.slice(0, MAX_LINE_CHARS), this.#continues);
      this.#continues = true;
      long = long.slice(MAX_LINE_CHARS);
    }
    this.#pending = [long];
    this.#pendingLength = long.length;
  }

  /** Ends the unfinished line, if any (what comes next starts a line of its own). */
  breakLine(): void {
    if (this.#pendingLength > 0) this.#finish();
  }

  /** The output ended: it, cut to the budget, with `hint` at the end of the marker. */
  end(hint = ""): Truncated {
    this.#finish();
    if (this.#lines !== null) return cutWhole(this.#lines, this.#costs, this.#max, this.#budget, hint);
    return this.#cut(hint);
  }

  /** The unfinished line ends here. */
  #finish(): void {
    const line = this.#pending.length === 1 ? this.#pending[0]! : this.#pending.join("");
    this.#pending = [];
    this.#pendingLength = 0;
    this.#line(line, this.#continues);
    this.#continues = false;
  }

  /** A finished line (`continues`: more of the line before it, cut at {@link MAX_LINE_CHARS}). */
  #line(line: string, continues = false): void {
    const cost = tokenCount(line) + 1;
    this.#tokens += cost;
    const at = continues ? this.#count - 1 : this.#count++;
    if (this.#lines !== null) {
      this.#lines.push(line);
      this.#costs.push(cost);
      // Held whole, each element is a line of its own: a line in pieces goes on line by line.
      if (this.#tokens <= this.#keepAll && !continues) return;
      // Too much to keep whole: from here on, line by line.
      const lines = this.#lines;
      const costs = this.#costs;
      this.#lines = null;
      this.#costs = [];
      for (let i = 0; i < lines.length; i++) {
        // Only the last can be a continuation (the first one ends holding the lines whole).
        this.#place(lines[i]!, costs[i]!, continues && i === lines.length - 1 ? i - 1 : i);
      }
      return;
    }
    this.#place(line, cost, at);
  }

  /** Line `at` goes to the head while it fits, else to the tail window (what leaves it is the middle). */
  #place(line: string, cost: number, at: number): void {
    if (this.#firstNonBlank === null && line.trim() !== "") {
      this.#firstNonBlank = { at, text: line.slice(0, FALLBACK_CHARS) };
    }
    this.#lastLineEnd = line.slice(-Math.max(1, this.#tailShare * 3));
    if (!this.#headClosed && cost <= this.#headLeft) {
      this.#head.push(line);
      this.#headLeft -= cost;
      this.#headEnd = at + 1;
      return;
    }
    this.#headClosed = true;
    this.#tail.push(line);
    this.#tailCosts.push(cost);
    this.#tailAts.push(at);
    this.#tailCost += cost;
    while (this.#tail.length > 0 && this.#tailCost > this.#tailShare) {
      const left = this.#tail.shift()!;
      const leftCost = this.#tailCosts.shift()!;
      this.#tailCost -= leftCost;
      this.#middle(left, leftCost, this.#tailAts.shift()!);
    }
  }

  /** Line `at` was cut: counted, and kept for the marker when it reports a problem (while any could fit). */
  #middle(line: string, cost: number, at: number): void {
    this.#middleTokens += cost;
    if (line.trim() !== "") this.#lastNonBlankMiddle = line.slice(-FALLBACK_CHARS);
    if (!IMPORTANT_LINE.test(line) || this.#importantCost > this.#budget) return;
    const shown = `L${at + 1}: ${line}`;
    const shownCost = tokenCount(shown) + 1;
    this.#important.push({ shown, cost: shownCost });
    this.#importantCost += shownCost;
  }

  #cut(hint: string): Truncated {
    const headEnd = this.#headEnd;
    const tailStart = this.#tailAts[0] ?? this.#count;
    const tailLeft = this.#tailShare - this.#tailCost;
    let middleBudget = this.#budget - this.#tailShare - this.#headShare + this.#headLeft + tailLeft;
    const kept: string[] = [];
    for (const { shown, cost } of this.#important) {
      if (cost > middleBudget) break;
      middleBudget -= cost;
      kept.push(shown);
    }
    let tail = this.#tail;
    if (tail.length === 0) tail = [this.#lastLineEnd]; // Not even the last line fits its share.
    if (!tail.some((line) => line.trim() !== "") && this.#lastNonBlankMiddle !== null) {
      tail = [words(this.#lastNonBlankMiddle, Math.max(1, this.#tailShare), true), ...tail];
    }
    const first = headEnd === 0 ? this.#firstNonBlank : null;
    const head = first === null || first.at >= tailStart
      ? this.#head
      : [words(first.text, Math.max(1, this.#headShare), false)];
    const output = [
      ...head,
      marker(this.#middleTokens, headEnd, tailStart, kept.length, hint),
      ...kept,
      ...(kept.length > 0 ? ["[… end of cut …]"] : []),
      ...tail,
    ].join("\n");
    // Each line was counted with a newline after it; the last has none.
    return { output, truncated: true, originalTokens: this.#tokens - 1 };
  }
}

/** The marker line of a cut: lines `headEnd + 1`…`tailStart` (1-based) are cut. */
function marker(cutTokens: number, headEnd: number, tailStart: number, kept: number, hint: string): string {
  return `[… ${cutTokens} tokens cut (lines ${headEnd + 1}-${tailStart})` +
    (kept > 0 ? `; ${kept} line${kept === 1 ? "" : "s"} of it that report problems follow` : "") +
    (hint === "" ? "" : `; ${hint}`) + " …]";
}

/** The cut of output held whole (`lines`, each with its cost). */
function cutWhole(
  lines: readonly string[],
  costs: readonly number[],
  maxTokens: number,
  budget: number,
  hint: string,
): Truncated {
  const text = lines.join("\n");
  const originalTokens = tokenCount(text);
  if (originalTokens <= maxTokens) return { output: text, truncated: false, originalTokens };
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
    marker(cutTokens, headEnd, tailStart, kept.length, hint),
    ...kept,
    ...(kept.length > 0 ? ["[… end of cut …]"] : []),
    ...tail,
  ]
    .join("\n");
  return { output, truncated: true, originalTokens };
}
