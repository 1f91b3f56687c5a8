/**
 * Preloaded by the test task (`deno test --preload tests/_deadline.ts`): every test gets a deadline.
 *
 * Deno's test runner has no per-test timeout, so one test waiting forever (a program that never ends, a
 * frame that never comes) held the whole suite until CI's own limit ended it, with no failure reported.
 * With this module a test still running after {@link DEADLINE_MS} fails, naming itself, and the suite goes
 * on. The longest test takes under a minute on a loaded CI machine; the deadline is several times that, so
 * it only catches a hang, never a slow test. `SPECTER_TEST_DEADLINE_MS` changes it (its own test uses that).
 *
 * @module
 */
import { raceTimer } from "./_timeout.ts";

/** How long a test may run (ms) before it fails as hung. */
export const DEADLINE_MS: number = Number(Deno.env.get("SPECTER_TEST_DEADLINE_MS") ?? "") || 240_000;

type TestFn = (t: Deno.TestContext) => void | Promise<void>;
type Definition = Deno.TestDefinition;

/** The one definition every overload of `Deno.test` describes (see `Deno.DenoTest`). */
function definition(args: unknown[]): Definition {
  const [first, second, third] = args;
  if (typeof first === "function") return { name: first.name, fn: first as TestFn };
  if (typeof first === "string") {
    return typeof second === "function"
      ? { name: first, fn: second as TestFn }
      : { ...(second as Omit<Definition, "name" | "fn">), name: first, fn: third as TestFn };
  }
  const options = first as Partial<Definition>;
  if (typeof second === "function") {
    return { ...options, name: options.name ?? second.name, fn: second as TestFn };
  }
  return options as Definition;
}

/** `fn` failing with a named error once it has run {@link DEADLINE_MS}. */
function withDeadline(name: string, fn: TestFn): TestFn {
  return async (t) => {
    await raceTimer(
      Promise.resolve(fn(t)),
      DEADLINE_MS,
      () =>
        new Error(
          `Test "${name}" did not end within ${
            DEADLINE_MS / 1000
          } s: it hangs (deadline of tests/_deadline.ts)`,
        ),
    );
  };
}

function wrap(register: (definition: Definition) => void): (...args: unknown[]) => void {
  return (...args) => {
    const test = definition(args);
    register({ ...test, fn: withDeadline(test.name, test.fn) });
  };
}

const original = Deno.test;
const test = Object.assign(wrap((d) => original(d)), original, {
  only: wrap((d) => original.only(d)),
});
Object.defineProperty(Deno, "test", { value: test, writable: true, configurable: true });
