"""A minimal MCP client over Streamable HTTP for the benchmarks, and `serve --http` started as a process.

One kept-alive connection per client; each call is a POST of one JSON-RPC request in the session its
handshake opened (the 2025-11-25 era), its answer read from the JSON or server-sent-events body. Written
here rather than taken from an SDK, so the figures are the server's cost plus one round trip."""

from __future__ import annotations

import http.client
import json
import re
import subprocess
import time
from pathlib import Path

PROTOCOL = "2025-11-25"


class ToolFailed(RuntimeError):
    """A tool answered with isError: the text it gave."""


def tool_result(result: dict) -> dict:
    """A tools/call result, or ToolFailed with the text of an isError one."""
    if result.get("isError"):
        raise ToolFailed(result["content"][0]["text"])
    return result


def hello(client) -> None:
    """The 2025-11-25 handshake, over whatever carries `client`'s request and notify."""
    client.request("initialize", {"protocolVersion": PROTOCOL, "capabilities": {},
                                  "clientInfo": {"name": "datalog-memory-benchmark", "version": "1"}})
    client.notify("notifications/initialized")


def answer_of(message: dict, method: str) -> dict:
    if "error" in message:
        raise RuntimeError(f"{method}: {message['error']}")
    return message["result"]


class HttpClient:
    def __init__(self, host: str, port: int, token: str | None = None, timeout: float = 120) -> None:
        self.connection = http.client.HTTPConnection(host, port, timeout=timeout)
        self.token = token
        self.session: str | None = None
        self.next_id = 0
        hello(self)

    def _post(self, message: dict):
        headers = {"content-type": "application/json", "accept": "application/json, text/event-stream"}
        if self.token:
            headers["authorization"] = f"Bearer {self.token}"
        if self.session:
            headers.update({"mcp-session-id": self.session, "mcp-protocol-version": PROTOCOL})
        self.connection.request("POST", "/mcp", json.dumps(message).encode(), headers)
        response = self.connection.getresponse()
        body = response.read()
        if response.status >= 400:
            raise RuntimeError(f"HTTP {response.status}: {body[:200]!r}")
        self.session = self.session or response.getheader("mcp-session-id")
        return response, body

    def notify(self, method: str, params: dict | None = None) -> None:
        self._post({"jsonrpc": "2.0", "method": method, "params": params or {}})

    def request(self, method: str, params: dict) -> dict:
        self.next_id += 1
        response, body = self._post({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        if response.getheader("content-type", "").startswith("text/event-stream"):
            messages = [json.loads(line[5:]) for line in body.decode().splitlines() if line.startswith("data:")]
        else:
            messages = [json.loads(body)]
        for message in messages:
            if message.get("id") == self.next_id:
                return answer_of(message, method)
        raise RuntimeError(f"{method}: no answer in {body[:200]!r}")

    def call(self, tool: str, arguments: dict) -> dict:
        return tool_result(self.request("tools/call", {"name": tool, "arguments": arguments}))

    def close(self) -> None:
        self.connection.close()


def start_http_server(command: list[str], env: dict, cwd: Path, log: Path) -> tuple[subprocess.Popen, str, int]:
    """`command` (ending in `serve`) started with `--http --port 0`; the process and where it listens, read
    from the line it prints on stderr (which goes to `log`, so the server never blocks on a full pipe)."""
    with open(log, "wb") as errors:
        proc = subprocess.Popen([*command, "--http", "--port", "0"], env=env, cwd=cwd,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors)
    while not (found := re.search(r" at http://([^/\s]+):(\d+)/mcp ", log.read_text(errors="replace"))):
        if proc.poll() is not None:
            raise RuntimeError(f"serve --http did not start: {log.read_text(errors='replace')}")
        time.sleep(0.01)
    return proc, found.group(1), int(found.group(2))
