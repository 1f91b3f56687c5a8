/// <reference lib="dom" />
/**
 * The web viewer's link to the daemon: connecting (`daemon.hello`), finding out why a connection failed or
 * closed (`/v1/token`), and trying again until the token is known not to hold.
 *
 * @module
 */
import { TOKEN_PATH } from "../../../src/protocol/mod.ts";
import { z } from "zod";
import { $, setLink, state } from "./page.ts";
import { Rpc } from "./rpc.ts";

const HelloResultSchema = z.object({ scope: z.enum(["local", "viewer", "control"]).optional() });
/** The answer to `session.attach`, as the live terminal and the replay page read it. */
export const AttachResultSchema = z.object({
  next_seq: z.int(),
  control: z.boolean().optional(),
  log_id: z.string().nullable().optional(),
});

/**
 * Why a connection failed or closed: a browser's WebSocket sees a close (1006) whether the daemon refused
 * the token (401) or is gone, so the page asks `/v1/token`. A token that no longer holds is said plainly,
 * with what to run, and the page stops trying.
 */
export async function diagnose(token: string): Promise<"token-invalid" | "unreachable" | "ok"> {
  let status: number;
  try {
    // Bounded: a listener being replaced (specter daemon revoke) may take the request and never answer.
    const answer = await fetch(TOKEN_PATH, {
      headers: { authorization: `Bearer ${token}` },
      cache: "no-store",
      signal: AbortSignal.timeout(5000),
    });
    status = answer.status;
  } catch {
    status = 0; // No answer: the daemon is not listening (stopped, or restarting).
  }
  if (status === 401) {
    state.link = "token-invalid";
    setLink("token no longer valid");
    const box = $("token-invalid");
    box.hidden = false;
    if (state.term !== null) state.term.options.disableStdin = true;
    return "token-invalid";
  }
  if (status === 204) return "ok";
  state.link = "unreachable";
  setLink("disconnected: the daemon does not answer (retrying)");
  return "unreachable";
}

/** Tries again every few seconds until connected, or until the token is known not to hold. */
export function retry(token: string, again: () => Promise<void>): void {
  setTimeout(async () => {
    if (state.link === "token-invalid") return;
    try {
      await again();
    } catch {
      if (await diagnose(token) !== "token-invalid") retry(token, again);
    }
  }, 2000);
}

/** Opens a connection and says hello; the scope the daemon grants goes into the page state. */
export async function connect(token: string): Promise<Rpc> {
  const rpc = new Rpc(token);
  await rpc.opened;
  const hello = HelloResultSchema.parse(await rpc.call("daemon.hello", { protocol: 1 }));
  state.scope = hello.scope ?? null;
  state.link = "up";
  return rpc;
}
