/**
 * The built-in presets. They are JSON files in `profiles/presets/`, imported (not read at run time) so
 * that `deno compile` embeds them, and checked like any policy file.
 *
 * @module
 */
import agent from "../../profiles/presets/agent.json" with { type: "json" };
import basic from "../../profiles/presets/basic.json" with { type: "json" };
import strict from "../../profiles/presets/strict.json" with { type: "json" };
import workspace from "../../profiles/presets/workspace.json" with { type: "json" };

/**
 * The preset names: `strict` (only the target program runs, no host reads or writes, no network, minimal
 * env), `basic` (plus /usr/local/bin, /usr/bin and /bin), `workspace` (plus reading and writing the working
 * directory; needs --ack-unsafe-write), `agent` (default of `specter agent`).
 */
export const PRESET_NAMES = ["strict", "basic", "workspace", "agent"] as const;

/** A preset name. */
export type PresetName = (typeof PRESET_NAMES)[number];

/** The preset used when no policy is given. */
export const DEFAULT_PRESET = "strict" satisfies PresetName;

/**
 * The preset `specter agent` and `specter mcp` use when no policy is given: an agent's commands are shell
 * strings that run `ls`, `grep` and `git` in the project, which `strict` does not let run. It shows every
 * system program, the working directory, the system headers and a list of `/etc` files, read-only; writes
 * go only to the private `/tmp`; nothing of the home (spec/agent.md).
 */
export const AGENT_DEFAULT_PRESET = "agent" satisfies PresetName;

/** The parsed preset documents (unchecked: they go through `checkPolicyDocument` like any file). */
export const PRESET_DOCUMENTS: Readonly<Record<PresetName, unknown>> = { strict, basic, workspace, agent };

/** True when `name` is a preset name (exact, case-sensitive). */
export function isPresetName(name: string): name is PresetName {
  return (PRESET_NAMES as readonly string[]).includes(name);
}
