/**
 * Flag tables: each command's flags with what `parseArgs` needs (`type`, `short`, `multiple`) and their
 * documentation (value placeholder, description), grouped as its help shows them. A command parses with
 * the options {@link commandOptions} derives from its {@link CommandDoc}, and `specter help` and
 * `docs/cli.md` are rendered from the same doc, so a flag cannot be accepted without being documented.
 *
 * @module
 */
import type { ParseArgsOptionsConfig } from "node:util";

/** A flag that takes a value (`--timeout 5s`). */
export interface ValueFlag {
  /** `parseArgs` type. */
  readonly type: "string";
  /** The value's placeholder in help, e.g. `DUR`, `SIZE`, `FILE`. */
  readonly value: string;
  /** True when the flag may be given several times (its values are collected in a list). */
  readonly multiple?: boolean;
  /** One-letter alias, without the dash. */
  readonly short?: string;
  /** What the flag does, one unwrapped sentence or more. */
  readonly description: string;
}

/** A flag that takes no value (`--json`). */
export interface SwitchFlag {
  /** `parseArgs` type. */
  readonly type: "boolean";
  /** One-letter alias, without the dash. */
  readonly short?: string;
  /** What the flag does, one unwrapped sentence or more. */
  readonly description: string;
}

/** One flag. */
export type FlagSpec = ValueFlag | SwitchFlag;

/** Flags by long name (without the dashes). */
export type FlagTable = Readonly<Record<string, FlagSpec>>;

/** Flags shown together under one title. */
export interface FlagGroup {
  /** The group's title, e.g. `Session flags` (help prints it with a colon). */
  readonly title: string;
  /** The flags, in the order help lists them. */
  readonly flags: FlagTable;
  /** Printed after the flags (units, caveats that concern several of them). */
  readonly note?: string;
}

/** Everything `specter help CMD` and `docs/cli.md` say about a command. */
export interface CommandDoc {
  /** The command's name (`run`), as `specter help` takes it. */
  readonly name: string;
  /** Usage lines, without the `Usage:` prefix. */
  readonly usage: readonly string[];
  /**
   * What the command does, its output and exit codes: prose wrapped by hand (help prints it as written);
   * lines indented by two spaces are examples.
   */
  readonly about: string;
  /** The flag groups; together they are every flag the command accepts. */
  readonly groups: readonly FlagGroup[];
}

/** `-h`/`--help`, which every command accepts (the dispatcher answers it before the command runs). */
export const HELP_FLAG = {
  help: { type: "boolean", short: "h", description: "Show this help" },
} as const satisfies FlagTable;

/** The `parseArgs` part of one flag (its documentation stripped). */
export type ParseOptionOf<F extends FlagSpec> = Pick<F, Extract<keyof F, "type" | "short" | "multiple">>;

/** The `parseArgs` options of a table, keeping each flag's literal types (so parsed values stay typed). */
export type ParseOptionsOf<T extends FlagTable> = { -readonly [K in keyof T]: ParseOptionOf<T[K]> };

/** Strips the documentation from `table`: the options `parseArgs` takes. */
export function parseOptions<const T extends FlagTable>(table: T): ParseOptionsOf<T> {
  const options: ParseArgsOptionsConfig = {};
  for (const [name, flag] of Object.entries(table)) {
    options[name] = {
      type: flag.type,
      ...(flag.short === undefined ? {} : { short: flag.short }),
      ...(flag.type === "string" && flag.multiple === true ? { multiple: true } : {}),
    };
  }
  return options as ParseOptionsOf<T>;
}

/** Every flag of a command, its groups merged (a name in two groups is a mistake in the table). */
export function commandFlags(doc: CommandDoc): FlagTable {
  const all: Record<string, FlagSpec> = {};
  for (const group of doc.groups) {
    for (const [name, flag] of Object.entries(group.flags)) {
      if (name in all) throw new Error(`specter ${doc.name}: flag "--${name}" is in two groups`);
      all[name] = flag;
    }
  }
  return all;
}

/** The `parseArgs` options a command parses with: every flag of every group of its doc. */
export function commandOptions(doc: CommandDoc): ParseArgsOptionsConfig {
  return parseOptions(commandFlags(doc));
}

/** How a flag is written in help: `-h, --help`, `--timeout DUR`. */
export function flagLabel(name: string, flag: FlagSpec): string {
  const short = flag.short === undefined ? "" : `-${flag.short}, `;
  return `${short}--${name}${flag.type === "string" ? ` ${flag.value}` : ""}`;
}
