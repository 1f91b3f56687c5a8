/// <reference lib="dom" />
/**
 * The web viewer's session list: a table of the daemon's sessions (`session.list`, every 2 s), each with a
 * link to its live terminal; reconnects when the link breaks.
 *
 * @module
 */
import { SessionEntrySchema } from "../../../src/protocol/mod.ts";
import { z } from "zod";
import { connect, diagnose, retry } from "./link.ts";
import { $, setLink, state } from "./page.ts";
import type { Rpc } from "./rpc.ts";

const ListResultSchema = z.object({ sessions: z.array(SessionEntrySchema) });

function formatTime(seconds: number): string {
  return new Date(seconds * 1000).toLocaleString();
}

/** Shows the session list page and keeps it current. */
export async function showList(token: string): Promise<void> {
  $("list-view").hidden = false;
  let rpc: Rpc;
  const body = document.querySelector("#sessions tbody")!;
  let timer: ReturnType<typeof setInterval> | undefined;
  const open = async () => {
    rpc = await connect(token);
    setLink(`connected (${state.scope ?? "?"})`);
    rpc.onClose = () => {
      setLink("disconnected");
      clearInterval(timer);
      void diagnose(token).then((why) => {
        if (why !== "token-invalid") retry(token, open);
      });
    };
    await refresh();
    timer = setInterval(() => void refresh().catch(() => clearInterval(timer)), 2000);
  };
  const refresh = async () => {
    const { sessions } = ListResultSchema.parse(await rpc.call("session.list", {}));
    body.replaceChildren(...sessions.map((s) => {
      const row = document.createElement("tr");
      row.dataset.session = s.name;
      const cells = [
        s.name,
        s.title ?? "",
        s.description ?? "",
        s.parent_agent ?? "",
        s.running ? "running" : "exited",
        formatTime(s.started),
        s.exit_code === null ? (s.signal === null ? "" : s.signal) : String(s.exit_code),
      ];
      for (const text of cells) {
        const cell = document.createElement("td");
        cell.textContent = text;
        row.append(cell);
      }
      row.children[4]!.className = s.running ? "running" : "exited";
      const open = document.createElement("td");
      const link = document.createElement("a");
      link.href = `#session=${encodeURIComponent(s.name)}`;
      link.textContent = "open";
      open.append(link);
      row.append(open);
      return row;
    }));
    $("empty").hidden = sessions.length > 0;
  };
  addEventListener("hashchange", () => location.reload(), { once: true });
  await open();
}
