/**
 * The macOS backend: a Seatbelt (SBPL) profile generated from a policy, run with
 * `/usr/bin/sandbox-exec -p PROFILE program args…`.
 *
 * **Generated and golden-tested, never executed in CI.** Specter's CI and development machines run
 * Linux, where `sandbox-exec` does not exist. The profiles are checked as text: a golden file per
 * preset (`fixtures/goldens/seatbelt/`), tests of each rule's semantics, and a fuzz test that puts
 * more than 10,000 hostile paths through the escaper and reads the profile back with {@link readSexps}.
 * Nothing here proves that macOS accepts a profile or enforces it as intended; that needs a Mac.
 *
 * @example
 * ```ts
 * import { loadPolicy } from "../../policy/mod.ts";
 * import { seatbeltProfile } from "./mod.ts";
 *
 * const policy = loadPolicy("strict", {
 *   workspace: "/Users/me/project",
 *   home: "/Users/me",
 *   acks: { unsafeWrite: false, network: false },
 * });
 * console.log(seatbeltProfile(policy, { program: "/bin/zsh", args: [], cwd: "/Users/me/project", env: {} }));
 * ```
 *
 * @module
 */
export { MAX_LITERAL_BYTES, sbplQuote, sbplString } from "./escape.ts";
export { MACH_SERVICES, type MachService, NETWORK_MACH_SERVICES } from "./mach_services.ts";
export { ancestorsOf, assertProfilePath, MAX_PATH_BYTES, pathDepth, profilePathProblem } from "./paths.ts";
export { type SeatbeltOptions, seatbeltProfile } from "./profile.ts";
export { SANDBOX_EXEC, seatbeltPlan } from "./seatbelt_plan.ts";
export {
  readSexps,
  type Sexp,
  type SexpList,
  type SexpNumber,
  type SexpRegex,
  type SexpString,
  type SexpSymbol,
  SexpSyntaxError,
  stringValue,
  symbolName,
} from "./sexp.ts";
export { type Sysctl, SYSCTLS } from "./sysctls.ts";
export {
  DEVICE_PATHS,
  NETWORK_READ_PATHS,
  type PathFilterKind,
  SYSTEM_READ_PATHS,
  type SystemPath,
  TTY_REGEX,
} from "./system_paths.ts";
