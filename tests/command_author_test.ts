/**
 * Who a command log row says typed a command is Specter's to decide, from the connection that started the
 * session (issue 23, item 3): a local client is a person, the agent tools are an agent, a remote client of
 * the listener is `remote` under its token's label. No client can say otherwise: `author_kind` is not a
 * parameter of `session.create` (any client sending it, remote or local, is refused as invalid params), and a remote client's
 * `author` name is replaced by its token's label.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { DaemonClient } from "../src/daemon/mod.ts";
import { SpecterError } from "../src/errors.ts";
import { withTempDir } from "./_helpers.ts";
import { specter } from "./_daemon.ts";
import { withRemoteDaemon, WsRpc } from "./_remote.ts";

async function rows(dir: string, session: string): Promise<Record<string, unknown>[]> {
  for (let i = 0; i < 200; i++) {
    const history = await specter([
      "history",
      "--history",
      join(dir, "log.sqlite"),
      "--session",
      session,
      "--json",
    ]);
    const found = history.stdout.trim().split("\n").filter((l) => l !== "").map((l) => JSON.parse(l));
    if (found.length > 0) return found;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`No row for session "${session}"`);
}

Deno.test({
  name:
    "author_kind comes from the connection: remote under its token's label, local a person; never a parameter",
  sanitizeOps: false,
  sanitizeResources: false,
}, async () => {
  await withTempDir(async (dir) => {
    const file = join(dir, "tokens.json");
    const ops = "ops-" + "o".repeat(30);
    Deno.writeTextFileSync(
      file,
      JSON.stringify({ tokens: [{ token: ops, scope: "control", label: "ops" }] }),
      {
        mode: 0o600,
      },
    );
    await withRemoteDaemon(
      join(dir, "d"),
      ["--token-file", file, "--history", join(dir, "log.sqlite")],
      async (daemon) => {
        const rpc = await WsRpc.open(daemon, ops);
        await rpc.hello();
        const create = { argv: ["/bin/sh", "-c", "exit 3"], cwd: "/", flags: { policy: "basic" } };
        // Saying who it is is refused outright, as a person or as an agent.
        for (const kind of ["human", "agent"]) {
          const refused = await rpc.call("session.create", { ...create, name: "claims", author_kind: kind });
          // Invalid params (JSON-RPC -32602), as any unknown key of a strict method is.
          const error = refused.error as { code?: number; message?: string } | undefined;
          assert.equal(error?.code, -32602, JSON.stringify(refused));
          assert.match(error?.message ?? "", /author_kind/);
        }
        // A name it gives is not taken: the row names its token.
        const made = await rpc.call("session.create", {
          ...create,
          name: "remote-run",
          author: "alice (human)",
        });
        assert.equal((made.result as { name?: string }).name, "remote-run", JSON.stringify(made));
        const [remote] = await rows(dir, "remote-run");
        assert.equal(remote!.author_kind, "remote");
        assert.equal(remote!.author, "ops");
        assert.equal(remote!.exit_code, 3);
        assert.equal(remote!.reported_by, "specter", "a program's own row: the kernel's wait status");
        rpc.socket.close();

        // The unix socket's client is the user: a person, under the name it gives.
        const local = await DaemonClient.connect({ socketPath: daemon.socket });
        try {
          const refused = await local.call("session.create", { ...create, name: "x", author_kind: "agent" })
            .then(() => null, (e: unknown) => e);
          assert.ok(refused instanceof SpecterError && /author_kind/.test(refused.message), String(refused));
          await local.call("session.create", { ...create, name: "local-run", author: "me" });
        } finally {
          local.close();
        }
        const [person] = await rows(dir, "local-run");
        assert.equal(person!.author_kind, "human");
        assert.equal(person!.author, "me");
      },
    );
  });
});
