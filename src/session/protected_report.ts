/**
 * The `exit` frame's strict-write report: protected names (`.git`, `.envrc`, …) the run created under
 * its write roots. No kernel mechanism forbids creating a name, so creations are reported, not prevented.
 *
 * @module
 */
import type { ExitFrame } from "../protocol/mod.ts";
import type { ProtectedWatch } from "../sandbox/mod.ts";

/** The exit frame fields for `watch` (none without strict-write). Never throws: the exit must go out. */
export function protectedReport(
  watch: ProtectedWatch | null | undefined,
): Pick<ExitFrame, "protected_created" | "protected_unchecked"> {
  if (watch === null || watch === undefined) return {};
  try {
    const report = watch.finish();
    return {
      protected_created: report.created,
      ...(report.limits.length > 0 ? { protected_unchecked: report.limits } : {}),
    };
  } catch (error: unknown) {
    watch.close();
    return {
      protected_created: [],
      protected_unchecked: [`The walk after the run failed: ${(error as Error).message}`],
    };
  }
}
