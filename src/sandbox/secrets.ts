/**
 * Secrets a sandbox never shows by accident: credentials that a grant would expose only because it contains
 * them (a working directory of `~/.config` shows `~/.config/gcloud`; a grant of `~/.cargo` shows
 * `~/.cargo/credentials.toml`). Every launch under bubblewrap covers each one present inside a grant: a
 * directory with an empty read-only tmpfs, a file with `/dev/null` (a `nodev` bind: opening it fails with
 * `EACCES`); under Seatbelt the profile denies reading and writing them after every grant. A grant that names a secret itself, or a path inside it, is explicit and is honoured: the user
 * asked for it.
 *
 * Paths starting with `~/` are taken in every home: the caller's `HOME`, `/root` and each directory in
 * `/home`. Besides the table, any name containing "credential" (any case) directly in a home or in its
 * `.config` is covered too. Only paths that exist are covered (nothing can be mounted on a missing one);
 * a symlink is followed once and its target covered where a grant shows it.
 *
 * @module
 */
import { SandboxError } from "../errors.ts";
import { isWithin } from "../fsafe/mod.ts";
import type { Policy } from "../policy/mod.ts";

/** One secret: where it is and what it would give away. */
export interface SecretPath {
  /** Absolute, or `~/…` for the same path in every home. */
  readonly path: string;
  /** What it holds. */
  readonly why: string;
}

/** Every secret path (see the module doc); `tests/sandbox/secrets_test.ts` reads each one in a sandbox. */
export const SECRET_PATHS = [
  { path: "~/.ssh", why: "SSH private keys and the hosts they open" },
  { path: "~/.gnupg", why: "GnuPG private keys" },
  { path: "~/.aws", why: "AWS access keys" },
  { path: "~/.config/gcloud", why: "Google Cloud credentials and tokens" },
  { path: "~/.azure", why: "Azure CLI tokens" },
  { path: "~/.kube", why: "Kubernetes cluster credentials" },
  { path: "~/.docker/config.json", why: "Docker registry credentials" },
  { path: "~/.netrc", why: "Passwords for hosts (curl, git, ftp)" },
  { path: "~/.git-credentials", why: "git's stored credentials" },
  { path: "~/.config/git/credentials", why: "git's stored credentials (XDG location)" },
  { path: "~/.config/gh", why: "GitHub CLI tokens" },
  { path: "~/.config/hub", why: "hub's GitHub token" },
  { path: "~/.npmrc", why: "npm registry tokens" },
  { path: "~/.pypirc", why: "PyPI upload tokens" },
  { path: "~/.cargo/credentials", why: "crates.io token" },
  { path: "~/.cargo/credentials.toml", why: "crates.io token" },
  { path: "~/.gem/credentials", why: "RubyGems API key" },
  { path: "~/.vault-token", why: "HashiCorp Vault token" },
  { path: "~/.terraform.d/credentials.tfrc.json", why: "Terraform Cloud tokens" },
  { path: "~/.password-store", why: "pass's password store" },
  { path: "~/.local/share/keyrings", why: "GNOME keyrings" },
  { path: "~/.pgpass", why: "PostgreSQL passwords" },
  { path: "~/.my.cnf", why: "MySQL passwords" },
  { path: "/etc/shadow", why: "Password hashes" },
  { path: "/etc/shadow-", why: "Password hashes (backup)" },
  { path: "/etc/gshadow", why: "Group password hashes" },
  { path: "/etc/gshadow-", why: "Group password hashes (backup)" },
  { path: "/etc/sudoers", why: "Who may become root, and how" },
  { path: "/etc/sudoers.d", why: "Who may become root, and how" },
  { path: "/etc/ssl/private", why: "The host's TLS private keys" },
  { path: "/etc/ssh/ssh_host_rsa_key", why: "The host's SSH key" },
  { path: "/etc/ssh/ssh_host_ecdsa_key", why: "The host's SSH key" },
  { path: "/etc/ssh/ssh_host_ed25519_key", why: "The host's SSH key" },
  { path: "/etc/security/opasswd", why: "Old password hashes" },
  { path: "/etc/krb5.keytab", why: "Kerberos service keys" },
  { path: "/etc/wireguard", why: "WireGuard private keys" },
  { path: "/etc/NetworkManager/system-connections", why: "Wi-Fi and VPN passwords" },
  { path: "/root", why: "root's home: shown only when it holds the working directory" },
  { path: "/home", why: "Every user's home: only the working directory's part is shown" },
] as const satisfies readonly SecretPath[];

/** Names covered in a home and its `.config` besides the table. */
export const CREDENTIAL_NAME: RegExp = /credential/i;

/** What a launch covers: directories (an empty read-only tmpfs) and files (`/dev/null`), host paths. */
export interface SecretMasks {
  readonly dirs: readonly string[];
  readonly files: readonly string[];
}

/** The file system as the masks see it (injectable for tests). */
export interface SecretFs {
  /** `"dir"`, `"file"`, `"symlink"`, `"other"` or `null` when absent; never follows a link. */
  kind(path: string): "dir" | "file" | "symlink" | "other" | null;
  /** The resolved target of a link, or `null`. */
  realPath(path: string): string | null;
  /** Names in a directory (capped), or `[]`. */
  names(path: string): string[];
}

/** Most names read from one directory (a home, its `.config`, `/home`). */
const MAX_NAMES = 4096;

const HOST_FS: SecretFs = {
  kind(path) {
    try {
      const info = Deno.lstatSync(path);
      return info.isSymlink ? "symlink" : info.isDirectory ? "dir" : info.isFile ? "file" : "other";
    } catch {
      return null; // Absent or unreachable: nothing there to cover.
    }
  },
  realPath(path) {
    try {
      return Deno.realPathSync(path);
    } catch {
      return null; // A dangling link shows nothing.
    }
  },
  names(path) {
    const names: string[] = [];
    try {
      for (const entry of Deno.readDirSync(path)) {
        names.push(entry.name);
        if (names.length >= MAX_NAMES) break;
      }
    } catch {
      // Absent or unreadable: no names to cover there.
    }
    return names;
  },
};

/** The homes `~/` stands for: `home` (the caller's), `/root` and each directory in `/home`, resolved. */
export function secretHomes(home: string, fs: SecretFs = HOST_FS): string[] {
  const homes = [home, "/root", ...fs.names("/home").map((name) => `/home/${name}`)].filter((h) =>
    h.startsWith("/")
  );
  const resolved = homes.map((h) => fs.realPath(h) ?? h);
  return [...new Set([...homes, ...resolved])];
}

/**
 * What a launch must cover so that `roots` (the policy's resolved exec, read, write and socket paths)
 * show no secret they merely contain. `homes` from {@link secretHomes}.
 */
export function secretMasks(
  roots: readonly string[],
  homes: readonly string[],
  fs: SecretFs = HOST_FS,
): SecretMasks {
  const shows = (path: string) => roots.some((root) => root !== path && isWithin(path, root));
  // A grant of the secret itself, or of something inside it, is explicit.
  const named = (path: string) => roots.some((root) => isWithin(root, path));
  const candidates = new Set<string>();
  for (const { path } of SECRET_PATHS) {
    if (path.startsWith("~/")) { for (const home of homes) candidates.add(`${home}${path.slice(1)}`); }
    else candidates.add(path);
  }
  for (const home of homes) {
    if (!shows(home) && !named(home)) continue; // Nothing in it is visible: no need to list it.
    for (const dir of [home, `${home}/.config`]) {
      for (const name of fs.names(dir)) if (CREDENTIAL_NAME.test(name)) candidates.add(`${dir}/${name}`);
    }
  }
  const dirs = new Set<string>();
  const files = new Set<string>();
  for (const candidate of candidates) {
    // Lexical first: most candidates lie in no grant, and need no system call.
    if (!shows(candidate) || named(candidate)) continue;
    let path = candidate;
    let kind = fs.kind(path);
    if (kind === "symlink") {
      const target = fs.realPath(path);
      if (target === null) continue;
      path = target;
      kind = fs.kind(path);
    }
    if (kind === null || kind === "symlink" || !shows(path) || named(path)) continue;
    (kind === "dir" ? dirs : files).add(path);
  }
  return { dirs: [...dirs].sort(), files: [...files].sort() };
}

/**
 * The covers of a launch: the artifact guard's `hide` (directories) merged with the secrets `policy` (resolved)
 * shows, outermost only (nothing can be mounted inside a directory already covered). bubblewrap mounts over
 * them, Seatbelt denies them after every grant; a backend that can do neither (`canHide` false) refuses a
 * launch that would show a secret (`E_SANDBOX_UNAVAILABLE`).
 */
export function coverSecrets(
  policy: Policy,
  hide: readonly string[],
  home: string,
  canHide: boolean,
  fs: SecretFs = HOST_FS,
): { hide: string[]; hideFiles: string[] } {
  const roots = [...policy.exec, ...policy.fs.read, ...policy.fs.write, ...(policy.fs.sockets ?? [])];
  const masks = secretMasks(roots, secretHomes(home, fs), fs);
  if (!canHide && masks.dirs.length + masks.files.length > 0) {
    const first = masks.dirs[0] ?? masks.files[0]!;
    throw new SandboxError(
      "E_SANDBOX_UNAVAILABLE",
      `A grant shows the secret "${first}", which this backend cannot hide`,
      {
        details: {
          path: first,
          fix: "Grant a narrower path, or name the secret itself to show it on purpose",
        },
      },
    );
  }
  const all = [...new Set([...hide, ...masks.dirs])];
  const dirs = all.filter((path) => !all.some((other) => other !== path && isWithin(path, other))).sort();
  const files = masks.files.filter((path) => !dirs.some((dir) => isWithin(path, dir)));
  return { hide: dirs, hideFiles: files };
}
