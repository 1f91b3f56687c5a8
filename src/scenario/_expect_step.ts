/**
 * The `expect` step of a scenario: the exit code, a file the program wrote, or the screen (text, regex,
 * a line, the cursor, the alternate screen, a golden file). What does not hold throws a
 * {@link StepFailure} whose `expected` is the diagnostic's.
 *
 * @module
 */
import type { Step } from "./schema.ts";
import { GOLDENS_DIR, readGolden, readRunFile, writeGolden } from "./_files.ts";
import { snapshotText } from "../terminal/mod.ts";
import { DEFAULT_STEP_TIMEOUT_MS, matches, REGEX_BUDGET_MS, StepFailure, type StepRun } from "./_step_run.ts";

/** Checks what an `expect` step says; throws when it does not hold. */
export async function expect(
  run: StepRun,
  what: Extract<Step, { expect: unknown }>["expect"],
): Promise<void> {
  const { options, cwd, workspace, enforced, loaded, bundle, clock, normalize } = run;
  if ("exit_code" in what) {
    const frame = await run.exited(DEFAULT_STEP_TIMEOUT_MS);
    if (frame.code !== what.exit_code) {
      throw new StepFailure(
        `Exit code was ${frame.code ?? `signal ${frame.signal}`}`,
        `exit code ${what.exit_code}`,
      );
    }
    return;
  }
  if ("file" in what) {
    const expected = "equals" in what
      ? JSON.stringify(what.equals)
      : `containing ${JSON.stringify(what.contains)}`;
    const readable = options.replay === undefined || cwd === workspace ||
      (enforced?.fs.write ?? []).some((root) => cwd === root || cwd.startsWith(`${root}/`));
    const read: { text: string } | { problem: string } = readable ? readRunFile(cwd, what.file) : {
      problem:
        "is not read in a replay: the working directory is neither a fresh workspace nor inside a write grant",
    };
    if ("problem" in read) {
      throw new StepFailure(`File "${what.file}" ${read.problem}`, `file "${what.file}" ${expected}`);
    }
    if ("equals" in what ? read.text !== what.equals : !read.text.includes(what.contains)) {
      throw new StepFailure(
        `File "${what.file}" is ${JSON.stringify(read.text)}`,
        `file "${what.file}" ${expected}`,
      );
    }
    return;
  }
  const snap = await run.screen();
  const text = await normalize(snapshotText(snap));
  if ("screen_contains" in what) {
    if (!text.includes(what.screen_contains)) {
      throw new StepFailure(
        `The screen does not contain "${what.screen_contains}"`,
        `screen containing "${what.screen_contains}"`,
      );
    }
  } else if ("screen_matches" in what) {
    const verdict = await matches(clock, what.screen_matches, "m", text, REGEX_BUDGET_MS);
    if (verdict === null) {
      throw new StepFailure(
        `The regex /${what.screen_matches}/ did not finish within ${REGEX_BUDGET_MS} ms`,
        `screen matching /${what.screen_matches}/`,
      );
    }
    if (!verdict) {
      throw new StepFailure(
        `The screen does not match /${what.screen_matches}/`,
        `screen matching /${what.screen_matches}/`,
      );
    }
  } else if ("line" in what) {
    const actual = await normalize(snap.lines[what.line] ?? "");
    if (actual !== what.equals) {
      throw new StepFailure(`Line ${what.line} is "${actual}"`, `line ${what.line} = "${what.equals}"`);
    }
  } else if ("cursor" in what) {
    const { x, y } = snap.cursor;
    if (x !== what.cursor.x || y !== what.cursor.y) {
      throw new StepFailure(`The cursor is at ${x},${y}`, `cursor at ${what.cursor.x},${what.cursor.y}`);
    }
  } else if ("alt_screen" in what) {
    if (snap.alt_screen !== what.alt_screen) {
      throw new StepFailure(`alt_screen is ${snap.alt_screen}`, `alt_screen ${what.alt_screen}`);
    }
  } else if ("snapshot_equals" in what) {
    const golden = what.snapshot_equals;
    if (options.updateGoldens && options.replay === undefined) {
      const problem = writeGolden(loaded.dir, golden, text);
      if (problem !== null) {
        throw new StepFailure(`Golden "${golden}" ${problem}`, "a golden that can be written");
      }
      return;
    }
    const read = options.replay !== undefined
      ? { text: options.replay.goldens.get(golden) ?? null }
      : readGolden(loaded.dir, golden);
    if ("problem" in read) {
      throw new StepFailure(`Golden "${golden}" ${read.problem}`, "a golden that is a regular UTF-8 file");
    }
    const expected = read.text;
    if (expected === null) {
      throw new StepFailure(`Golden "${golden}" does not exist (run with --update-goldens)`, text);
    }
    // The bundle keeps what was compared, so a replay compares with the same text (never a host path).
    // (Its folders are made beneath the bundle's descriptor, never through a link.)
    if (options.replay === undefined) bundle.writeText(`${GOLDENS_DIR}/${golden}`, expected);
    if (expected !== text) throw new StepFailure(`The screen differs from golden "${golden}"`, expected);
  }
}
