/**
 * What the listener serves besides the WebSocket: the viewer's pages, their stylesheet and script (the
 * page's code is bundled from `clients/web/` at build time: `deno task build:web`), and the npm packages
 * they load (`@xterm/xterm` and its fit addon, `asciinema-player`), embedded in the module graph as text so
 * that `deno compile` carries them and nothing is read from disk or a CDN at run time.
 *
 * @module
 */
import xtermJs from "@xterm/xterm/lib/xterm.mjs" with { type: "text" };
import xtermCss from "@xterm/xterm/css/xterm.css" with { type: "text" };
import fitJs from "@xterm/addon-fit/lib/addon-fit.mjs" with { type: "text" };
import playerJs from "asciinema-player/dist/bundle/asciinema-player.min.js" with { type: "text" };
import playerCss from "asciinema-player/dist/bundle/asciinema-player.css" with { type: "text" };
import viewerJs from "./_assets/viewer.js" with { type: "text" };
import viewerCss from "./_assets/viewer.css" with { type: "text" };

const JS = "text/javascript; charset=utf-8";
const CSS = "text/css; charset=utf-8";
const HTML = "text/html; charset=utf-8";

/** One served file. */
export interface Asset {
  readonly body: string;
  readonly type: string;
}

/** Files under `/assets/`. */
export const ASSETS: Readonly<Record<string, Asset>> = {
  "xterm.mjs": { body: xtermJs, type: JS },
  "xterm.css": { body: xtermCss, type: CSS },
  "addon-fit.mjs": { body: fitJs, type: JS },
  "asciinema-player.min.js": { body: playerJs, type: JS },
  "asciinema-player.css": { body: playerCss, type: CSS },
  "viewer.js": { body: viewerJs, type: JS },
  "viewer.css": { body: viewerCss, type: CSS },
};

function page(title: string, body: string, head = ""): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${title}</title>
<link rel="stylesheet" href="/assets/viewer.css">
${head}</head>
<body>
${body}
<script type="module" src="/assets/viewer.js"></script>
</body>
</html>
`;
}

/** The pages, by path. */
export const PAGES: Readonly<Record<string, Asset>> = {
  "/": {
    type: HTML,
    body: page(
      "Specter",
      `<header><a href="#" id="home">Specter</a> <span id="where"></span> <span id="link" role="status"></span></header>
<main id="app" data-page="viewer">
<div id="token-invalid" role="alert" hidden><strong>This page's token is no longer valid.</strong> The daemon refuses it: its tokens were revoked (<code>specter daemon revoke</code>) or it was given other ones. Run <code>specter url</code> where the daemon runs and open the address it prints.</div>
<section id="list-view" hidden>
<h1>Sessions</h1>
<table id="sessions"><thead><tr><th>Name</th><th>Title</th><th>Description</th><th>Parent agent</th><th>State</th><th>Started</th><th>Exit code</th><th></th></tr></thead><tbody></tbody></table>
<p id="empty" hidden>No sessions yet: <code>specter new NAME -- PROGRAM</code> starts one.</p>
</section>
<section id="session-view" hidden>
<div id="bar"><strong id="session-name"></strong> <span id="session-title"></span> <span id="mode"></span> <a id="replay-link" href="/replay">Replay</a></div>
<div id="terminal"></div>
<div id="notice" role="status" aria-live="polite" hidden></div>
<div id="warnings" role="log" aria-live="polite"></div>
</section>
<p id="no-token" hidden>Open this page with the address <code>specter url</code> prints: it carries the token after <code>#</code>, which never leaves this browser.</p>
</main>`,
      '<link rel="stylesheet" href="/assets/xterm.css">\n',
    ),
  },
  "/replay": {
    type: HTML,
    body: page(
      "Specter replay",
      `<header><a href="/" id="home">Specter</a> replay <span id="link" role="status"></span></header>
<main id="app" data-page="replay">
<p><label>Play a recording (.cast): <input type="file" id="cast-file" accept=".cast,application/x-asciicast,application/json"></label></p>
<p id="replay-progress" role="status" aria-live="polite" hidden></p>
<div id="player"></div>
<div id="warnings" role="log" aria-live="polite"></div>
</main>
<script src="/assets/asciinema-player.min.js"></script>`,
      '<link rel="stylesheet" href="/assets/asciinema-player.css">\n',
    ),
  },
};
