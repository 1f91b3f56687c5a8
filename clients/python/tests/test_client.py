"""The Python client against a real `specter agent` (sandboxed programs, the default policy), under the
system Python: `PYTHONPATH=clients/python python3 -m unittest discover -s clients/python/tests`. The agent
comes from $SPECTER_COMMAND (the repository's tests set it to `deno run -A main.ts agent`)."""

from __future__ import annotations

import asyncio
import os
import signal
import time
import unittest

from specter import Client, SpecterError, ToolResult, agent_command, find_specter

SLEEP = ["python3", "-c", "import time; time.sleep(60)"]


def descendants(pid: int) -> list[int]:
    """Pids of every process below `pid` (from /proc)."""
    children: dict[int, list[int]] = {}
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                stat = f.read()
        except OSError:
            continue  # It ended while we looked.
        ppid = int(stat[stat.rindex(")") + 2:].split()[1])
        children.setdefault(ppid, []).append(int(name))
    found, queue = [], [pid]
    while queue:
        for child in children.get(queue.pop(), []):
            found.append(child)
            queue.append(child)
    return found


def alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return ") Z " not in f.read()
    except OSError:
        return False


class CommandTest(unittest.TestCase):
    def test_agent_command(self) -> None:
        self.assertEqual(agent_command(["x", "agent"], {}), ["x", "agent"])
        self.assertEqual(agent_command("deno run -A 'my dir/main.ts' agent", {}), ["deno", "run", "-A", "my dir/main.ts", "agent"])
        self.assertEqual(agent_command(None, {"SPECTER_COMMAND": "deno run -A main.ts agent"}), ["deno", "run", "-A", "main.ts", "agent"])
        self.assertEqual(agent_command(None, {"HOME": "/nonexistent"}), ["specter", "agent"])

    def test_find_specter(self) -> None:
        import stat
        import tempfile

        with tempfile.TemporaryDirectory() as home:
            bin_dir = os.path.join(home, ".local", "bin")
            os.makedirs(bin_dir)
            launcher = os.path.join(bin_dir, "specter")
            with open(launcher, "w") as f:
                f.write("#!/bin/sh\n")
            os.chmod(launcher, stat.S_IRWXU)
            other = os.path.join(home, "other")
            os.makedirs(other)
            with open(os.path.join(other, "specter"), "w") as f:
                f.write("not executable")
            # Not on PATH (and the one on PATH is not executable): the installed launcher.
            self.assertEqual(agent_command(None, {"HOME": home, "PATH": other}), [launcher, "agent"])
            self.assertEqual(find_specter({"HOME": "/nonexistent", "XDG_BIN_HOME": bin_dir}), launcher)
            self.assertEqual(find_specter({"HOME": "/nonexistent", "PATH": other}), "specter")


class ClientTest(unittest.IsolatedAsyncioTestCase):
    async def test_an_agent_that_cannot_start(self) -> None:
        with self.assertRaises(SpecterError) as caught:
            async with Client(["/nonexistent/specter", "agent"]):
                pass
        self.assertEqual(caught.exception.code, "E_AGENT_START")

    async def test_python_repl_through_write_stdin(self) -> None:
        async with Client() as c:
            repl = await c.exec_command(["python3", "-q"])
            self.assertIsInstance(repl, ToolResult)
            self.assertEqual(repl.returned_on, "prompt")
            self.assertTrue(repl.running)
            answer = await c.write_stdin(repl.session_id, "6 * 7\r")
            self.assertEqual(answer.returned_on, "prompt")
            self.assertRegex(answer.output, r"(?m)^42$")

    async def test_exit_code_and_typed_errors(self) -> None:
        async with Client() as c:
            failed = await c.exec_command("echo out; exit 3")
            self.assertEqual(failed.exit_code, 3)
            self.assertFalse(failed.running)
            with self.assertRaises(SpecterError) as caught:
                await c.write_stdin("nope", "x")
            self.assertEqual(caught.exception.code, "E_SESSION_UNKNOWN")
            self.assertEqual(caught.exception.rpc_code, -32000)

    async def test_empty_poll_waits(self) -> None:
        async with Client() as c:
            build = await c.exec_command(["python3", "-c", "import time; time.sleep(2); print('built')"], yield_time_ms=250)
            self.assertTrue(build.running)
            started = time.monotonic()
            waited = await c.write_stdin(build.session_id, "")
            self.assertEqual(waited.returned_on, "exit")
            self.assertIn("built", waited.output)
            self.assertGreaterEqual(time.monotonic() - started, 1.0)

    async def test_read_output_of_a_cut_middle(self) -> None:
        async with Client() as c:
            long = await c.exec_command("i=0; while [ $i -lt 3000 ]; do i=$((i+1)); echo line $i; done", max_output_tokens=200)
            self.assertTrue(long.truncated)
            self.assertNotRegex(long.output, r"(?m)^line 1500$")
            listing = await c.list_sessions()
            everything = await c.read_output(listing[0].session_id, long.from_seq, max_output_tokens=100_000)
            self.assertRegex(everything.output, r"(?m)^line 1500$")
            self.assertRegex(everything.output, r"(?m)^line 3000$")

    async def test_one_output_line_of_a_megabyte(self) -> None:
        # asyncio's readline() stops at 64 KiB; the client reads lines of any length.
        async with Client() as c:
            ran = await c.exec_command(["python3", "-c", "print('x' * 1_000_000)"])
            self.assertEqual(ran.exit_code, 0)
            raw = await c.read_output((await c.list_sessions())[0].session_id, 0, token_mode="raw", max_output_tokens=1_000_000)
            self.assertIn("x" * 1_000_000, raw.output)

    async def test_frames_from_a_subscription_and_expect(self) -> None:
        async with Client() as c:
            session = await c.spawn(["python3", "-q"])
            frames = await session.frames("compact")
            await session.send("print('ab' * 3)\r")
            found = await session.expect(r"(?:ab){3}")  # Not the echo of what was typed.
            self.assertEqual(found.group(0), "ababab")
            with self.assertRaises(SpecterError) as caught:
                await session.expect("never printed", timeout=0.3)
            self.assertEqual(caught.exception.code, "E_EXPECT_TIMEOUT")
            await session.send("exit()\r")
            kinds = [frame["type"] async for frame in frames]
            self.assertEqual(kinds[-1], "exit")
            ran = [frame async for frame in c.run(["python3", "-c", "print('from run')"], mode="compact")]
            self.assertEqual(ran[0]["type"], "start")
            self.assertTrue(any("from run" in frame.get("data", "") for frame in ran))
            self.assertEqual(ran[-1]["type"], "exit")

    async def test_lease_and_release(self) -> None:
        async with Client() as c:
            lease = await c.lease()
            result = await lease.exec("(exit 4)")
            self.assertEqual(result.returned_on, "command")
            self.assertEqual(result.command.exit_code, 4)
            await c.release(lease)
            again = await c.lease()
            self.assertEqual(again.session.id, lease.session.id)
            busy = await again.exec("read -t 30", yield_time_ms=500)
            self.assertEqual(busy.returned_on, "yield")
            await c.release(again)  # Still running a command: ended, not pooled.
            other = await c.lease()
            self.assertNotEqual(other.session.id, again.session.id)

    async def test_two_expects_in_one_frame_and_leaving_run_early(self) -> None:
        async with Client() as c:
            session = await c.spawn(["python3", "-q"])
            await session.frames()
            await session.send("print('foo' + chr(10) + 'bar')\r")
            self.assertEqual((await session.expect(r"(?m)^foo\r?$")).group(0).strip(), "foo")
            self.assertEqual((await session.expect(r"(?m)^bar\r?$")).group(0).strip(), "bar")
            ticker = ["python3", "-c", "import time\nwhile True: print('tick', flush=True); time.sleep(0.1)"]
            async for frame in c.run(ticker):
                if frame["type"] == "stdout" and "tick" in frame["data"]:
                    break

            async def running() -> list[str]:
                return [s.session_id for s in await c.list_sessions() if "-c" in s.argv and s.running]

            for _ in range(50):
                if not await running():
                    break
                await asyncio.sleep(0.1)
            self.assertEqual(await running(), [])

    async def test_agent_dying_mid_call_is_a_typed_error(self) -> None:
        c = Client()
        await c.start()
        sleeper = await c.exec_command(SLEEP, yield_time_ms=250)
        frames = await c.subscribe(sleeper.session_id)
        waiting = asyncio.create_task(c.write_stdin(sleeper.session_id, ""))  # Waits up to 30 s.
        await asyncio.sleep(0.2)
        started = time.monotonic()
        os.kill(c.pid, signal.SIGKILL)
        with self.assertRaises(SpecterError) as caught:
            await asyncio.wait_for(waiting, 5)
        self.assertEqual(caught.exception.code, "E_AGENT_EXITED")
        with self.assertRaises(SpecterError):
            async for _ in frames:
                pass
        self.assertLess(time.monotonic() - started, 5)
        with self.assertRaises(SpecterError):
            await c.list_sessions()
        await c.close()

    async def test_close_leaves_no_process_behind(self) -> None:
        c = Client()
        await c.start()
        await c.exec_command(["python3", "-q"])
        await c.exec_command(SLEEP, yield_time_ms=250)
        pid = c.pid
        below = descendants(pid)
        self.assertGreaterEqual(len(below), 2)
        self.assertEqual(await c.close(), 0)
        self.assertFalse(alive(pid))
        for _ in range(50):
            if not any(alive(p) for p in below):
                break
            await asyncio.sleep(0.1)
        self.assertEqual([p for p in below if alive(p)], [])
        with self.assertRaises(SpecterError) as caught:
            await c.list_sessions()
        self.assertEqual(caught.exception.code, "E_CLIENT_CLOSED")


if __name__ == "__main__":
    unittest.main()
