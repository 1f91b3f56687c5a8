/**
 * Applying shell integration (`shell_integration.ts`) to a launch: where its files go depends on the
 * backend. Under bwrap they are data files bound read-only beneath `/run/specter/shell` (nothing is written
 * on the host); under Seatbelt they are written to the run's private temp directory; without a sandbox to
 * a fresh private directory removed after the run; under `external` (someone else's sandbox, whose view
 * of the host is unknown) no file is given, and bash gets its marks through the environment. The marks'
 * nonce goes to the shell on a descriptor under every backend, and under bwrap the shell runs from an
 * exec-only copy of itself (`LaunchRequest.execOnlyCopy`): what it starts cannot read its memory.
 *
 * @module
 */
import { DATA_ROOT, type LaunchRequest, type SandboxBackend } from "../sandbox/mod.ts";
import type { ResolvedOptions } from "./options.ts";
import {
  knownShell,
  NONCE_FD,
  type ShellFile,
  type ShellIntegration,
  shellIntegration,
} from "./shell_integration.ts";

/** Where bwrap places the integration's files inside the sandbox. */
export const SANDBOX_SHELL_DIR = `${DATA_ROOT}/shell`;

/** What a launch becomes with shell integration. */
export interface ShellSetup {
  readonly request: LaunchRequest;
  readonly options: ResolvedOptions;
  /** A host directory made for the files, to remove after the run (`null`: none was made). */
  readonly madeDir: string | null;
}

/** How {@link setUpShell} may place files on the host. */
export interface ShellPlacement {
  /** Seatbelt: the run's private temp directory (absent: none, e.g. a plan being rendered). */
  readonly tmpDir?: string | null;
  /** No sandbox: makes a fresh private directory (absent: none is made, as for a rendered plan). */
  readonly makeDir?: () => string;
}

/**
 * `request` and `options` with shell integration when `options.shellIntegration` asks for it and the
 * program is an interactive bash or zsh; unchanged otherwise.
 */
export function setUpShell(
  request: LaunchRequest,
  options: ResolvedOptions,
  backend: SandboxBackend,
  placement: ShellPlacement = {},
): ShellSetup {
  const unchanged = { request, options, madeDir: null };
  if (!options.shellIntegration) return unchanged;
  const shell = knownShell(request.program, request.args);
  if (shell === null) return unchanged;
  let dir: string | null = null;
  let madeDir: string | null = null;
  let write: ((files: readonly ShellFile[]) => void) | null = null;
  if (backend === "bwrap") dir = SANDBOX_SHELL_DIR;
  else if (backend === "seatbelt" && placement.tmpDir) {
    const at = dir = `${placement.tmpDir}/.specter-shell`;
    write = (files) => writeFiles(at, files, true);
  } else if (backend === "none" && placement.makeDir !== undefined) {
    const at = dir = madeDir = placement.makeDir();
    write = (files) => writeFiles(at, files, false);
  }
  let integration: ShellIntegration | null;
  try {
    integration = shellIntegration(shell, request.args, request.env, dir);
    if (integration !== null) write?.(integration.files);
  } catch (error: unknown) {
    // The directory made for the files goes with them (a full disk, say): nothing is left behind.
    if (madeDir !== null) Deno.removeSync(madeDir, { recursive: true });
    throw error;
  }
  if (integration === null) return { ...unchanged, madeDir };
  const env = { ...request.env, ...integration.env };
  const encoder = new TextEncoder();
  const nonce = {
    target: NONCE_FD,
    purpose: "shell integration nonce",
    content: encoder.encode(`${integration.nonce}\n`),
    secret: true,
  };
  return {
    request: {
      ...request,
      args: integration.args,
      env,
      passFiles: [...(request.passFiles ?? []), nonce],
      ...(backend === "bwrap" ? { execOnlyCopy: `${SANDBOX_SHELL_DIR}/${shell}` } : {}),
      ...(backend === "bwrap" && integration.files.length > 0
        ? {
          dataFiles: integration.files.map((file) => ({
            dest: `${SANDBOX_SHELL_DIR}/${file.name}`,
            content: encoder.encode(file.content),
          })),
        }
        : {}),
    },
    options: { ...options, env, commandMarkNonce: integration.nonce },
    madeDir,
  };
}

/** Writes `files` into `dir` (made first when `make`), private to this user, never over an existing file. */
function writeFiles(dir: string, files: readonly ShellFile[], make: boolean): void {
  if (make) Deno.mkdirSync(dir, { mode: 0o700 });
  for (const { name, content } of files) {
    Deno.writeTextFileSync(`${dir}/${name}`, content, { mode: 0o600, createNew: true });
  }
}
