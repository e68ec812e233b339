"""`serve` over stdio answers initialize before the SDK loads, from the SDK's own answer kept by an earlier start
(memory/early_initialize.py): the client gets one answer, the same one the SDK gives, and the SDK's handshake
still happens (later requests are served); a kept answer that no longer matches is said and replaced; a first
line that is not an initialize, or a kept file of another build, changes nothing."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from hypothesis import given, settings, strategies as st

from memory.early_initialize import ANSWERS_FILE, answers_path, fingerprint, keep, requested_version
from surfaces import RawServer

INIT = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}


def _kept_file() -> Path:
    path = answers_path()
    assert path == Path(os.environ["XDG_CACHE_HOME"]) / "datalog-memory" / ANSWERS_FILE  # never the user's cache
    return path


def _session(db: str, first=INIT) -> tuple[dict, dict, list[str], str]:
    """Start, send `first` and a tools/list; the first answer, the list's answer, any other line, and stderr."""
    server = RawServer(db)
    first_answer = server.request(first)
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    listed = server.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    assert server.proc.stdout is not None and server.proc.stderr is not None
    assert server.close() == 0
    extra = server.proc.stdout.read().splitlines()
    return first_answer, listed, extra, server.proc.stderr.read()


@pytest.fixture(autouse=True)
def _no_workers(monkeypatch):
    monkeypatch.setenv("DATALOG_MEMORY_WORKERS", "0")  # these starts evaluate nothing: no worker to start


def test_a_later_start_answers_initialize_from_the_kept_answer_once_and_a_stale_one_is_said_and_replaced(db_path):
    first, listed_first, extra_first, _ = _session(db_path)
    kept = json.loads(_kept_file().read_text())
    assert kept["fingerprint"] == fingerprint() and kept["answers"]["2025-11-25"] == first["result"]

    second, listed, extra, stderr = _session(db_path)
    assert second == first  # the same answer
    assert listed["id"] == 2 and listed["result"]["tools"] == listed_first["result"]["tools"]  # the SDK was initialized
    assert extra == extra_first == []  # the SDK's own answer to initialize was not sent a second time
    assert "WARNING" not in stderr, stderr

    stale = {**first["result"], "instructions": "an answer from another build"}
    keep("2025-11-25", stale)
    third, listed, extra, stderr = _session(db_path)
    assert third["result"] == stale  # what was kept is what was sent (the client was answered at once) ...
    assert "the SDK's answer differs" in stderr and extra == []  # ... and the difference is said, not hidden
    assert listed["result"]["tools"]
    assert json.loads(_kept_file().read_text())["answers"]["2025-11-25"] == first["result"]  # the SDK's is kept


def test_a_kept_file_of_another_build_and_a_first_request_of_another_kind_are_left_to_the_sdk(db_path):
    path = _kept_file()
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"fingerprint": "another build", "answers": {"2025-11-25": {"forged": True}}}))
    # A ping first: answered by the SDK (before initialize), then the initialize, by the SDK too, nothing twice.
    server = RawServer(db_path)
    assert server.request({"jsonrpc": "2.0", "id": 0, "method": "ping"}) == {"jsonrpc": "2.0", "id": 0, "result": {}}
    answer = server.request(INIT)["result"]
    assert "forged" not in answer and answer["serverInfo"]["name"] == "datalog-memory"
    assert server.close() == 0
    assert server.proc.stdout is not None and server.proc.stdout.read() == ""
    assert json.loads(path.read_text()) == {"fingerprint": fingerprint(), "answers": {"2025-11-25": answer}}


def test_end_of_input_after_a_partial_first_line_ends_the_server(db_path):
    server = RawServer(db_path)
    assert server.proc.stdin is not None and server.proc.stdout is not None
    server.proc.stdin.write('{"jsonrpc": "2.0", "id": 1, "method": "ping"}')  # no newline, then end of input
    assert server.close() == 0
    assert json.loads(server.proc.stdout.read()) == {"jsonrpc": "2.0", "id": 1, "result": {}}


_scalar = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=4)
_value = _scalar | st.lists(_scalar, max_size=2) | st.dictionaries(st.text(max_size=4), _scalar, max_size=2)
_PLACES = [("jsonrpc",), ("id",), ("method",), ("params",), ("params", "protocolVersion"), ("params", "capabilities"),
           ("params", "clientInfo"), ("params", "clientInfo", "name"), ("params", "clientInfo", "version")]


@st.composite
def _near_initialize(draw) -> dict:
    """An honest initialize with some of its members replaced by arbitrary JSON, or removed."""
    message = json.loads(json.dumps(INIT))
    for place in draw(st.lists(st.sampled_from(_PLACES), max_size=3, unique=True)):
        *path, last = place
        holder = message
        for step in path:
            holder = holder.get(step) if isinstance(holder, dict) else None
        if isinstance(holder, dict):
            if draw(st.booleans()):
                holder.pop(last, None)
            else:
                holder[last] = draw(_value)
    return message


@settings(max_examples=40, deadline=None)
@given(_near_initialize())
def test_only_an_initialize_the_sdk_accepts_is_answered_early(message):
    found = requested_version(json.dumps(message))
    params = message.get("params")
    info = params.get("clientInfo") if isinstance(params, dict) else None
    shaped = (message.get("jsonrpc") == "2.0" and message.get("method") == "initialize"
              and type(message.get("id")) in (str, int) and isinstance(params, dict)
              and isinstance(params.get("protocolVersion"), str) and isinstance(params.get("capabilities"), dict)
              and isinstance(info, dict) and isinstance(info.get("name"), str) and isinstance(info.get("version"), str))
    assert (found is not None) == shaped
    if found is not None:
        assert found == (message["id"], params["protocolVersion"])


def test_the_honest_initialize_and_its_near_misses():
    assert requested_version(json.dumps(INIT)) == (1, "2025-11-25")
    for broken in ({**INIT, "id": None}, {**INIT, "id": 1.0}, {**INIT, "method": "ping"},
                   {**INIT, "params": {**INIT["params"], "clientInfo": {"name": "raw"}}}):
        assert requested_version(json.dumps(broken)) is None
    assert requested_version("{not json") is None and requested_version("[" * 100_000) is None


def test_reading_ahead_loads_nothing_of_the_sdk():
    import subprocess
    import sys

    code = ("import sys, memory.early_initialize; "
            "print(sorted(m for m in ('mcp', 'mcp_types', 'pydantic', 'apsw', 'memory.datalog') if m in sys.modules))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout.strip()
    assert loaded == "[]"
