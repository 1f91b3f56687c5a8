/**
 * `specter exec`'s policy hint: when the output's last lines show the policy at work (`ls: command not
 * found` under `strict`, a path it hides), one line on stderr says so and which flag changes it. The
 * program may still exit 0 (`bash -c 'ls /; echo after'`), so the output is looked at whatever the exit;
 * the agent tools' hint (src/agent/policy_hint.ts) decides, so both say the same.
 *
 * @module
 */
import { policyHint } from "../agent/mod.ts";
import { hostHome } from "../policy/mod.ts";
import { DEFAULTS, type SandboxOption } from "../session/mod.ts";

/** Characters of the output's end kept for the hint (the hint reads its last 20 lines). */
export const TAIL_CHARS = 8192;

/** The last {@link TAIL_CHARS} characters of the program's text output. */
export class OutputTail {
  #text = "";

  /** Adds output text. */
  push(text: string): void {
    this.#text = (this.#text + text).slice(-TAIL_CHARS);
  }

  /** What is kept. */
  get text(): string {
    return this.#text;
  }
}

/** The hint for a run under `sandbox` in `cwd` whose output ended with `tail`, if the policy caused it. */
export function execPolicyHint(
  tail: string,
  sandbox: SandboxOption | undefined,
  cwd: string,
): string | undefined {
  if (sandbox === undefined || !("policy" in sandbox)) return undefined;
  return policyHint(tail.replace(/\r/g, ""), {
    policy: sandbox.policy,
    cwd,
    home: hostHome(),
    sandboxPath: DEFAULTS.path,
  });
}
