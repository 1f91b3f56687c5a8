// tests/serial/ runs after the parallel suite, alone, and never in it. Under Deno 2.9.6 the test task's
// `--ignore=tests/serial` (and `tests/serial/**`, or a single file's path) was not honoured once
// `clients/web/` was among the paths given: every file here also ran in the parallel suite, beside its
// timing tests (the 1 GB frame log test; the ceilings tests, which set `SPECTER_CGROUPS=off` for the whole
// process). `--ignore=**/serial/**` is honoured. The test task marks its parallel run with
// `SPECTER_TEST_SUITE=parallel`; this test fails there, so an ignore that stops working fails the suite
// instead of making it flaky.
import assert from "node:assert/strict";

Deno.test("tests/serial/ is not run by the parallel suite", () => {
  assert.notEqual(
    Deno.env.get("SPECTER_TEST_SUITE"),
    "parallel",
    "tests/serial/ ran in the parallel suite: its --ignore was not honoured (see this file's comment)",
  );
});
