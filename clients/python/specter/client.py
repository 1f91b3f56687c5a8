"""The Python client of `specter agent`: JSON-RPC 2.0 over NDJSON on the agent's stdin and stdout.

Standard library only (Python >= 3.10). Lines of any length are read (asyncio's StreamReader.readline
stops at 64 KiB; this client reads chunks and splits them itself, so a 1 MB output line is fine).
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import shlex
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

from ._protocol import SessionListing, ToolResult

#: How much of the agent's stderr is kept for error messages.
STDERR_TAIL = 8192
#: Most notifications kept for subscriptions not registered yet.
EARLY_LIMIT = 10_000
#: Most text `expect` keeps to search (the newest).
EXPECT_WINDOW = 1 << 20


class SpecterError(Exception):
    """A failure with a stable code: Specter's E_... codes from the server, or the client's own.

    The client's own codes: E_AGENT_START (the agent could not be started), E_AGENT_EXITED (it ended while
    a call or a stream was open), E_CLIENT_CLOSED (a call after close()), E_EXPECT_TIMEOUT (expect did not match
    in time), E_SESSION_CLOSED (the stream ended before expect matched), E_RPC (a JSON-RPC error without a
    Specter code).
    """

    def __init__(self, code: str, message: str, *, rpc_code: int | None = None, data: Any = None):
        super().__init__(message)
        self.code = code
        self.rpc_code = rpc_code
        self.data = data

    def __str__(self) -> str:
        return f"{self.code}: {super().__str__()}"


def agent_command(command: str | Sequence[str] | None = None, env: dict[str, str] | None = None) -> list[str]:
    """The argv of the agent: `command` (shell words or an argv), else the shell words in
    $SPECTER_COMMAND (e.g. "deno run -A /opt/specter/main.ts agent --policy basic"), else `specter agent`
    (see `find_specter`)."""
    if command is not None:
        return shlex.split(command) if isinstance(command, str) else list(command)
    base = (os.environ if env is None else env).get("SPECTER_COMMAND", "")
    return shlex.split(base) if base.strip() else [find_specter(env), "agent"]


def find_specter(env: dict[str, str] | None = None) -> str:
    """The `specter` command: the first executable `specter` on PATH, else the one `./scripts/dev install`
    puts in $SPECTER_BIN_DIR, $XDG_BIN_HOME or ~/.local/bin (often not on PATH yet), else plain "specter"
    (starting it then fails with E_AGENT_START, which says how to install it)."""
    environ = os.environ if env is None else env
    home = environ.get("HOME") or os.path.expanduser("~")
    dirs = [d for d in environ.get("PATH", "").split(os.pathsep) if d]
    dirs += [d for d in (environ.get("SPECTER_BIN_DIR"), environ.get("XDG_BIN_HOME"), os.path.join(home, ".local", "bin")) if d]
    for directory in dirs:
        path = os.path.join(directory, "specter")
        if os.path.isfile(path) and os.access(path, os.X_OK):
            return path
    return "specter"


def frame_text(frame: dict[str, Any]) -> str:
    """The text a frame adds to what the program showed ("" for frames that are not output)."""
    kind = frame.get("type")
    if kind == "stdout":
        data = frame.get("data", "")
        if frame.get("binary"):
            import base64

            return base64.b64decode(data).decode("utf-8", "replace")
        return data
    if kind in ("text", "line_update"):
        return frame.get("data", "")
    if kind == "screen":
        return "\n".join(frame.get("rows", [])) + "\n"
    if kind == "rows":
        return "\n".join(row.get("text", "") for row in frame.get("rows", [])) + "\n"
    return ""


class Subscription:
    """One session's frames (session.subscribe): `async for frame in subscription`, or `expect`."""

    def __init__(self, client: Client, subscription_id: str):
        self.id = subscription_id
        self._client = client
        self._queue: asyncio.Queue[dict[str, Any] | None] = asyncio.Queue()
        self._ended = False
        self._error: SpecterError | None = None
        self._text = ""

    def _push(self, frame: dict[str, Any]) -> None:
        self._queue.put_nowait(frame)

    def _end(self, error: SpecterError | None = None) -> None:
        if self._ended:
            return
        self._ended = True
        self._error = error
        self._queue.put_nowait(None)

    async def next(self, timeout: float | None = None) -> dict[str, Any] | None:
        """The next frame; None once the stream is over. Raises the agent's failure, or TimeoutError."""
        if self._ended and self._queue.empty():
            if self._error is not None:
                raise self._error
            return None
        frame = await asyncio.wait_for(self._queue.get(), timeout)
        if frame is None:
            self._queue.put_nowait(None)  # Every later call sees the end too.
            if self._error is not None:
                raise self._error
        return frame

    def __aiter__(self) -> AsyncIterator[dict[str, Any]]:
        return self._frames()

    async def _frames(self) -> AsyncIterator[dict[str, Any]]:
        while (frame := await self.next()) is not None:
            yield frame

    async def expect(self, pattern: str | re.Pattern[str], timeout: float = 10.0) -> re.Match[str]:
        """Waits until the output since the last match matches `pattern` (a str is a regular expression).

        Raises SpecterError E_EXPECT_TIMEOUT after `timeout` seconds, E_SESSION_CLOSED when the session ends first.
        The frames it reads are consumed; a timeout loses none.
        """
        regex = re.compile(pattern) if isinstance(pattern, str) else pattern
        deadline = time.monotonic() + timeout
        while True:
            # Text already received first: one frame may hold what two calls wait for.
            match = regex.search(self._text)
            if match is not None:
                self._text = self._text[match.end():]
                return match
            left = deadline - time.monotonic()
            if left <= 0:
                raise SpecterError("E_EXPECT_TIMEOUT", f"No match for {regex.pattern!r} within {timeout} s")
            try:
                frame = await self.next(timeout=left)
            except (asyncio.TimeoutError, TimeoutError):
                raise SpecterError("E_EXPECT_TIMEOUT", f"No match for {regex.pattern!r} within {timeout} s") from None
            if frame is None:
                raise SpecterError("E_SESSION_CLOSED", f"The stream ended before {regex.pattern!r} matched")
            text = frame_text(frame)
            if text:
                self._text = (self._text + text)[-EXPECT_WINDOW:]

    async def close(self) -> None:
        """Stops the stream (session.unsubscribe); frames already queued can still be read."""
        if self._ended:
            return
        self._end()
        self._client._streams.pop(self.id, None)
        self._client._gone.add(self.id)
        try:
            await self._client._request("session.unsubscribe", {"subscription": self.id})
        except SpecterError:
            pass  # The agent is gone or the stream already ended: nothing left to stop.


class Session:
    """A session started by `Client.spawn`: send input, read its frames, wait for text."""

    def __init__(self, client: Client, session_id: str):
        self.id = session_id
        self._client = client
        self._frames: Subscription | None = None

    async def frames(self, mode: str = "raw") -> Subscription:
        """The session's frames from the first, as one stream shared by `expect`."""
        if self._frames is None:
            self._frames = await self._client.subscribe(self.id, from_seq=0, token_mode=mode)
        return self._frames

    async def expect(self, pattern: str | re.Pattern[str], timeout: float = 10.0) -> re.Match[str]:
        """Waits for `pattern` in the output (see Subscription.expect)."""
        return await (await self.frames()).expect(pattern, timeout)

    async def send(self, text: str) -> None:
        """Types `text` (the output comes through frames() or expect())."""
        await self._client.write_stdin(self.id, text, yield_time_ms=250)

    async def press(self, *keys: str) -> None:
        """Presses named keys ("enter", "up", "ctrl-c", ...)."""
        await self._client.write_stdin(self.id, keys=list(keys), yield_time_ms=250)

    async def close(self, force: bool = False) -> ToolResult:
        """Ends the session and stops its stream."""
        if self._frames is not None:
            await self._frames.close()
        return await self._client.close_session(self.id, force=force)


class Lease:
    """A pooled persistent shell: `exec` runs a command line and returns when the shell marks it done."""

    def __init__(self, client: Client, session: Session):
        self._client = client
        self.session = session
        #: Back at the shell's prompt: the last command finished (its mark) or a prompt shows.
        self.at_prompt = True

    async def exec(self, command: str, **opts: Any) -> ToolResult:
        """Runs `command` in the shell; returns when it finishes (result.command.exit_code) or at the yield."""
        result = await self._client.write_stdin(self.session.id, command + "\r", **{"yield_time_ms": 30000, **opts})
        self.at_prompt = result.returned_on in ("command", "prompt")
        return result


class Client:
    """A `specter agent` process and its tools. `async with Client() as c: ...`"""

    def __init__(
        self,
        command: str | Sequence[str] | None = None,
        *,
        env: dict[str, str] | None = None,
        cwd: str | None = None,
    ):
        self._argv = agent_command(command, env)
        self._env = env
        self._cwd = cwd
        self._process: asyncio.subprocess.Process | None = None
        self._pending: dict[int, asyncio.Future[Any]] = {}
        self._streams: dict[str, Subscription] = {}
        self._next = 1
        self._stderr = ""
        self._failure: SpecterError | None = None
        self._closing = False
        self._early: dict[str, list[dict[str, Any]]] = {}
        self._early_count = 0
        self._gone: set[str] = set()
        self._tasks: list[asyncio.Task[None]] = []
        self._idle: list[Lease] = []

    async def __aenter__(self) -> Client:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    @property
    def pid(self) -> int | None:
        """The agent's process id (once started)."""
        return None if self._process is None else self._process.pid

    async def start(self) -> None:
        """Starts the agent (done by `async with`)."""
        if self._process is not None:
            return
        try:
            self._process = await asyncio.create_subprocess_exec(
                *self._argv,
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
                env=self._env,
                cwd=self._cwd,
            )
        except OSError as error:
            hint = (
                ". Put specter on PATH (./scripts/dev install in a Specter checkout) or set SPECTER_COMMAND"
                if isinstance(error, FileNotFoundError)
                else ""
            )
            raise SpecterError("E_AGENT_START", f"Could not start {' '.join(self._argv)!r}: {error}{hint}") from error
        self._tasks = [
            asyncio.create_task(self._read_stdout()),
            asyncio.create_task(self._read_stderr()),
        ]

    async def _read_stdout(self) -> None:
        assert self._process is not None and self._process.stdout is not None
        pieces: list[bytes] = []
        failure: BaseException | None = None
        try:
            while True:
                chunk = await self._process.stdout.read(1 << 16)
                if not chunk:
                    break
                start = 0
                while (nl := chunk.find(b"\n", start)) >= 0:
                    pieces.append(chunk[start:nl])
                    line = b"".join(pieces)
                    pieces = []
                    start = nl + 1
                    if line.strip():
                        self._line(line)
                if start < len(chunk):
                    pieces.append(chunk[start:])
        except BaseException as error:  # noqa: BLE001 -- every call and stream must learn the reader died
            failure = error
            raise
        finally:
            if failure is not None:
                self._fail(SpecterError("E_AGENT_EXITED", f"The client stopped reading the agent: {failure!r}"))
        code = await self._process.wait()
        said = self._stderr.strip()[-2000:]
        how = f"exit code {code}" if code >= 0 else f"signal {-code}"
        self._fail(
            SpecterError(
                "E_CLIENT_CLOSED" if self._closing else "E_AGENT_EXITED",
                f"The agent ended ({how})" + (f"; it said: {said}" if said else ""),
                data={"exit_code": code},
            )
        )

    async def _read_stderr(self) -> None:
        assert self._process is not None and self._process.stderr is not None
        while chunk := await self._process.stderr.read(4096):
            self._stderr = (self._stderr + chunk.decode("utf-8", "replace"))[-STDERR_TAIL:]

    def _line(self, line: bytes) -> None:
        try:
            message = json.loads(line)
        except ValueError:
            return  # Not a protocol line (the agent writes only JSON to stdout).
        if not isinstance(message, dict):
            return  # Not a JSON-RPC message: nothing to answer or deliver.
        if "method" in message:
            params = message.get("params") or {}
            subscription = params.get("subscription", "")
            stream = self._streams.get(subscription)
            if stream is None:
                # Frames that came in the same read as the answer to session.subscribe arrive before the
                # caller has its stream: kept (bounded) until it registers; a closed stream's are dropped.
                if subscription not in self._gone:
                    self._early.setdefault(subscription, []).append(message)
                    self._early_count += 1
                    if self._early_count > EARLY_LIMIT:
                        oldest = next(iter(self._early))
                        self._early_count -= len(self._early.pop(oldest))
                return
            self._deliver(stream, message)
            return
        future = self._pending.pop(message.get("id"), None)
        if future is None or future.done():
            return
        error = message.get("error")
        if error is not None:
            data = error.get("data")
            code = data.get("code") if isinstance(data, dict) and isinstance(data.get("code"), str) else "E_RPC"
            future.set_exception(
                SpecterError(code, error.get("message", "The agent refused the call"), rpc_code=error.get("code"), data=data)
            )
        else:
            future.set_result(message.get("result"))

    def _deliver(self, stream: Subscription, message: dict[str, Any]) -> None:
        params = message.get("params") or {}
        method = message["method"]
        if method == "session.frame":
            stream._push(params.get("frame", {}))
        elif method == "session.end":
            stream._end()
            self._streams.pop(stream.id, None)
        elif method == "session.error":
            error = params.get("error") or {}
            code = (error.get("data") or {}).get("code", "E_RPC")
            stream._end(SpecterError(code, error.get("message", "The stream broke")))
            self._streams.pop(stream.id, None)

    def _fail(self, error: SpecterError) -> None:
        if self._failure is not None:
            return
        self._failure = error
        for future in self._pending.values():
            if not future.done():
                future.set_exception(error)
        self._pending.clear()
        for stream in self._streams.values():
            stream._end(error)
        self._streams.clear()

    async def _request(self, method: str, params: dict[str, Any]) -> Any:
        if self._failure is not None:
            raise self._failure
        if self._process is None:
            await self.start()
        assert self._process is not None and self._process.stdin is not None
        request_id = self._next
        self._next += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        line = json.dumps({"jsonrpc": "2.0", "id": request_id, "method": method, "params": params}) + "\n"
        try:
            self._process.stdin.write(line.encode())
            await self._process.stdin.drain()
        except (ConnectionError, RuntimeError):
            pass  # The agent ended: the reader fails the call with how it ended.
        return await future

    async def exec_command(self, cmd: str | Sequence[str], **opts: Any) -> ToolResult:
        """exec_command: runs `cmd` (a shell line or an argv); returns at exit, a prompt or the yield."""
        params = {"cmd": cmd if isinstance(cmd, str) else list(cmd), **opts}
        return ToolResult.from_json(await self._request("exec_command", params))

    async def write_stdin(self, session_id: str, chars: str = "", **opts: Any) -> ToolResult:
        """write_stdin: types `chars` (and `keys=[...]`); with neither, waits for something to happen."""
        return ToolResult.from_json(await self._request("write_stdin", {"session_id": session_id, "chars": chars, **opts}))

    async def read_output(self, session_id: str, from_seq: int = 0, **opts: Any) -> ToolResult:
        """read_output: any range of a session's output, in any view."""
        params = {"session_id": session_id, "from_seq": from_seq, **opts}
        return ToolResult.from_json(await self._request("read_output", params))

    async def close_session(self, session_id: str, **opts: Any) -> ToolResult:
        """close_session: ends a session (SIGTERM, a grace, SIGKILL)."""
        return ToolResult.from_json(await self._request("close_session", {"session_id": session_id, **opts}))

    async def list_sessions(self) -> list[SessionListing]:
        """list_sessions: the sessions the agent holds."""
        result = await self._request("list_sessions", {})
        return [SessionListing.from_json(entry) for entry in result["sessions"]]

    async def subscribe(self, session_id: str, from_seq: int = 0, token_mode: str = "raw") -> Subscription:
        """Streams a session's frames from `from_seq` in a view (raw, compact or parsed)."""
        params = {"session_id": session_id, "from_seq": from_seq, "token_mode": token_mode}
        result = await self._request("session.subscribe", params)
        stream = Subscription(self, result["subscription"])
        self._streams[stream.id] = stream
        early = self._early.pop(stream.id, [])
        self._early_count -= len(early)
        for message in early:
            self._deliver(stream, message)
        return stream

    async def spawn(self, cmd: str | Sequence[str], **opts: Any) -> Session:
        """Starts `cmd` and returns its Session at once (session.start)."""
        params = {"cmd": cmd if isinstance(cmd, str) else list(cmd), **opts}
        result = await self._request("session.start", params)
        return Session(self, result["session_id"])

    async def run(self, cmd: str | Sequence[str], mode: str = "raw", **opts: Any) -> AsyncIterator[dict[str, Any]]:
        """Runs `cmd` and yields its frames until it ends (the adapter contract's `run`)."""
        session = await self.spawn(cmd, **opts)
        frames = await session.frames(mode)
        try:
            async for frame in frames:
                yield frame
        finally:
            if not frames._ended:  # Left before the end (a break, an exception): the program is ended too.
                try:
                    await self.close_session(session.id)
                except SpecterError:
                    pass  # It ended meanwhile, or the agent is gone.
            await frames.close()

    async def lease(self) -> Lease:
        """A persistent shell from the pool (an idle one when there is one, else a new bash)."""
        while self._idle:
            lease = self._idle.pop()
            if any(s.session_id == lease.session.id and s.running for s in await self.list_sessions()):
                return lease
        shell = await self.exec_command(["bash"], yield_time_ms=10000)
        if shell.session_id is None or not shell.running:
            raise SpecterError("E_SESSION_CLOSED", f"The leased shell ended at once: {shell.output[-500:]}")
        return Lease(self, Session(self, shell.session_id))

    async def release(self, lease: Lease) -> None:
        """Gives a leased shell back to the pool. A shell whose last command has not finished (it returned
        at the yield) is ended instead: the next lease would type into that command."""
        if not lease.at_prompt:
            try:
                await self.close_session(lease.session.id, force=True)
            except SpecterError:
                pass  # It ended already, or the agent is gone: nothing to end.
            return
        if lease not in self._idle:
            self._idle.append(lease)

    async def close(self, grace: float = 10.0) -> int | None:
        """Ends the agent and every session it holds; returns its exit status."""
        process = self._process
        if process is None:
            return None
        self._closing = True
        if process.stdin is not None and not process.stdin.is_closing():
            process.stdin.close()
        try:
            await asyncio.wait_for(process.wait(), grace)
        except (asyncio.TimeoutError, TimeoutError):
            process.kill()
            await process.wait()
        for task in self._tasks:
            await task
        return process.returncode
