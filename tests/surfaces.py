"""Helpers to run the real surfaces: the CLI and the MCP server as subprocesses."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
COMMAND = [sys.executable, "-m", "cli.main"]


def env(extra: dict | None = None) -> dict:
    e = dict(os.environ)
    e["PYTHONPATH"] = str(ROOT) + os.pathsep + e.get("PYTHONPATH", "")
    e.update(extra or {})
    return e


def cli(db: str, *args: str, check: bool = False, input: str | None = None,
        extra_env: dict | None = None) -> subprocess.CompletedProcess:
    proc = subprocess.run([*COMMAND, "--db", db, *args], capture_output=True, text=True, cwd=ROOT, env=env(extra_env),
                          input=input, timeout=120)
    if check and proc.returncode != 0:
        raise AssertionError(f"exit {proc.returncode}: {proc.stdout}\n{proc.stderr}")
    return proc


def cli_json(db: str, *args: str, extra_env: dict | None = None) -> dict:
    proc = cli(db, *args, "--json", check=True, extra_env=extra_env)
    return json.loads(proc.stdout)


def server_params(db: str, extra_env: dict | None = None):
    from mcp.client.stdio import StdioServerParameters

    return StdioServerParameters(command=COMMAND[0], args=[*COMMAND[1:], "--db", db, "serve"], env=env(extra_env),
                                 cwd=str(ROOT))


class RawServer:
    """The server over raw newline-delimited JSON-RPC, for the error paths a client library hides."""

    def __init__(self, db: str) -> None:
        self.proc = subprocess.Popen([*COMMAND, "--db", db, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True, cwd=ROOT, env=env())

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
