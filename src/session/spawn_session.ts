/**
 * `spawn()`: the library entry point that starts a session.
 *
 * @module
 */
import { raiseOpenFileLimit } from "../pty/process.ts";
import { resolveProgram, spawnOnPty } from "../pty/spawn.ts";
import { CastWriter } from "../recording/asciicast.ts";
import { resolveOptions, type SpawnOptions } from "./options.ts";
import { nowSeconds, Session } from "./session.ts";

let limitRaised = false;

/**
 * Starts `options.argv` on a new terminal and returns its {@link Session}. Frames are buffered until
 * consumed (`frames()` / `nextFrames()`); a session nobody reads pauses once `bufferBytes` are queued.
 *
 * Throws `E_USAGE` for bad options, `E_SPAWN_NOT_FOUND` / `E_SPAWN_NOT_EXECUTABLE` / `E_SPAWN_CWD` /
 * `E_SPAWN` / `E_PTY_OPEN` when the program cannot start, `E_RECORD` when the recording cannot be created.
 *
 * @example
 * ```ts
 * import { spawn } from "./src/mod.ts";
 * const session = spawn({ argv: ["python3", "-q"], promptRegex: [">>> $"] });
 * for await (const frame of session.frames()) {
 *   if (frame.type === "prompt") session.write("print(6 * 7)\r");
 *   if (frame.type === "stdout" && frame.data.includes("42")) await session.terminate();
 * }
 * ```
 */
export function spawn(options: SpawnOptions): Session {
  const resolved = resolveOptions(options);
  if (!limitRaised) {
    raiseOpenFileLimit();
    limitRaised = true;
  }
  const program = resolveProgram(resolved.argv[0]!, resolved.env.PATH, resolved.cwd);
  const argv = [program, ...resolved.argv.slice(1)];
  const recorder = resolved.record === null ? null : CastWriter.create(resolved.record.path, {
    width: resolved.cols,
    height: resolved.rows,
    timestamp: Math.floor(nowSeconds()),
    env: { TERM: resolved.env.TERM ?? "", ...(resolved.env.SHELL ? { SHELL: resolved.env.SHELL } : {}) },
    ...(resolved.title === null ? {} : { title: resolved.title }),
  });
  try {
    const child = spawnOnPty({
      argv,
      argv0: resolved.argv[0]!,
      env: resolved.env,
      cwd: resolved.cwd,
      cols: resolved.cols,
      rows: resolved.rows,
      inheritFds: resolved.inheritFds,
    });
    return new Session(child, { ...resolved, argv }, recorder);
  } catch (error: unknown) {
    recorder?.close();
    throw error;
  }
}
