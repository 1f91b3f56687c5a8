/**
 * Files a scenario step reads or writes: goldens beneath the scenario's directory and `expect: {file}`
 * beneath the working directory the program could write. Each is resolved beneath its directory with no
 * symlink in any component and read through the descriptor that was checked, regular files only, capped.
 *
 * @module
 */
import { FileError, SpecterError } from "../errors.ts";
import {
  closeFd,
  fdInfo,
  fdProcPath,
  openBeneath,
  openDirectory,
  readFileBeneath,
  writeFileWhole,
} from "../fsafe/mod.ts";

/** Largest file an `expect: {file}` step reads (the program wrote it; it could be anything). */
export const MAX_EXPECT_FILE_BYTES = 16 * 1024 * 1024;

/** Largest golden a `snapshot_equals` step reads (a screen's text form is a few KiB). */
export const MAX_SCENARIO_GOLDEN_BYTES = 32 * 1024 * 1024;

/** Where a bundle keeps the goldens its run compared with (`goldens/PATH`). */
export const GOLDENS_DIR = "goldens";

/** The problem of a failed safe read, for a step message: the code and its sentence. */
function refusal(error: unknown): string {
  if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") return "does not exist";
  if (error instanceof SpecterError) return `is refused: ${error.code}: ${error.message}`;
  return `cannot be read: ${(error as Error).message}`;
}

/**
 * Reads a file the program may have written, as the host user: `file` relative to the working
 * directory, resolved beneath it with no symlink in any component (the program could have planted one
 * to a host secret) and read through the descriptor that was checked; a regular file only, capped.
 */
export function readRunFile(cwd: string, file: string): { text: string } | { problem: string } {
  let bytes: Uint8Array;
  try {
    bytes = readFileBeneath(cwd, file, { maxBytes: MAX_EXPECT_FILE_BYTES, what: "expected file" });
  } catch (error: unknown) {
    return { problem: refusal(error) };
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { problem: "is not valid UTF-8" }; // Where it breaks adds nothing.
  }
}

/**
 * Reads the golden `golden` beneath the scenario's directory `dir` (relative, no `..`, no symlink, a
 * regular file under {@link MAX_SCENARIO_GOLDEN_BYTES}, through one descriptor): its text, `null` when
 * missing, or the problem (with its code) that fails the step.
 */
export function readGolden(dir: string, golden: string): { text: string | null } | { problem: string } {
  let bytes: Uint8Array;
  try {
    bytes = readFileBeneath(dir, golden, { maxBytes: MAX_SCENARIO_GOLDEN_BYTES, what: "golden" });
  } catch (error: unknown) {
    if (error instanceof FileError && error.code === "E_PATH_NOT_FOUND") return { text: null };
    return { problem: refusal(error) };
  }
  try {
    return { text: new TextDecoder("utf-8", { fatal: true }).decode(bytes) };
  } catch {
    return { problem: "is not valid UTF-8" }; // The offset adds nothing.
  }
}

/**
 * `--update-goldens`: writes the golden beneath the scenario's directory, whole, refusing a path that
 * is or passes through a symlink (the parent is resolved by descriptor; the file is renamed into it).
 * Returns null when written, otherwise the problem (with its code).
 */
export function writeGolden(dir: string, golden: string, text: string): string | null {
  const slash = golden.lastIndexOf("/");
  const base = golden.slice(slash + 1);
  let root = -1;
  let parent = -1;
  try {
    root = openDirectory(dir);
    parent = slash < 0 ? root : openBeneath(root, golden.slice(0, slash), { mode: "handle" });
    let kind: string | null = null;
    try {
      const handle = openBeneath(parent, base, { mode: "handle" });
      kind = fdInfo(handle).kind;
      closeFd(handle);
    } catch (error: unknown) {
      if (!(error instanceof FileError && error.code === "E_PATH_NOT_FOUND")) throw error;
    }
    if (kind !== null && kind !== "file") {
      throw new FileError("E_FILE_TYPE", `Golden "${golden}" is a ${kind}, not a regular file`, {
        details: { path: golden },
      });
    }
    // Written to a temporary name in the directory checked, then renamed over the name: never through
    // a link planted there.
    writeFileWhole(`${fdProcPath(parent)}/${base}`, text, "golden", 0o644);
    return null;
  } catch (error: unknown) {
    return refusal(error);
  } finally {
    if (parent !== root) closeFd(parent);
    closeFd(root);
  }
}
