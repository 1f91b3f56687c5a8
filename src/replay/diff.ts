/**
 * A line-based unified diff (longest common subsequence), enough for screens and transcripts.
 *
 * @module
 */

/** Lines beyond this many on either side are compared as one block (the LCS table would be too big). */
const MAX_LINES = 4000;

/** Returns a unified diff of `expected` → `actual` with `context` lines around changes; "" when equal. */
export function unifiedDiff(
  expected: string,
  actual: string,
  labels = ["expected", "actual"],
  context = 3,
): string {
  if (expected === actual) return "";
  const a = expected.split("\n");
  const b = actual.split("\n");
  const ops = a.length > MAX_LINES || b.length > MAX_LINES ? blockOps(a, b) : lcsOps(a, b);
  const out = [`--- ${labels[0]}`, `+++ ${labels[1]}`];
  // Group changes with their context into hunks.
  let i = 0;
  while (i < ops.length) {
    if (ops[i]!.kind === " ") {
      i++;
      continue;
    }
    const start = Math.max(0, i - context);
    let end = i;
    while (end < ops.length) {
      if (ops[end]!.kind !== " ") {
        end++;
        continue;
      }
      let run = 0;
      while (end + run < ops.length && ops[end + run]!.kind === " ") run++;
      if (end + run >= ops.length || run > context * 2) {
        end = Math.min(ops.length, end + context);
        break;
      }
      end += run;
    }
    const hunk = ops.slice(start, end);
    const aStart = (hunk.find((o) => o.kind !== "+")?.aLine ?? 0) + 1;
    const bStart = (hunk.find((o) => o.kind !== "-")?.bLine ?? 0) + 1;
    const aCount = hunk.filter((o) => o.kind !== "+").length;
    const bCount = hunk.filter((o) => o.kind !== "-").length;
    out.push(`@@ -${aStart},${aCount} +${bStart},${bCount} @@`);
    for (const op of hunk) out.push(`${op.kind}${op.text}`);
    i = end;
  }
  return out.join("\n") + "\n";
}

interface Op {
  kind: " " | "-" | "+";
  text: string;
  aLine: number;
  bLine: number;
}

function lcsOps(a: string[], b: string[]): Op[] {
  const n = a.length;
  const m = b.length;
  const table = Array.from({ length: n + 1 }, () => new Uint32Array(m + 1));
  for (let i = n - 1; i >= 0; i--) {
    for (let j = m - 1; j >= 0; j--) {
      table[i]![j] = a[i] === b[j]
        ? table[i + 1]![j + 1]! + 1
        : Math.max(table[i + 1]![j]!, table[i]![j + 1]!);
    }
  }
  const ops: Op[] = [];
  let i = 0;
  let j = 0;
  while (i < n || j < m) {
    if (i < n && j < m && a[i] === b[j]) ops.push({ kind: " ", text: a[i]!, aLine: i++, bLine: j++ });
    // Deletions before additions, as unified diffs conventionally show a replaced line.
    else if (i < n && (j >= m || table[i + 1]![j]! >= table[i]![j + 1]!)) {
      ops.push({ kind: "-", text: a[i]!, aLine: i++, bLine: j });
    } else ops.push({ kind: "+", text: b[j]!, aLine: i, bLine: j++ });
  }
  return ops;
}

function blockOps(a: string[], b: string[]): Op[] {
  return [
    ...a.map((text, i): Op => ({ kind: "-", text, aLine: i, bLine: 0 })),
    ...b.map((text, j): Op => ({ kind: "+", text, aLine: a.length, bLine: j })),
  ];
}
