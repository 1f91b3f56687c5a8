/**
 * Tool results of agent sessions: what a call took (`exec_command`, `write_stdin`, `close_session`), cut
 * to `max_output_tokens` with a marker that names only what can still be read, and a `read_output` page:
 * its text and seq range, where the next page starts (`next_from_seq`, `next_from_offset`), whether
 * `more` remains, and what no log holds any more (`dropped`). Both share one shape ({@link sessionResult}).
 *
 * @module
 */
import type { TokenMode, ToolResult } from "../protocol/mod.ts";
import type { AgentSession, ReturnedOn, Taken } from "./agent_session.ts";
import type { Page } from "./paging.ts";
import { tokenCount, type Truncated } from "./truncate.ts";

/** What one result says of its output. */
interface OutputFields {
  readonly output: string;
  readonly truncated: boolean;
  readonly originalTokens: number;
  readonly mode: TokenMode;
  readonly returnedOn: ReturnedOn;
  readonly wallMs: number;
  readonly fromSeq: number;
  readonly toSeq: number;
}

/** The fields every tool result of `agent` has (the session's state, then `fields`), plus `rest`. */
function sessionResult(agent: AgentSession, fields: OutputFields, rest: Partial<ToolResult>): ToolResult {
  const exit = agent.exit;
  return {
    session_id: agent.id,
    output: fields.output,
    running: exit === null,
    ...(exit?.code === null || exit === null ? {} : { exit_code: exit.code }),
    ...(exit?.signal ? { signal: exit.signal } : {}),
    timed_out: agent.timedOut || exit?.timed_out === true,
    wall_time_ms: fields.wallMs,
    truncated: fields.truncated,
    original_token_count: fields.originalTokens,
    token_mode: fields.mode,
    returned_on: fields.returnedOn,
    screen: agent.alternate ? "alternate" : "normal",
    from_seq: fields.fromSeq,
    to_seq: fields.toSeq,
    ...rest,
    ...(exit === null ? {} : { last_lines: exit.last_lines }),
  };
}

/**
 * The result of output a call took (`started`: the call's `performance.now()`, 0 for none): `cut` is its
 * text cut to the call's `max_output_tokens` (its tokens are counted as returned to the agent).
 */
export function takenResult(
  agent: AgentSession,
  taken: Taken,
  cut: Truncated,
  mode: TokenMode,
  returnedOn: ReturnedOn,
  started: number,
): ToolResult {
  agent.outputTokens += cut.truncated ? tokenCount(cut.output) : cut.originalTokens;
  return sessionResult(agent, {
    output: cut.output,
    truncated: cut.truncated || taken.missed !== undefined,
    originalTokens: cut.originalTokens,
    mode,
    returnedOn,
    wallMs: started === 0 ? 0 : Math.round(performance.now() - started),
    fromSeq: taken.fromSeq,
    toSeq: taken.toSeq,
  }, taken.dropped === undefined ? {} : { dropped: taken.dropped });
}

/** The tool result of `page` of `agent`'s output (its tokens are counted as returned to the agent). */
export function pageResult(
  agent: AgentSession,
  page: Page,
  mode: TokenMode,
  returnedOn: ReturnedOn,
): ToolResult {
  agent.outputTokens += tokenCount(page.text);
  return sessionResult(agent, {
    output: page.text,
    truncated: page.truncated,
    originalTokens: page.originalTokens,
    mode,
    returnedOn,
    wallMs: 0,
    fromSeq: page.fromSeq,
    toSeq: page.toSeq,
  }, {
    next_from_seq: page.nextFromSeq,
    next_from_offset: page.nextFromOffset,
    more: page.more,
    ...(page.dropped === null ? {} : { dropped: page.dropped }),
  });
}
