/**
 * Artifacts out of reach: a run's artifacts directory (audit log, recording, snapshots, bundle) must be
 * neither writable nor visible inside its sandbox, or the program could forge (or read back) its own
 * record while it runs.
 *
 * Containment is decided by identity, never by name, so that an alias (a symlink or bind mount onto the
 * same directory, a path with `..`) is still the same place:
 * - walking up from the artifacts directory's descriptor (`openat(fd, "..")`) and comparing each
 *   ancestor's `dev:ino` with each grant's opened descriptor;
 * - walking up from each grant's descriptor the same way (a grant inside the artifacts directory);
 * - through the mount table: every path at which the artifacts directory is mounted in this namespace
 *   (a bind mount of it or of a parent elsewhere) is checked against each grant's real path.
 *
 * Then: a write grant that contains the artifacts directory or lies inside it is refused
 * (`E_POLICY_ARTIFACTS_EXPOSED`), as is any grant inside it; a read or exec grant that contains it gets an
 * empty read-only tmpfs over each place it shows there (`hide`), so the program sees an empty directory.
 * A backend that cannot hide (Seatbelt) refuses that case too.
 *
 * @module
 */
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

/** A directory a launch keeps out of the sandbox (a missing one is skipped: nothing of it to expose). */
export interface ArtifactPlace {
  /** The directory (the run's artifacts directory; the directory a recording is written to). */
  readonly dir: string;
  /**
   * Read grants may show it (the directory of a recording without shell integration: reading it as it is
   * written tells the program nothing it did not print). Otherwise read grants get it hidden, or are
   * refused. An integrated shell's recording is not readable: it holds the shell's marks with their nonce.
   */
  readonly readable?: boolean;
  /**
   * What it is, for the refusal's message: the run's `artifacts` (default), the directory of its
   * `recording`, or Specter's own `state` (a daemon's, the runs', the command log's).
   */
  readonly kind?: "artifacts" | "recording" | "state";
}

/** The refusal of `grant` for the place `dir` of `kind`. */
function refusal(
  grant: { path: string; field: string; writable: boolean },
  dir: string,
  kind: ArtifactPlace["kind"],
  inside: boolean,
): PolicyProblem {
  const where = inside ? "lies inside" : "contains";
  const verb = grant.writable ? "forge" : "read";
  const [what, harm, fix] = kind === "state"
    ? [
      `Specter's own state directory "${dir}"`,
      `${
        grant.writable ? "rewrite" : "read"
      } other sessions' logs, nonces and homes and other runs' audit logs`,
      "choose a narrower grant",
    ]
    : kind === "recording"
    ? [
      `the directory "${dir}" of the run's recording`,
      grant.writable
        ? "forge its own recording"
        : "read its shell's marks and their nonce back from the recording",
      "record elsewhere or choose a narrower grant",
    ]
    : [
      `the artifacts directory "${dir}"`,
      `${verb} its own audit log and recordings`,
      "choose another --artifacts directory or a narrower grant",
    ];
  return {
    code: "E_POLICY_ARTIFACTS_EXPOSED",
    field: grant.field,
    message:
      `Field "${grant.field}" grants "${grant.path}", which ${where} ${what}: the program could ${harm}; ${fix}`,
  };
}

/** What the guard decided. */
export interface ArtifactGuard {
  /** Host paths (inside read/exec grants) to cover with an empty read-only tmpfs in the sandbox. */
  readonly hide: readonly string[];
}

/** Opens a directory Specter itself named (the user's `--artifacts`, or the state directory). */
function openArtifact(path: string): number | null {
  let real: string;
  try {
    // The user's own path may pass through their own links (a symlinked home): where it really is counts.
    real = Deno.realPathSync(path);
  } catch {
    return null; // Not there: nothing of it can be exposed.
  }
  return openNoSymlinks(real);
}

/**
 * Checks `realized` against the artifacts `places`. Throws `PolicyError` `E_POLICY_ARTIFACTS_EXPOSED`
 * naming the grant and the artifacts directory; returns what to hide otherwise.
 */
export function guardArtifacts(
  realized: RealizedPolicy,
  places: readonly ArtifactPlace[],
  options: { readonly canHide: boolean },
): ArtifactGuard {
  const policy = realized.policy;
  const grants: { path: string; field: string; writable: boolean }[] = [
    ...policy.fs.write.map((path) => ({ path, field: "fs.write", writable: true })),
    ...policy.fs.read.map((path) => ({ path, field: "fs.read", writable: false })),
    ...policy.exec.map((path) => ({ path, field: "exec", writable: false })),
    ...(policy.fs.sockets ?? []).map((path) => ({ path, field: "fs.sockets", writable: false })),
  ];
  const problems: PolicyProblem[] = [];
  const hide = new Set<string>();
  // The mount table only when there is something to guard (a library session may record nothing).
  const table = places.length === 0 ? new Map() as ReturnType<typeof mountTable> : mountTable();
  // Each grant's location once, whatever the number of places (every launch guards Specter's own state).
  const grantLocations = new Map<string, ReturnType<typeof fsLocation>>();
  const locate = (path: string, fd: number) => {
    if (!grantLocations.has(path)) grantLocations.set(path, fsLocation(fd, table));
    return grantLocations.get(path)!;
  };
  const grantAncestors = new Map<string, string[]>();
  const ancestorsOf = (path: string, fd: number) => {
    if (!grantAncestors.has(path)) grantAncestors.set(path, ancestorIdentities(fd));
    return grantAncestors.get(path)!;
  };
  // One place named twice (a daemon's own directories are also the defaults) is checked once, the
  // stricter way (readable only when every naming says so).
  const unique = new Map<string, ArtifactPlace>();
  for (const place of places) {
    const seen = unique.get(place.dir);
    unique.set(
      place.dir,
      seen === undefined ? place : {
        dir: place.dir,
        readable: seen.readable === true && place.readable === true,
        kind: seen.kind === place.kind ? place.kind : "artifacts",
      },
    );
  }
  for (const { dir, readable, kind } of unique.values()) {
    const fd = openArtifact(dir);
    if (fd === null) continue;
    try {
      const identity = fdInfo(fd).identity;
      const above = ancestorIdentities(fd);
      const location = fsLocation(fd, table);
      // Every path this namespace shows the artifacts directory at (itself, and through bind mounts).
      const aliases = location === null ? [] : [...table.values()].flatMap((m) => {
        if (m.device !== location.device || !isWithin(location.path, m.root)) return [];
        const rest = m.root === "/" ? location.path : location.path.slice(m.root.length);
        return [m.point === "/" ? rest || "/" : `${m.point}${rest === "/" ? "" : rest}`];
      });
      const reported = new Set<string>();
      for (const grant of grants) {
        if (!grant.writable && readable === true) continue;
        const opened = realized.opened.get(grant.path);
        if (opened === undefined) continue; // Missing read/exec entry: nothing is bound.
        const key = `${grant.field}\0${grant.path}`;
        const grantLocation = locate(grant.path, opened.fd);
        // The artifacts directory itself granted: "inside" (a tmpfs there would replace the grant).
        const same = opened.info.identity === identity;
        const bothLocated = location !== null && grantLocation !== null;
        const contains = !same && (above.includes(opened.info.identity) ||
          aliases.some((alias) => isWithin(alias, grant.path)) ||
          (bothLocated && locatedWithin(location, grantLocation)));
        const inside = same || (!contains && (
          (opened.info.kind === "dir" && ancestorsOf(grant.path, opened.fd).includes(identity)) ||
          (bothLocated && locatedWithin(grantLocation, location))
        ));
        if (!contains && !inside) continue;
        const shown = aliases.filter((alias) => isWithin(alias, grant.path));
        if (grant.writable || inside || !options.canHide || shown.length === 0) {
          if (reported.has(key)) continue;
          reported.add(key);
          problems.push(refusal(grant, dir, kind, inside));
          continue;
        }
        for (const alias of shown) hide.add(alias);
      }
    } finally {
      closeFd(fd);
    }
  }
  if (problems.length > 0) throw new PolicyError(problems);
  // A tmpfs over a directory hides what is beneath it already; one beneath it could not even be mounted
  // (its mount point would have to be made in the read-only tmpfs above it).
  const outermost = [...hide].filter((path) =>
    ![...hide].some((other) => other !== path && isWithin(path, other))
  );
  return { hide: outermost.sort() };
}
