/**
 * `specter sandbox probe`: which sandbox backends can run here, and if not, why and how to fix it.
 *
 * @module
 */
import { UsageError } from "../errors.ts";
import { parseFlags } from "./flags.ts";
import { type CommandDoc, commandOptions, type FlagTable, HELP_FLAG } from "./flag_table.ts";
import { probeBwrap } from "../sandbox/mod.ts";
import { platformBackend } from "../session/mod.ts";

const SANDBOX_PROBE_FLAGS = {
  json: {
    type: "boolean",
    description: "Print {auto, usable, backends: [{backend, available, detail, fix}]}",
  },
  ...HELP_FLAG,
} as const satisfies FlagTable;

/** `specter sandbox`'s help. */
export const SANDBOX_DOC: CommandDoc = {
  name: "sandbox",
  usage: ["specter sandbox probe [--json]"],
  about:
    `Reports which sandbox backends can run on this machine and, for each that cannot, why and how to fix it.
Exits 0 when the backend --sandbox auto would use is available, 1 otherwise.`,
  groups: [{ title: "Probe flags", flags: SANDBOX_PROBE_FLAGS }],
};

/** One backend's availability. */
export interface BackendReport {
  /** Backend name. */
  readonly backend: "bwrap" | "seatbelt";
  /** True when it can run here. */
  readonly available: boolean;
  /** Version or location when available; the reason otherwise. */
  readonly detail: string;
  /** How to make it available; `null` when it is. */
  readonly fix: string | null;
}

/** Probes every backend for this platform. */
export function probeBackends(): BackendReport[] {
  const bwrap = probeBwrap();
  return [
    bwrap.ok
      ? { backend: "bwrap", available: true, detail: `${bwrap.version} at ${bwrap.path}`, fix: null }
      : { backend: "bwrap", available: false, detail: bwrap.reason, fix: bwrap.fix },
    Deno.build.os === "darwin"
      ? {
        backend: "seatbelt",
        available: false,
        detail: "The Seatbelt backend is not implemented yet",
        fix: null,
      }
      : { backend: "seatbelt", available: false, detail: "Seatbelt exists only on macOS", fix: null },
  ];
}

/** Runs `specter sandbox probe [--json]`; exit 0 when the platform's default backend is available. */
export function sandboxCommand(args: readonly string[], out: (text: string) => void): number {
  const { values, positionals } = parseFlags(args, commandOptions(SANDBOX_DOC));
  if (positionals[0] !== "probe" || positionals.length !== 1) {
    throw new UsageError(`Unknown sandbox command "${positionals.join(" ")}" (try: specter sandbox probe)`);
  }
  const reports = probeBackends();
  let auto: string;
  try {
    auto = platformBackend();
  } catch {
    auto = "none"; // No backend for this OS: `auto` would fail, which the report says.
  }
  const usable = reports.some((r) => r.backend === auto && r.available);
  if (values.json === true) {
    out(JSON.stringify({ auto, usable, backends: reports }));
  } else {
    for (const r of reports) {
      out(
        `${r.available ? "ok  " : "no  "} ${r.backend.padEnd(9)} ${r.detail}${
          r.fix ? `\n     fix: ${r.fix}` : ""
        }`,
      );
    }
    out(usable ? `--sandbox auto uses ${auto}` : `--sandbox auto would fail: ${auto} is not available`);
  }
  return usable ? 0 : 1;
}
