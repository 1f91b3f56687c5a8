/// <reference lib="dom" />
/**
 * The web viewer's page code (bundled into `src/remote/_assets/viewer.js` by `deno task build:web`): the
 * session list, a live terminal per session, the exit notice, and the replay page. It speaks the daemon's
 * JSON-RPC over `/v1/ws`, with its token offered as a subprotocol: the token comes from the address's
 * fragment (`#token=…`), which the browser never sends, and is kept in this tab's sessionStorage only.
 * Every frame is validated with the protocol module's zod schemas; a frame that fails is dropped with a
 * warning (a legacy bare `{"type":"exit","code":N}` is understood).
 *
 * This is the entry: it picks the page from `#app`'s `data-page` and the fragment. The rooms:
 * `token.ts` (the token), `rpc.ts` (JSON-RPC over the WebSocket), `link.ts` (connect, diagnose, retry),
 * `page.ts` (page state and DOM helpers), `session_list.ts`, `live_session.ts`, `exit_notice.ts`,
 * `replay.ts` (with `cast.ts` and `progress.ts`), and `xterm.ts` (the part of xterm.js it uses).
 *
 * @module
 */
import { diagnose } from "./link.ts";
import { showSession } from "./live_session.ts";
import { $, setLink, warn } from "./page.ts";
import { showReplay } from "./replay.ts";
import { showList } from "./session_list.ts";
import { fragment, takeToken, TOKEN_KEY } from "./token.ts";

async function main(): Promise<void> {
  const page = $("app").dataset.page;
  const token = takeToken();
  const name = fragment().get("session");
  if (page === "replay") {
    await showReplay(token, name);
    return;
  }
  if (token === null) {
    $("no-token").hidden = false;
    return;
  }
  if (name === null || name === "") await showList(token);
  else await showSession(token, name);
}

main().catch(async (error: Error) => {
  const token = sessionStorage.getItem(TOKEN_KEY);
  // The first connection failed: a token that does not hold is said plainly, else what went wrong.
  if (token !== null && await diagnose(token) === "token-invalid") return;
  warn(`The viewer failed: ${error.message}`);
  setLink("disconnected");
});
