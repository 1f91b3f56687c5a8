"""Drive terminal programs in Specter's sandbox from Python, through a `specter agent` process.

    import asyncio
    from specter import Client

    async def main():
        async with Client() as c:  # the command in $SPECTER_COMMAND, else `specter agent`
            repl = await c.exec_command(["python3", "-q"])
            answer = await c.write_stdin(repl.session_id, "6 * 7\\r")
            print(answer.output)  # 42

    asyncio.run(main())

Standard library only, Python >= 3.10. Results are dataclasses whose attributes are the JSON field names
(exit_code, session_id, returned_on, ...); see spec/agent.md.
"""

from ._protocol import CommandInfo, SessionListing, ToolResult
from .client import (
    Client,
    Lease,
    Session,
    SpecterError,
    Subscription,
    agent_command,
    find_specter,
    frame_text,
)

__all__ = [
    "Client",
    "CommandInfo",
    "Lease",
    "Session",
    "SessionListing",
    "SpecterError",
    "Subscription",
    "ToolResult",
    "agent_command",
    "find_specter",
    "frame_text",
]
