/**
 * The reading floor of `bench:cpu`: starts ARGV on a terminal and reads it with Specter's reader thread
 * (the same Worker, ring and hand-over as `specter run`), then throws the bytes away. No frames, no
 * decoding, no writing: what is left is what reading a terminal costs this process, kernel included.
 *
 *   deno run -A scripts/bench/_reader_floor.ts PROGRAM [ARGS…]
 *
 * @module
 */
import { readerThread, resolveProgram, spawnOnPty } from "../../src/pty/mod.ts";

function main(argv: readonly string[]): void {
  if (argv.length === 0) throw new Error("usage: _reader_floor.ts PROGRAM [ARGS…]");
  const path = Deno.env.get("PATH") ?? "/usr/bin:/bin";
  const child = spawnOnPty({
    argv: [resolveProgram(argv[0]!, path, Deno.cwd()), ...argv.slice(1)],
    env: { PATH: path, HOME: Deno.env.get("HOME") ?? "/" },
    cols: 80,
    rows: 24,
  });
  const scratch = new Uint8Array(1 << 20);
  let read = 0;
  const channel = readerThread().open(child.master, () => {
    for (let n = channel.take(scratch); n > 0; n = channel.take(scratch)) read += n;
    if (channel.done) {
      channel.release();
      console.error(`read ${read} bytes`);
      Deno.exit(0);
    }
  });
}

if (import.meta.main) main(Deno.args);
