/**
 * The private parts of `@xterm/headless` 6.0.0 that {@link TerminalModel} relies on and no public API
 * offers: its write buffer's parse step (guarded against throws), its screen buffers' markers (dropped on
 * reset), its hyperlinks (counted for tests) and whether the cursor is shown (DECTCEM). An xterm without
 * them fails here, loudly, rather than run unguarded or leak.
 *
 * @module
 */
import type { Terminal } from "@xterm/headless";

/** The private part of xterm that knows whether the cursor is shown (DECTCEM); no public API has it. */
interface CoreWithCursor {
  readonly _core?: { readonly coreService?: { readonly isCursorHidden?: unknown } };
}

/** The parse step of xterm's write buffer, which {@link guardParser} guards. */
type ParseAction = (data: string | Uint8Array, promiseResult?: boolean) => void | Promise<boolean>;

/** The private part of xterm that holds the screen buffers and their markers (`@xterm/headless` 6.0.0). */
interface CoreWithBuffers {
  readonly _core?: {
    readonly buffers?: {
      readonly normal?: { clearAllMarkers?: unknown };
      readonly alt?: { clearAllMarkers?: unknown };
    };
  };
}

/** The private part of xterm that runs each queued write through the parser (`@xterm/headless` 6.0.0). */
interface CoreWithWriteBuffer {
  readonly _core?: { readonly _writeBuffer?: { _action?: unknown } };
}

/**
 * Wraps the parse step of `term`'s write buffer so that a throw calls `onThrow` (the model then replaces
 * the emulator) instead of escaping into xterm's timer. Throws when this xterm has no such step.
 */
export function guardParser(term: Terminal, onThrow: () => void): void {
  const buffer = (term as unknown as CoreWithWriteBuffer)._core?._writeBuffer;
  const parse = buffer?._action;
  if (buffer === undefined || typeof parse !== "function") {
    throw new Error("This @xterm/headless has no write buffer parse step to guard (6.0.0 has)");
  }
  const action = parse as ParseAction;
  const guarded: ParseAction = (data, promiseResult) => {
    try {
      const result = action.call(buffer, data, promiseResult);
      // Only handlers a caller registers return promises (Specter registers none); guard them too.
      return result instanceof Promise ? result.catch(() => (onThrow(), false)) : result;
    } catch {
      onThrow();
    }
  };
  buffer._action = guarded;
}

/**
 * RIS (`ESC c`) makes xterm build new screen buffers without disposing the markers of the old ones, and every
 * hyperlink (OSC 8) holds a marker: each reset after a link kept a whole old screen alive (about 15 KiB at
 * 80×24; the terminal fuzzer's worker grew to 3 GB). This handler runs before xterm's own reset (it returns
 * false, so the reset follows) and disposes the markers with the screens they mark, which also drops the
 * links. An xterm without these internals fails here, loudly, rather than leak.
 */
export function dropMarkersOnReset(term: Terminal): void {
  const buffers = (term as unknown as CoreWithBuffers)._core?.buffers;
  const normal = buffers?.normal;
  const alt = buffers?.alt;
  if (typeof normal?.clearAllMarkers !== "function" || typeof alt?.clearAllMarkers !== "function") {
    throw new Error("This @xterm/headless has no buffer markers to clear on reset (6.0.0 has)");
  }
  term.parser.registerEscHandler({ final: "c" }, () => {
    // Read again at each reset: the buffer set keeps its two buffers, but nothing here relies on that.
    const set = (term as unknown as CoreWithBuffers)._core?.buffers;
    (set?.normal?.clearAllMarkers as (() => void) | undefined)?.call(set?.normal);
    (set?.alt?.clearAllMarkers as (() => void) | undefined)?.call(set?.alt);
    return false;
  });
}

/**
 * Hyperlinks (OSC 8) `term` holds. Throws when this xterm keeps them elsewhere (a private map of
 * `@xterm/headless` 6.0.0).
 */
export function heldLinks(term: Terminal): number {
  const links = (term as unknown as { _core?: { _oscLinkService?: { _dataByLinkId?: unknown } } })
    ._core?._oscLinkService?._dataByLinkId;
  if (!(links instanceof Map)) throw new Error("This @xterm/headless keeps its links elsewhere");
  return links.size;
}

/** True when the program hid the cursor (DECTCEM off); false when shown or when this xterm cannot say. */
export function cursorHidden(term: Terminal): boolean {
  return (term as unknown as CoreWithCursor)._core?.coreService?.isCursorHidden === true;
}
