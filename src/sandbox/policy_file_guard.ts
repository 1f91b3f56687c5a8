/**
 * A policy file out of its own sandbox's reach. A policy file that lies inside one of the write grants
 * it declares can be rewritten by the program it confines, to widen the sandbox of the next run that
 * uses it (`fs.write = ["~/.ssh"]`): callers reuse their command lines, acknowledgement flags included,
 * so nothing would stop that run. Such a launch is refused (`E_POLICY_SELF_WRITABLE`) before the program
 * starts; there is no flag to allow it, since the next run would trust whatever the program left.
 *
 * "Inside" is decided as the artifacts guard decides it: by name (the path as given and as resolved,
 * so that a link on the way inside the grant, which the program could retarget, counts too), by identity
 * (the grant is the file, its directory or one above it, walking up by descriptor), and through the mount
 * table (a bind mount of a directory above the file, elsewhere).
 *
 * @module
 */
import { dirname } from "node:path";
import {
  ancestorIdentities,
  closeFd,
  fdInfo,
  fsLocation,
  isWithin,
  locatedWithin,
  mountTable,
  openNoSymlinks,
} from "../fsafe/mod.ts";
import { PolicyError, type PolicyProblem } from "../errors.ts";
import type { RealizedPolicy } from "./realize.ts";

/** Where a policy file is: the path it was read from, where that resolves, and what contains it by identity. */
interface PolicyFilePlace {
  readonly real: string | null;
  /** Identities of the file and every directory above it. */
  readonly containers: ReadonlySet<string>;
  readonly location: ReturnType<typeof fsLocation>;
}

function locate(named: string, table: ReturnType<typeof mountTable>): PolicyFilePlace {
  let real: string;
  try {
    real = Deno.realPathSync(named);
  } catch {
    // Gone since it was read: only its name can be checked (a write grant could bring it back).
    return { real: null, containers: new Set(), location: null };
  }
  const file = openNoSymlinks(real);
  let parent = -1;
  try {
    parent = openNoSymlinks(dirname(real));
    return {
      real,
      containers: new Set([fdInfo(file).identity, ...ancestorIdentities(parent)]),
      location: fsLocation(file, table),
    };
  } finally {
    closeFd(parent);
    closeFd(file);
  }
}

/**
 * Refuses a launch whose policy came from a file (`source` `file:PATH`) that one of the policy's own
 * `fs.write` grants contains or is. Throws `PolicyError` `E_POLICY_SELF_WRITABLE` naming the grant and
 * the file; presets and policies given as documents are not checked (no file to rewrite).
 */
export function guardPolicyFile(realized: RealizedPolicy, source: string): void {
  if (!source.startsWith("file:") || realized.policy.fs.write.length === 0) return;
  const named = source.slice("file:".length);
  if (!named.startsWith("/")) return; // loadPolicy makes it absolute; a document's source names no file.
  const table = mountTable();
  const place = locate(named, table);
  const problems: PolicyProblem[] = [];
  realized.policy.fs.write.forEach((grant, i) => {
    const opened = realized.opened.get(grant);
    const grantLocation = opened === undefined ? null : fsLocation(opened.fd, table);
    const inside = isWithin(named, grant) || (place.real !== null && isWithin(place.real, grant)) ||
      (opened !== undefined && place.containers.has(opened.info.identity)) ||
      (place.location !== null && grantLocation !== null && locatedWithin(place.location, grantLocation));
    if (!inside) return;
    problems.push({
      code: "E_POLICY_SELF_WRITABLE",
      field: `fs.write[${i}]`,
      message:
        `Field "fs.write[${i}]" grants "${grant}", which contains the policy file "${named}" itself: ` +
        `the program could rewrite the policy of the next run that uses it; keep the policy file outside ` +
        `its write grants`,
    });
  });
  if (problems.length > 0) throw new PolicyError(problems);
}
