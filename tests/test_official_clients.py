"""The official MCP clients against the server subprocess: the TypeScript SDK (what most hosts embed, and the
strictest about results) and the Python SDK in both protocol eras. A successful and a failing call of each
tool group; every result must be accepted (nothing thrown) and show the model the text asserted here."""

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from surfaces import COMMAND, ERAS, ROOT, env, run_client

TS_CLIENT = ROOT / "tests" / "ts_client"
SDK = TS_CLIENT / "node_modules" / "@modelcontextprotocol" / "sdk" / "package.json"
MISSING_MEMORY = "mem_00000000-0000-4000-8000-000000000000"

# (tool, arguments, is_error, the text the model sees: exact, or a prefix when it ends with "…")
CALLS = [
    # knowledge
    ("remember_fact", {"fact": "human(socrates)"}, False, "Asserted: human(socrates)"),
    ("remember_fact", {"fact": "foo(bar"}, True,
     "SyntaxError: expected ',' or ')' in the arguments of foo, found end of input at line 1, column 8"),
    ("remember_fact", {"fact": "p(a). p(b)."}, True, "SyntaxError: …"),
    ("remember_fact", {}, True, "InvalidArguments: Invalid arguments for tool remember_fact: 'fact' is a required property"),
    ("query_logic", {"goal": "human(X)"}, False, '[{"X":"socrates"}]'),
    # beliefs
    ("assume_fact", {"fact": "sunny(today)", "assumption": "forecast"}, False,
     "Assumed: sunny(today) under assumption 'forecast'"),
    ("retract_assumption", {"assumption": "Bad Name"}, True,
     "InvalidArguments: Invalid arguments for tool retract_assumption: 'assumption': 'Bad Name' does not match "
     "'^[a-z][A-Za-z0-9_]*$'"),
    # snapshots
    ("save_snapshot", {"name": "before"}, False, "Snapshot 'before' saved successfully."),
    ("restore_snapshot", {"name": "missing"}, True, "Snapshot not found: missing"),
    # segments
    ("create_memory", {"name": "work"}, False, "Created memory 'work' (project scope)"),
    ("mount_memory", {"name": "nowhere"}, True, "Memory 'nowhere' does not exist"),
    # source memories
    ("memory_remember", {"memory": "exact text"}, False, "Stored memory mem_…"),
    ("memory_get", {"id": MISSING_MEMORY}, True,
     f"NotFound: existence_error(memory, {MISSING_MEMORY}): no memory with this id is visible to the caller"),
    # evidence
    ("remember", {"members": ["drone:a", "sector:1"], "event_ts": 1780000000}, False,
     "Stored observation HEDGE-1 (DRONE_EVENT) at 1780000000 (2026-05-28T20:26:40Z): drone:a, sector:1"),
    ("remember", {"members": []}, True,
     "InvalidArguments: Invalid arguments for tool remember: 'members': [] should be non-empty"),
]
CODES = {"foo(bar": "syntax_error"}


def assert_answers_to_calls(results: list) -> None:
    """The SDK client's results for `CALLS`, in order: errors where expected, each text as expected."""
    for (name, _, is_error, expected), got in zip(CALLS, results):
        assert got.is_error is is_error, (name, got)
        _check_text(got.content[0].text, expected)
        if is_error:
            assert got.structured_content is None and got.meta["datalog-memory/error"]["code"]
    assert results[1].meta["datalog-memory/error"]["code"] == "syntax_error"


def _check_text(text: str, expected: str) -> None:
    if expected.endswith("…"):
        assert text.startswith(expected[:-1]), (text, expected)
    else:
        assert text == expected


def _home(tmp_path: Path) -> dict:
    home = tmp_path / "home"
    home.mkdir()
    return {"HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "DATALOG_MEMORY_DB": str(tmp_path / "m.db")}


def _node_ready() -> bool:
    return shutil.which("node") is not None and SDK.exists()


def test_typescript_sdk_client_accepts_every_result(tmp_path):
    if not _node_ready():
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the TypeScript client test: node or tests/ts_client/node_modules is missing")
        pytest.skip("node or the TypeScript MCP SDK (npm ci in tests/ts_client) is not installed")
    plan = {"command": COMMAND[0], "args": [*COMMAND[1:], "serve"], "cwd": str(tmp_path),
            "env": {k: v for k, v in env(_home(tmp_path)).items() if isinstance(v, str)},
            "calls": [{"name": n, "arguments": a} for n, a, _, _ in CALLS],
            "read": ["datalog-memory://segment/default", "datalog-memory://schema", f"datalog-memory://memory/{MISSING_MEMORY}"]}
    proc = subprocess.run(["node", str(TS_CLIENT / "client.mjs")], input=json.dumps(plan), capture_output=True,
                          text=True, timeout=120, cwd=TS_CLIENT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    from memory.tools import REGISTRY
    assert out["tools"] == list(REGISTRY)
    assert out["capabilities"]["tools"] == {"listChanged": True} and "resources" in out["capabilities"]
    assert "logging" in out["capabilities"]
    for (name, _, is_error, expected), got in zip(CALLS, out["calls"]):
        assert "thrown" not in got, (name, got)  # the client library accepted the result
        assert got["isError"] is is_error, (name, got)
        _check_text(got["text"], expected)
        if is_error:
            assert got["structured"] is None and got["meta"]["datalog-memory/error"]["code"]
    assert out["calls"][1]["meta"]["datalog-memory/error"]["code"] == "syntax_error"
    ident = out["calls"][11]["structured"]["id"]
    assert out["resources"][:4] == ["datalog-memory://guide/conventions", "datalog-memory://guide/tools",
                                    "datalog-memory://schema", "datalog-memory://segment/default"]
    assert f"datalog-memory://memory/{ident}" in out["resources"]
    assert out["read"]["datalog-memory://segment/default"].splitlines()[1:] == [
        "human(socrates).", ":- assume(sunny(today), forecast)."]
    assert "CREATE TABLE facts" in out["read"]["datalog-memory://schema"]
    assert out["read"][f"datalog-memory://memory/{MISSING_MEMORY}"]["code"] == -32002


@pytest.mark.parametrize("era", ERAS)
def test_python_sdk_client_accepts_every_result(tmp_path, era):
    async def scenario(client):
        results = [await client.call_tool(name, args) for name, args, _, _ in CALLS]
        listed = await client.list_resources()
        return results, listed
    extra = _home(tmp_path)
    results, listed = run_client(extra["DATALOG_MEMORY_DB"], era, scenario, extra)
    assert_answers_to_calls(results)
    assert [str(r.uri) for r in listed.resources[:3]] == [
        "datalog-memory://guide/conventions", "datalog-memory://guide/tools", "datalog-memory://schema"]
