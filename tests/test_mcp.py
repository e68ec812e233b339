"""The MCP server driven by the mcp package's own client in both protocol eras (a server process for the
reference session, kill -9 and the raw JSON-RPC error paths; the same server code in-process for the
matrices whose subject is the answers), and by raw JSON-RPC for the error paths."""

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memory.tools import REGISTRY
from surfaces import MODERN_META, RawServer, error_of, run_in_process, server_params

ERAS = ["legacy", "2026-07-28"]


def run(db, era, scenario):
    async def main():
        async with Client(server_params(db), mode=era) as client:
            return await scenario(client)
    return anyio.run(main)


@pytest.mark.parametrize("era", ERAS)
def test_tools_list_matches_the_registry(db_path, era):
    async def scenario(client):
        return (await client.list_tools()).tools
    tools = run_in_process(db_path, era, scenario)
    assert [t.name for t in tools] == list(REGISTRY)
    for t in tools:
        spec = REGISTRY[t.name]
        assert t.input_schema == spec.input_schema
        assert t.input_schema["additionalProperties"] is False
        assert t.output_schema == spec.output_schema
        assert t.annotations.read_only_hint == spec.annotations.read_only
        assert t.annotations.destructive_hint == spec.annotations.destructive
        assert t.annotations.idempotent_hint == spec.annotations.idempotent
        assert t.annotations.open_world_hint is False
        assert t.title


@pytest.mark.parametrize("era", ERAS)
def test_reference_session(store_file, era):
    """remember, define, query, explain, forget: texts as the reference, structured results by schema."""
    async def scenario(client):
        out = {}
        for name, args in [
            ("echo", {"message": "Hello, world!"}),
            ("remember_fact", {"fact": "untested(deploy_v3)"}),
            ("remember_fact", {"fact": "in_production(deploy_v3)"}),
            ("define_rule", {"head": "risky(X)", "body": "untested(X), in_production(X)"}),
            ("query_logic", {"goal": "risky(X)"}),
            ("query_logic", {"goal": "risky(deploy_v3)"}),
            ("query_logic", {"goal": "risky(nothing)"}),
            ("explain_why", {"fact": "risky(deploy_v3)"}),
            ("forget_fact", {"fact": "untested(deploy_v3)"}),
            ("explain_why", {"fact": "risky(deploy_v3)"}),
        ]:
            result = await client.call_tool(name, args)
            assert not result.is_error, result
            jsonschema.validate(result.structured_content, REGISTRY[name].output_schema)
            out.setdefault(name, []).append((result.content[0].text, result.structured_content))
        return out
    out = run(store_file, era, scenario)
    assert out["echo"][0][0] == "Hello, world!"
    assert out["remember_fact"][0][0] == "Asserted: untested(deploy_v3)"
    assert out["define_rule"][0][0].split("\n") == ["Asserted rule: risky(X) :- untested(X), in_production(X)",
                                                    "% rule_id 1"]
    assert [t for t, _ in out["query_logic"]] == ['[{"X":"deploy_v3"}]', "[{}]", "[]"]
    assert out["query_logic"][0][1]["total"] == 1 and out["query_logic"][0][1]["truncated"] is False
    assert out["explain_why"][0][0] == (
        '{"fact":"risky(deploy_v3)","proven":true,"proof_tree":{"goal":"risky(deploy_v3)",'
        '"rule_applied":"risky(X) :- untested(X), in_production(X)","children":[{"goal":"untested(deploy_v3)",'
        '"rule_applied":"fact","children":[],"supports":["asserted"]},{"goal":"in_production(deploy_v3)",'
        '"rule_applied":"fact","children":[],"supports":["asserted"]}]}}'
    )
    assert out["forget_fact"][0][0] == "Retracted: untested(deploy_v3)"
    assert out["explain_why"][1][0] == '{"fact":"risky(deploy_v3)","proven":false,"proof_tree":null}'


@pytest.mark.parametrize("era", ERAS)
def test_tool_errors_are_results_with_a_stable_code(store_file, era):
    async def scenario(client):
        results = {}
        for key, name, args in [
            ("syntax", "remember_fact", {"fact": "human(socrates"}),
            ("blank", "remember_fact", {"fact": "   "}),
            ("unsafe", "define_rule", {"head": "p(X)", "body": "q(Y)"}),
            ("segment", "query_logic", {"goal": "p(X)", "memory": "nowhere"}),
            ("missing", "forget_fact", {"fact": "never(stored)"}),
        ]:
            results[key] = await client.call_tool(name, args)
        return results
    results = run_in_process(store_file, era, scenario)
    for key, code in [("syntax", "syntax_error"), ("blank", "invalid_arguments"), ("unsafe", "invalid_program"),
                      ("segment", "not_found"), ("missing", "not_found")]:
        assert results[key].is_error, key
        assert error_of(results[key])["code"] == code
    assert results["syntax"].content[0].text.startswith("SyntaxError: ")
    assert "line 1, column 15" in results["syntax"].content[0].text
    assert results["blank"].content[0].text.startswith("InvalidArguments: ")
    assert results["segment"].content[0].text == "Memory not mounted: nowhere"


SCHEMA_FAILURES = [
    ("remember_fact", {}),
    ("remember_fact", {"fact": None}),
    ("remember_fact", {"fact": ""}),
    ("remember_fact", {"fact": 42}),
    ("remember_fact", {"fact": "p(a)", "extra": 1}),
    ("remember_fact", {"fact": "p(" + "a" * (1 << 20) + ")"}),
    ("query_logic", {"goal": "p(X)", "limit": "ten"}),
    ("query_logic", {"goal": "p(X)", "limit": -1}),
    ("explain_why", {"fact": "p(a)", "max_depth": 0}),
    ("define_rule", {"head": "p(X)"}),
    ("echo", {"message": ["not", "a", "string"]}),
]


@pytest.mark.parametrize("era", ERAS)
def test_schema_failures_are_tool_errors_the_model_reads(db_path, era):
    """SEP-1303: a schema failure is an isError result, so the model sees what to change (one server per era)."""
    async def scenario(client):
        failed = [await client.call_tool(name, args) for name, args in SCHEMA_FAILURES]
        # the server is still serving
        assert (await client.call_tool("echo", {"message": "still here"})).content[0].text == "still here"
        return failed
    for (name, args), result in zip(SCHEMA_FAILURES, run_in_process(db_path, era, scenario)):
        text = result.content[0].text
        assert text.startswith("InvalidArguments: Invalid arguments for tool " + name + ": "), text
        assert error_of(result)["code"] == "invalid_arguments"
        assert len(text) < 2000
        if "extra" in args:
            assert text.endswith("('extra' was unexpected); the arguments are: fact, memory")
        if len(str(args)) > 65536:
            assert text.endswith("'fact': too long (1048579 characters; the limit is 65536)")


@pytest.mark.parametrize("era", ERAS)
def test_unknown_tool_is_invalid_params(db_path, era):
    async def scenario(client):
        with pytest.raises(MCPError) as info:
            await client.call_tool("no_such_tool", {})
        return info.value
    error = run_in_process(db_path, era, scenario)
    assert error.code == -32602 and "Unknown tool: no_such_tool" in error.message


def test_handshake_era_raw(db_path):
    server = RawServer(db_path)
    early = server.request({"jsonrpc": "2.0", "id": 0, "method": "tools/list"})
    assert early["error"]["code"] == -32602  # before initialize
    init = server.request({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    assert init["result"]["protocolVersion"] == "2025-11-25"
    assert init["result"]["serverInfo"]["name"] == "datalog-memory"
    assert init["result"]["capabilities"]["tools"] == {"listChanged": True}
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    assert server.request("{not json")["error"]["code"] == -32700
    assert server.request('{"jsonrpc": "2.0", "id": 5}')["error"]["code"] in (-32600, -32700)
    assert server.request({"jsonrpc": "2.0", "id": 2, "method": "ping"}) == {"jsonrpc": "2.0", "id": 2, "result": {}}
    assert server.request({"jsonrpc": "2.0", "id": 3, "method": "no/such"})["error"]["code"] == -32601
    ok = server.request({"jsonrpc": "2.0", "id": 4, "method": "tools/call",
                         "params": {"name": "remember_fact", "arguments": {"fact": "p(a)"}}})
    assert ok["result"]["content"][0]["text"] == "Asserted: p(a)"
    assert ok["result"]["structuredContent"]["created"] is True
    assert server.close() == 0  # EOF on stdin exits 0
    stderr = server.proc.stderr.read().splitlines()
    # The start-up line, and (a new database) that it starts an empty memory and which file it created.
    assert len(stderr) == 3 and " INFO datalog-memory " in stderr[0] and " serving " in stderr[0], stderr
    # A first start is normal: a notice, not a warning.
    assert f" INFO no database at {db_path}: starting with an empty memory" in stderr[1], stderr
    assert stderr[2].endswith(f"INFO created a new, empty database at {db_path}")


def test_older_requested_version_is_echoed_and_unknown_ones_countered(db_path):
    server = RawServer(db_path)
    init = server.request({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    assert init["result"]["protocolVersion"] == "2025-06-18"
    server.close()
    server = RawServer(db_path)
    init = server.request({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "1999-01-01", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    assert init["result"]["protocolVersion"] == "2025-11-25"
    server.close()


def test_stateless_era_raw(store_file):
    server = RawServer(store_file)
    discover = server.request({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}})
    result = discover["result"]
    assert result["resultType"] == "complete"
    assert "2026-07-28" in result["supportedVersions"]
    assert result["_meta"]["io.modelcontextprotocol/serverInfo"]["name"] == "datalog-memory"
    assert result["ttlMs"] > 0 and result["cacheScope"] == "public"
    listing = server.request({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": MODERN_META}})
    assert listing["result"]["resultType"] == "complete"
    # the list is the connection's own (its enabled toolsets), and changes when it enables more
    assert listing["result"]["ttlMs"] == 0 and listing["result"]["cacheScope"] == "private"
    assert [t["name"] for t in listing["result"]["tools"]] == list(REGISTRY)
    missing = server.request({"jsonrpc": "2.0", "id": 3, "method": "tools/list",
                              "params": {"_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28"}}})
    assert missing["error"]["code"] == -32602 and "clientCapabilities" in missing["error"]["message"]
    wrong = server.request({"jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": {
        **MODERN_META, "io.modelcontextprotocol/protocolVersion": "1900-01-01"}}})
    assert wrong["error"]["code"] == -32022
    assert wrong["error"]["data"] == {"supported": ["2026-07-28"], "requested": "1900-01-01"}
    assert server.request("{oops")["error"]["code"] == -32700
    call = server.request({"jsonrpc": "2.0", "id": 5, "method": "tools/call",
                           "params": {"_meta": MODERN_META, "name": "echo", "arguments": {"message": "hi"}}})
    assert call["result"]["resultType"] == "complete" and call["result"]["structuredContent"] == {"message": "hi"}
    assert server.request({"jsonrpc": "2.0", "id": 6, "method": "nope", "params": {"_meta": MODERN_META}})["error"]["code"] == -32601
    assert server.close() == 0


def test_acknowledged_write_survives_kill_9(store_file):
    import os
    import signal

    server = RawServer(store_file)
    server.request({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    server.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    for i in range(20):
        reply = server.request({"jsonrpc": "2.0", "id": 10 + i, "method": "tools/call",
                                "params": {"name": "remember_fact", "arguments": {"fact": f"durable(n{i})"}}})
        assert not reply["result"]["isError"]
    os.kill(server.proc.pid, signal.SIGKILL)
    server.proc.wait()

    async def scenario(client):
        return await client.call_tool("query_logic", {"goal": "durable(X)"})
    result = run_in_process(store_file, "legacy", scenario)  # what the killed server acknowledged is there
    assert result.structured_content["total"] == 20


def test_budget_exceeded_is_a_tool_error_and_the_server_keeps_serving(store_file, monkeypatch):
    from memory import Memory
    with Memory(store_file) as m:
        m.add_facts([f"edge({i},{i + 1})" for i in range(300)])
        m.define_rule("path(X,Y)", "edge(X,Y)")
        m.define_rule("path(X,Z)", "path(X,Y), edge(Y,Z)")
    monkeypatch.setenv("DATALOG_MEMORY_MAX_TUPLES", "1000")

    async def scenario(client):
        big = await client.call_tool("query_logic", {"goal": "path(X, Y)"})
        small = await client.call_tool("query_logic", {"goal": "path(298, Y)"})
        return big, small
    big, small = run_in_process(store_file, "legacy", scenario)
    assert big.is_error and error_of(big)["code"] == "budget_exceeded"
    assert "1000" in big.content[0].text
    assert not small.is_error and small.structured_content["total"] == 2


def test_query_results_are_bounded_by_default_and_say_so(store_file):
    from memory import Memory
    with Memory(store_file) as m:
        m.add_facts([f"n({i})" for i in range(1500)])

    async def scenario(client):
        first = await client.call_tool("query_logic", {"goal": "n(X)"})
        rest = await client.call_tool("query_logic", {"goal": "n(X)", "offset": 1000})
        return first, rest
    first, rest = run_in_process(store_file, "legacy", scenario)
    assert first.structured_content["total"] == 1500 and first.structured_content["truncated"] is True
    assert len(first.structured_content["bindings"]) == 1000
    assert len(rest.structured_content["bindings"]) == 500 and rest.structured_content["truncated"] is False


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
    "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}


def _big_answers(db_path: str, facts: int = 1000) -> dict:
    """A store whose `big(X, Y)` answers fill about 150 KB of JSON per call, and the call that asks for them."""
    from memory import Memory

    with Memory(db_path) as memory:
        memory.add_facts([f"big({i}, '{'x' * 60}{i}')" for i in range(facts)])
    return {"name": "query_logic", "arguments": {"goal": "big(X, Y)", "limit": facts}}


def test_a_client_that_reads_late_gets_every_answer_whole(db_path):
    """Answers far larger than a pipe holds, written while the client reads nothing: the server's writes wait
    for the client (nothing dropped, cut or interleaved), and it serves on once the client reads."""
    call = _big_answers(db_path)
    server = RawServer(db_path)
    server.send(INITIALIZE)
    server.send(INITIALIZED)
    for i in range(2, 22):  # 20 answers of ~150 KB: 3 MB, against a pipe of 64 KB
        server.send({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call})
    answers = {}
    for _ in range(21):
        message = server.recv()
        answers[message["id"]] = message
    assert sorted(answers) == list(range(1, 22))
    assert all(answers[i]["result"]["structuredContent"]["total"] == 1000 for i in range(2, 22))
    assert server.request({"jsonrpc": "2.0", "id": 99, "method": "ping"}) == {"jsonrpc": "2.0", "id": 99, "result": {}}
    assert server.close() == 0


@pytest.mark.parametrize("stdout", ["file", "socket"])
def test_the_server_answers_into_a_file_or_a_socket_as_into_a_pipe(db_path, tmp_path, stdout):
    """stdout need not be a pipe: a regular file (written as the SDK writes) or a socket (written by the event
    loop, as a pipe is) gets every answer, whole."""
    import json
    import socket
    import subprocess

    from surfaces import COMMAND, env

    call = _big_answers(db_path, 300)
    requests = tmp_path / "requests.jsonl"
    requests.write_text("".join(json.dumps(m) + "\n" for m in [
        INITIALIZE, INITIALIZED, *({"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": call}
                                   for i in range(2, 6))]))
    with open(requests, "rb") as stdin:
        if stdout == "file":
            with open(tmp_path / "answers.jsonl", "wb") as out:
                code = subprocess.run([*COMMAND, "--db", db_path, "serve"], stdin=stdin, stdout=out,
                                      stderr=subprocess.DEVNULL, env=env(), timeout=120).returncode
            written = (tmp_path / "answers.jsonl").read_bytes()
        else:
            ours, theirs = socket.socketpair()
            proc = subprocess.Popen([*COMMAND, "--db", db_path, "serve"], stdin=stdin, stdout=theirs,
                                    stderr=subprocess.DEVNULL, env=env())
            theirs.close()
            chunks = []
            while chunk := ours.recv(1 << 16):
                chunks.append(chunk)
            ours.close()
            code = proc.wait(120)
            written = b"".join(chunks)
    assert code == 0
    messages = [json.loads(line) for line in written.decode().splitlines()]
    assert sorted(m["id"] for m in messages) == [1, 2, 3, 4, 5]
    assert all(m["result"]["structuredContent"]["total"] == 300 for m in messages if m["id"] > 1)
