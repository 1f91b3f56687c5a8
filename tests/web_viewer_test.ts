/**
 * The web viewer in a real browser: Debian's Chromium, headless, driven by playwright-core. Against a real
 * daemon (`--bind 127.0.0.1:0`) and real sandboxed sessions: live output, typing, the exit notice with the
 * code and last lines, the timeout notice, the session list, the replay page. A fake daemon (the same pages
 * and bundle, crafted frames) shows a legacy bare exit frame and a malformed frame. Every state is
 * screenshot into `ci-artifacts/web-viewer/` (or `$SPECTER_ARTIFACTS/web-viewer/`).
 *
 * Chromium missing: the tests fail under `CI=true` (.ci/run installs it) and are skipped loudly otherwise.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { type Browser, chromium, type Page } from "playwright-core";
import { ROOT, withTempDir, withTimeout } from "./_helpers.ts";
import { create, restart, specter, whereArgs } from "./_daemon.ts";
import { type RemoteDaemon, withRemoteDaemon, WsRpc } from "./_remote.ts";
import { ASSETS, PAGES } from "../src/remote/assets.ts";

const CHROMIUM = ["/usr/bin/chromium", "/usr/lib/chromium/chromium"].find((path) => existsSync(path));
const SHOTS = join(Deno.env.get("SPECTER_ARTIFACTS") ?? join(ROOT, "ci-artifacts"), "web-viewer");

if (CHROMIUM === undefined) {
  if (Deno.env.get("CI") === "true") throw new Error("Chromium is missing (apt-get install chromium)");
  console.warn("web_viewer_test: SKIPPED, no Chromium (apt-get install chromium)");
}

function browserTest(name: string, fn: (browser: Browser, dir: string) => Promise<void>): void {
  Deno.test(
    { name, ignore: CHROMIUM === undefined, sanitizeOps: false, sanitizeResources: false },
    async () => {
      await withTempDir(async (dir) => {
        const browser = await chromium.launch({
          executablePath: CHROMIUM,
          args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
        });
        try {
          await withTimeout(fn(browser, dir), 90_000, name);
        } finally {
          await browser.close();
        }
      });
    },
  );
}

/** A page that fails the test on any uncaught page error. */
async function open(
  browser: Browser,
  url: string,
): Promise<{ page: Page; errors: string[]; console: string[] }> {
  const page = await browser.newPage({ viewport: { width: 1100, height: 800 } });
  const errors: string[] = [];
  const console: string[] = [];
  page.on("pageerror", (error) => errors.push(String(error)));
  page.on("console", (message) => console.push(`${message.type()}: ${message.text()}`));
  await page.goto(url);
  return { page, errors, console };
}

async function screenText(page: Page): Promise<string> {
  return await page.evaluate("globalThis.specterViewer.screenText()") as string;
}

async function untilScreen(page: Page, pattern: RegExp, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(await screenText(page))) {
    if (Date.now() > deadline) throw new Error(`The screen never showed ${what}:\n${await screenText(page)}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** True when the element is shown and not covered: the point at its centre hits it (or its content). */
async function visible(page: Page, selector: string): Promise<boolean> {
  return await page.evaluate(`(() => {
    const el = document.querySelector(${JSON.stringify(selector)});
    if (el === null || el.hidden) return false;
    el.scrollIntoView({ block: "center" });
    const box = el.getBoundingClientRect();
    if (box.width === 0 || box.height === 0) return false;
    const hit = document.elementFromPoint(box.left + box.width / 2, box.top + Math.min(box.height / 2, 10));
    return hit !== null && (hit === el || el.contains(hit));
  })()`) as boolean;
}

async function shot(page: Page, name: string): Promise<void> {
  Deno.mkdirSync(SHOTS, { recursive: true });
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

/** Waits until the element's text matches (the page's CSP refuses string evaluation: polled from here). */
async function untilText(page: Page, selector: string, pattern: RegExp): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (!pattern.test(await page.textContent(selector) ?? "")) {
    if (Date.now() > deadline) {
      throw new Error(`${selector} never matched ${pattern}: ${await page.textContent(selector)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

function urlOf(daemon: RemoteDaemon, token: "viewer" | "control", fragment = "", page = ""): string {
  const value = token === "viewer" ? daemon.info.viewer_token : daemon.info.control_token;
  return `${daemon.info.url}${page}#${fragment}token=${value}`;
}

browserTest(
  "web viewer: live output of a sandboxed session, typing reaches it, the exit notice shows code and last lines",
  async (browser, dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      await create(daemon, "demo", [
        "/bin/sh",
        "-c",
        'echo "ready: $$"; read line; echo "got:$line"; echo "last line here"; exit 3',
      ], ["--title", "Demo title"]);
      const { page, errors } = await open(browser, urlOf(daemon, "control", "session=demo&"));
      await untilScreen(page, /ready: \d+/, "the program's first line");
      assert.equal(await page.textContent("#mode"), "control");
      assert.doesNotMatch(page.url(), /token=/, "the token leaves the address bar");
      await shot(page, "1-live-output");
      // A control token's terminal follows the window: the program's terminal is resized to fit it.
      const watcher = await WsRpc.open(daemon, daemon.info.viewer_token!);
      await watcher.hello();
      await watcher.call("session.attach", { name: "demo" });
      await page.setViewportSize({ width: 640, height: 700 });
      await watcher.until(
        () => watcher.frames("demo").some((f) => f.type === "resize_ack" && (f.cols as number) < 80),
        20_000,
        "the session's terminal resized to the narrower window",
      );
      const cols = await page.evaluate("globalThis.specterViewer.term.cols") as number;
      assert.ok(
        watcher.frames("demo").some((f) => f.type === "resize_ack" && f.cols === cols),
        `cols ${cols}`,
      );
      watcher.close();
      await page.click("#terminal");
      await page.keyboard.type("hello from the page\n");
      await untilScreen(page, /got:hello from the page/, "what was typed, echoed by the program");
      await page.waitForSelector("#notice:not([hidden])", { timeout: 20_000 });
      const notice = await page.textContent("#notice") ?? "";
      assert.match(notice, /exited with code 3/, notice);
      assert.match(notice, /last line here/, notice);
      assert.equal(await page.getAttribute("#notice", "data-exit-code"), "3");
      assert.equal(await page.getAttribute("#notice", "role"), "status");
      assert.ok(await visible(page, "#notice"), "the notice is visible, not covered by the terminal");
      await shot(page, "2-exit-notice");
      assert.deepEqual(errors, []);
    });
  },
);

browserTest(
  "web viewer: a viewer token watches read-only; typing does not reach the program",
  async (browser, dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      await create(daemon, "watched", ["/bin/sh", "-c", 'echo "waiting"; read line; echo "got:$line"']);
      const { page, errors } = await open(browser, urlOf(daemon, "viewer", "session=watched&"));
      await untilScreen(page, /waiting/, "the program's output");
      assert.equal(await page.textContent("#mode"), "read-only");
      await page.click("#terminal");
      await page.keyboard.type("typed by a viewer\n");
      await new Promise((resolve) => setTimeout(resolve, 1000));
      assert.doesNotMatch(await screenText(page), /got:/);
      await shot(page, "3-read-only");
      await specter(["send", "watched", ...whereArgs(daemon), "--no-autostart", "from the owner", "--enter"]);
      await untilScreen(page, /got:from the owner/, "the owner's input, watched live");
      assert.deepEqual(errors, []);
    });
  },
);

browserTest("web viewer: a timed-out session shows the timeout notice", async (browser, dir) => {
  await withRemoteDaemon(dir, [], async (daemon) => {
    await create(daemon, "slow", ["/bin/sh", "-c", "echo working; read line"], ["--timeout", "1s"]);
    const { page, errors } = await open(browser, urlOf(daemon, "viewer", "session=slow&"));
    await page.waitForSelector("#notice:not([hidden])", { timeout: 30_000 });
    const notice = await page.textContent("#notice") ?? "";
    assert.match(notice, /Timed out/, notice);
    assert.equal(await page.getAttribute("#notice", "data-timed-out"), "true");
    assert.ok(await visible(page, "#notice"));
    await shot(page, "4-timeout-notice");
    assert.deepEqual(errors, []);
  });
});

browserTest(
  "web viewer: the session list names each session; the replay page plays a logged session",
  async (browser, dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      await create(daemon, "listed", ["/bin/sh", "-c", "echo one; echo two; exit 0"], [
        "--title",
        "A title",
        "--description",
        "What it does",
        "--parent-agent",
        "agent-7",
      ]);
      const { page, errors } = await open(browser, urlOf(daemon, "viewer"));
      await page.waitForSelector('tr[data-session="listed"]', { timeout: 20_000 });
      const deadline = Date.now() + 20_000;
      let row = "";
      while (!/exited/.test(row) && Date.now() < deadline) {
        row = await page.textContent('tr[data-session="listed"]') ?? "";
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      for (const text of ["listed", "A title", "What it does", "agent-7", "exited", "0"]) {
        assert.ok(row.includes(text), row);
      }
      await shot(page, "5-session-list");
      const replay = await open(browser, urlOf(daemon, "viewer", "session=listed&", "replay"));
      await replay.page.waitForSelector("#player[data-loaded] .ap-player", { timeout: 20_000 });
      await replay.page.waitForFunction(
        "document.querySelector('#player').textContent.includes('two')",
        undefined,
        { timeout: 20_000 },
      );
      // The progress line said how far the log had loaded, and ends with the count (clients/web/src/progress.ts).
      const progress = await replay.page.textContent("#replay-progress[data-done]");
      assert.match(progress ?? "", /^Loaded [1-9][\d,]* frames$/);
      await shot(replay.page, "6-replay");
      // A recording from disk, chosen in the page: played too (nothing is uploaded).
      const local = await open(browser, `${daemon.info.url}replay`);
      await local.page.setInputFiles("#cast-file", join(ROOT, "fixtures/workloads/git-log.cast"));
      await local.page.waitForSelector("#player[data-loaded] .ap-player", { timeout: 20_000 });
      await local.page.waitForFunction(
        "document.querySelector('#player').textContent.includes('commit')",
        undefined,
        { timeout: 20_000 },
      );
      await shot(local.page, "6b-replay-of-a-file");
      assert.deepEqual([...errors, ...replay.errors, ...local.errors], []);
    });
  },
);

browserTest(
  "web viewer: a legacy bare exit frame shows the plain message; a malformed frame is dropped with a warning",
  async (browser) => {
    // A stand-in daemon: the real pages and bundle, and frames no Specter daemon sends.
    const frames = [
      {
        seq: 0,
        ts: 1,
        type: "start",
        protocol: 1,
        version: "x",
        session: { id: "old", title: null, description: null, parent_agent: null },
        argv: ["/bin/old"],
        cwd: "/",
        cols: 80,
        rows: 24,
        pid: 9,
      },
      { seq: 1, ts: 2, type: "stdout", data: "output of an older producer\r\n" },
      {
        seq: 2,
        ts: 3,
        type: "pty_exited",
        session_id: "old",
        last_lines: [],
        session_title: null,
        session_description: null,
        parent_agent: null,
        timed_out: false,
      },
      { type: "exit", code: 4 },
    ];
    const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, (request) => {
      const url = new URL(request.url);
      if (url.pathname === "/v1/ws") {
        const { socket, response } = Deno.upgradeWebSocket(request, { protocol: "specter.v1" });
        socket.onmessage = (event) => {
          const message = JSON.parse(event.data as string);
          const answer = (result: unknown) =>
            socket.send(JSON.stringify({ jsonrpc: "2.0", id: message.id, result }) + "\n");
          if (message.method === "daemon.hello") {
            answer({ protocol: 1, version: "old", pid: 1, state_dir: "/", scope: "viewer" });
          }
          if (message.method === "session.attach") {
            answer({ name: "old", log_id: null, control: false, next_seq: 3 });
            for (const frame of frames) {
              socket.send(
                JSON.stringify({ jsonrpc: "2.0", method: "frame", params: { name: "old", frame } }) + "\n",
              );
            }
            socket.send(
              JSON.stringify({ jsonrpc: "2.0", method: "session.end", params: { name: "old" } }) + "\n",
            );
          }
        };
        return response;
      }
      const page = PAGES[url.pathname];
      const asset = ASSETS[url.pathname.replace("/assets/", "")];
      const found = page ?? asset;
      return found === undefined
        ? new Response("", { status: 404 })
        : new Response(found.body, { headers: { "content-type": found.type } });
    });
    try {
      const { page, errors, console } = await open(
        browser,
        `http://127.0.0.1:${server.addr.port}/#session=old&token=${"x".repeat(30)}`,
      );
      await page.waitForSelector("#notice:not([hidden])", { timeout: 20_000 });
      const notice = await page.textContent("#notice") ?? "";
      assert.match(notice, /exited with code 4/, notice);
      assert.ok(await visible(page, "#notice"));
      const warnings = await page.textContent("#warnings") ?? "";
      assert.match(warnings, /malformed "pty_exited" frame was dropped \(exit_code/, warnings);
      assert.ok(
        console.some((line) => line.startsWith("warning:") && line.includes("malformed")),
        console.join("\n"),
      );
      await untilScreen(page, /output of an older producer/, "the older producer's output");
      await shot(page, "7-legacy-exit-and-malformed-frame");
      assert.deepEqual(errors, [], "no page error");
    } finally {
      await server.shutdown();
    }
  },
);

browserTest(
  "web viewer: a page outlives a daemon restart (listener and token remembered); a revoked token is said so, with what to run",
  async (browser, dir) => {
    await withRemoteDaemon(dir, [], async (daemon) => {
      await create(daemon, "kept", [
        "/bin/sh",
        "-c",
        "echo still here; read line; echo after:$line; read line",
      ]);
      const session = await open(browser, urlOf(daemon, "control", "session=kept&"));
      await untilScreen(session.page, /still here/, "the program's line");
      // The daemon stops (its session goes on in the keeper): the page waits, then the next daemon (no
      // --bind: the remembered listener) takes it back and the page's token still holds.
      const stopped = await specter(["daemon", "stop", ...whereArgs(daemon)]);
      assert.equal(stopped.code, 0, stopped.stderr);
      await untilText(session.page, "#link", /does not answer/);
      await restart(daemon);
      await untilText(session.page, "#link", /^connected/);
      await specter(["send", "kept", ...whereArgs(daemon), "--no-autostart", "back", "--enter"]);
      await untilScreen(session.page, /after:back/, "output after the restart");
      await create(daemon, "kept2", ["/bin/sh", "-c", "echo second; read line"]);
      const list = await open(browser, urlOf(daemon, "viewer"));
      await list.page.waitForSelector('tr[data-session="kept2"]', { timeout: 20_000 });
      const revoked = await specter(["daemon", "revoke", ...whereArgs(daemon)]);
      assert.equal(revoked.code, 0, revoked.stderr);
      for (const { page } of [session, list]) {
        await page.waitForSelector("#token-invalid:not([hidden])", { timeout: 20_000 });
        assert.ok(await visible(page, "#token-invalid"), "the message is visible, not covered");
        const text = await page.textContent("#token-invalid") ?? "";
        assert.match(text, /token is no longer valid/);
        assert.match(text, /specter url/);
        assert.equal(await page.textContent("#link"), "token no longer valid");
      }
      await shot(list.page, "8-token-revoked");
      assert.deepEqual([...session.errors, ...list.errors], []);
    });
  },
);
