"""Helpers to run the real surfaces: the CLI and the MCP server as subprocesses."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from contextlib import contextmanager, redirect_stderr, redirect_stdout
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, "-m", "memory.cli"]


def env(extra: dict | None = None) -> dict:
    """The test's own environment (conftest points HOME, XDG_DATA_HOME and DATALOG_MEMORY_DB at its
    temporary folders), with this checkout importable."""
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra or {})
    return e


@dataclass
class Ran:
    """What a command line run left: exit status and the two output streams."""

    returncode: int
    stdout: str
    stderr: str


def cli(db: str | None, *args: str, check: bool = False, input: str | None = None,
        extra_env: dict | None = None) -> Ran:
    """The command line run in this process (the same `main` the console script calls, with its own
    standard streams and exit status): what most tests need, without a process start per call."""
    from memory.cli.main import main

    stdout, stderr = io.StringIO(), io.StringIO()
    stdin = io.TextIOWrapper(io.BytesIO((input or "").encode("utf-8")), encoding="utf-8")
    saved = {name: os.environ.get(name) for name in (extra_env or {})}
    os.environ.update(extra_env or {})
    try:
        with redirect_stdout(stdout), redirect_stderr(stderr), _stdin(stdin):
            try:
                main([*(["--db", db] if db else []), *args])
                code = 0
            except SystemExit as exc:
                code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value
    ran = Ran(code, stdout.getvalue(), stderr.getvalue())
    if check and ran.returncode != 0:
        raise AssertionError(f"exit {ran.returncode}: {ran.stdout}\n{ran.stderr}")
    return ran


@contextmanager
def _stdin(stream):
    saved, sys.stdin = sys.stdin, stream
    try:
        yield
    finally:
        sys.stdin = saved


def cli_process(db: str | None, *args: str, check: bool = False, input: str | None = None,
                extra_env: dict | None = None, cwd: str | None = None) -> subprocess.CompletedProcess:
    """The command line as its own process, as a user runs it (a few tests per surface)."""
    proc = subprocess.run([*COMMAND, *(["--db", db] if db else []), *args], capture_output=True, text=True,
                          cwd=cwd or os.getcwd(), env=env(extra_env), input=input, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stdout}\n{proc.stderr}")
    return proc


def cli_on_terminal(db: str, columns: int, *args: str, stderr_too: bool = True) -> tuple[int, str]:
    """The command line on a pseudo-terminal `columns` wide: (exit status, what a person sees, styles aside).
    Standard error shows on the terminal too unless `stderr_too` is false (then it is dropped)."""
    import pty
    import re

    leader, follower = pty.openpty()
    proc = subprocess.Popen([*COMMAND, "--db", db, *args], stdout=follower,
                            stderr=subprocess.STDOUT if stderr_too else subprocess.DEVNULL,
                            env=env({"COLUMNS": str(columns), "NO_COLOR": "1"}))
    os.close(follower)
    shown = b""
    while True:
        try:
            chunk = os.read(leader, 4096)
        except OSError:
            break
        if not chunk:
            break
        shown += chunk
    proc.wait(timeout=60)
    os.close(leader)
    return proc.returncode, re.sub(r"\x1b\[[0-9;]*m", "", shown.decode("utf-8")).replace("\r\n", "\n")


def cli_json(db: str, *args: str, extra_env: dict | None = None) -> dict:
    ran = cli(db, *args, "--json", check=True, extra_env=extra_env)
    return json.loads(ran.stdout)


def server_params(db: str, extra_env: dict | None = None):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], "--db", db, "serve"], env=env(extra_env),
                                 cwd=os.getcwd())


class RawServer:
    """The server over raw newline-delimited JSON-RPC, for the error paths a client library hides."""

    def __init__(self, db: str) -> None:
        self.proc = subprocess.Popen([*COMMAND, "--db", db, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=os.getcwd(), env=env())

    def send(self, message) -> None:
        assert self.proc.stdin
        self.proc.stdin.write((message if isinstance(message, str) else json.dumps(message)) + "\n")
        self.proc.stdin.flush()

    def recv(self) -> dict:
        assert self.proc.stdout
        line = self.proc.stdout.readline()
        assert line, f"server closed stdout; stderr: {self.proc.stderr.read() if self.proc.stderr else ''}"
        return json.loads(line)

    def request(self, message) -> dict:
        self.send(message)
        return self.recv()

    def close(self) -> int:
        assert self.proc.stdin
        self.proc.stdin.close()
        code = self.proc.wait(timeout=20)
        return code


MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
    "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"},
}


ERAS = ["legacy", "2026-07-28"]


def run_client(db: str, era: str, scenario, extra_env: dict | None = None):
    """Start the server, connect the mcp package's client in `era`, and run `scenario(client)`."""
    import anyio
    from mcp import Client

    async def main():
        async with Client(server_params(db, extra_env), mode=era) as client:
            return await scenario(client)
    return anyio.run(main)


async def call_checked(client, name: str, args: dict):
    """A tool call whose successful structured result must match the tool's output schema."""
    import jsonschema

    from memory.tools import REGISTRY

    result = await client.call_tool(name, args)
    if not result.is_error:
        jsonschema.validate(result.structured_content, REGISTRY[name].output_schema)
    return result


def error_of(result) -> dict:
    """The typed error of an isError tool result (under `_meta`; error results carry no structuredContent)."""
    assert result.is_error, result
    assert result.structured_content is None, result
    return result.meta["datalog-memory/error"]


def run_in_process(db: str, era: str, scenario):
    """The same client and server code as run_client, connected in this process (no server start): for
    matrices of calls whose subject is the server's answers, not its process."""
    import anyio
    from mcp import Client

    from memory import Memory
    from memory.mcp_server import build_server

    async def main():
        with Memory(db) as memory:
            async with Client(build_server(memory), mode=era) as client:
                return await scenario(client)
    return anyio.run(main)


def alive(pid: int) -> bool:
    """Whether a process is running (not gone, not a zombie waiting to be reaped)."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


class HttpServer:
    """`datalog-memory serve --http --port 0` as its own process; `url` is its endpoint once it listens (read
    from the line it prints on stderr, which goes to a file so the server never blocks on a full pipe)."""

    def __init__(self, db: str, *args: str, extra_env: dict | None = None, log: Path | None = None) -> None:
        import re
        import tempfile
        import time

        self.log = log or Path(tempfile.mkstemp(suffix=".log")[1])
        with open(self.log, "wb") as errors:
            self.proc = subprocess.Popen([*COMMAND, "--db", db, "serve", "--http", "--port", "0", *args],
                                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                                         cwd=os.getcwd(), env=env(extra_env))
        deadline = time.monotonic() + 60
        while True:
            found = re.search(r" at (http://\S+/mcp) ", self.log.read_text(errors="replace"))
            if found:
                self.url = found.group(1)
                return
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                raise AssertionError(f"the HTTP server did not start: {self.log.read_text(errors='replace')}")
            time.sleep(0.05)

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                return self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        return self.proc.wait()

    def kill9(self) -> None:
        self.proc.kill()  # SIGKILL
        self.proc.wait()

    def __enter__(self) -> "HttpServer":
        return self

    def __exit__(self, *exc) -> None:
        self.stop()


def run_http_client(url: str, era: str, scenario, token: str | None = None, **options):
    """Connect the mcp package's Streamable HTTP client to `url` in `era` (with a bearer token when given, and the
    Client's `options`) and run `scenario(client)`."""
    import anyio
    from mcp import Client
    from mcp.client.streamable_http import streamable_http_client
    from mcp.shared._httpx_utils import create_mcp_http_client

    async def main():
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"} if token else None)
        async with http, Client(streamable_http_client(url, http_client=http), mode=era, **options) as client:
            return await scenario(client)
    return anyio.run(main)
