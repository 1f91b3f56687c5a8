/**
 * A `read_output` page as the tool result an agent gets: the page's text and seq range, where the next
 * page starts (`next_from_seq`, `next_from_offset`) and whether `more` remains, and what no log holds any
 * more (`dropped`).
 *
 * @module
 */
import type { TokenMode, ToolResult } from "../protocol/mod.ts";
import type { AgentSession, ReturnedOn } from "./agent_session.ts";
import type { Page } from "./paging.ts";
import { tokenCount } from "./truncate.ts";

/** The tool result of `page` of `agent`'s output (its tokens are counted as returned to the agent). */
export function pageResult(
  agent: AgentSession,
  page: Page,
  mode: TokenMode,
  returnedOn: ReturnedOn,
): ToolResult {
  agent.outputTokens += tokenCount(page.text);
  const exit = agent.exit;
  return {
    session_id: agent.id,
    output: page.text,
    running: exit === null,
    ...(exit?.code === null || exit === null ? {} : { exit_code: exit.code }),
    ...(exit?.signal ? { signal: exit.signal } : {}),
    timed_out: agent.timedOut || exit?.timed_out === true,
    wall_time_ms: 0,
    truncated: page.truncated,
    original_token_count: page.originalTokens,
    token_mode: mode,
    returned_on: returnedOn,
    screen: agent.alternate ? "alternate" : "normal",
    from_seq: page.fromSeq,
    to_seq: page.toSeq,
    next_from_seq: page.nextFromSeq,
    next_from_offset: page.nextFromOffset,
    more: page.more,
    ...(page.dropped === null ? {} : { dropped: page.dropped }),
    ...(exit === null ? {} : { last_lines: exit.last_lines }),
  };
}
