import assert from "node:assert/strict";
import config from "../deno.json" with { type: "json" };
import { VERSION } from "./version.ts";

Deno.test("VERSION equals deno.json's version", () => {
  assert.equal(VERSION, config.version);
});
