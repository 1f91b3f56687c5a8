/**
 * Specter's wire and file formats as zod schemas: the single source of truth for frames, driver input
 * and screen snapshots (JSON Schemas in `spec/schema/` are generated from here). Imports no Deno or
 * Node API, so that a browser page or an SDK can use it: `import … from "@specter/specter/protocol"`.
 *
 * @example Validate a frame read from `specter run`'s stdout
 * ```ts
 * import { FrameSchema } from "@specter/specter/protocol";
 * const frame = FrameSchema.parse(JSON.parse('{"seq":0,"ts":1,"type":"idle","dur_ms":500}'));
 * ```
 *
 * @module
 */
export * from "./signals.ts";
export * from "./screen.ts";
export * from "./frames.ts";
export * from "./driver.ts";
export * from "./results.ts";
export * from "./audit.ts";
export * from "./net.ts";
export * from "./asciicast.ts";
export * from "./bundle.ts";
export * from "./views.ts";
export * from "./agent.ts";
export * from "./mcp.ts";
export * from "./daemon.ts";
export * from "./remote.ts";
export * from "./durations.ts";
export * from "../suggest.ts";
