"""Source memories over the real surfaces: the MCP server in both protocol eras (authority from the server's
environment) and the CLI."""

import json
import subprocess

import pytest

from memory.tools import REGISTRY
from surfaces import COMMAND, ERAS, MODERN_META, ROOT, RawServer, call_checked, cli, cli_json, env, error_of, run_client

TRICKY = "Exact  text ✓\nnaïve — 👩‍💻\r\n\ttrailing  "
HOST = {"DATALOG_MEMORY_PRINCIPAL": "host_agent", "DATALOG_MEMORY_SESSION_ID": "sess-1",
        "SYMBOLIC_MEMORY_PROJECT_REMOTE": "git@github.com:example/alpha.git"}
SOURCE_TOOLS = {"memory_remember", "memory_get", "memory_search", "memory_recall", "memory_forget"}


run, call = run_client, call_checked


def test_every_source_tool_is_registered_and_exercised_here():
    assert SOURCE_TOOLS <= set(REGISTRY)


@pytest.mark.parametrize("era", ERAS)
def test_remember_get_search_recall_forget_over_mcp(store_file, era):
    async def scenario(client):
        out = {}
        stored = await call(client, "memory_remember", {"memory": TRICKY, "projections": [
            {"predicate": "uses", "arguments": ["alpha", "prolog"], "statement": "alpha uses Prolog",
             "quality": "lossy"}]})
        ident = stored.structured_content["id"]
        out["remember"] = stored
        out["get"] = await call(client, "memory_get", {"id": ident})
        out["search"] = await call(client, "memory_search", {"query": "naïve prolog"})
        out["recall"] = await call(client, "memory_recall", {"predicate": "uses", "arguments": ["alpha", None]})
        out["rule"] = await call(client, "define_rule", {"head": "tool(X)", "body": "uses(alpha, X)"})
        out["query"] = await call(client, "query_logic", {"goal": "tool(X)"})
        out["explain"] = await call(client, "explain_why", {"fact": "tool(prolog)"})
        out["dry"] = await call(client, "memory_forget", {"query": "naïve", "dry_run": True})
        out["forget"] = await call(client, "memory_forget", {"ids": [ident], "action": "archive"})
        out["after"] = await call(client, "query_logic", {"goal": "tool(X)"})
        out["archived"] = await call(client, "memory_get", {"id": ident})
        out["before"] = await call(client, "memory_get", {"id": ident, "as_of": "2000-01-01T00:00:00Z"})
        out["hidden"] = await call(client, "memory_get", {"id": "mem_00000000-0000-4000-8000-000000000000"})
        return ident, out
    ident, out = run(store_file, era, scenario, HOST)
    for name, result in out.items():
        assert result.is_error == (name in ("hidden", "before")), (name, result)
    assert out["remember"].content[0].text.startswith(f"Stored memory {ident} in project:")
    assert out["remember"].structured_content["namespace"]["type"] == "project"
    assert out["get"].content[0].text == TRICKY  # the text content is exactly the source
    assert out["get"].structured_content["principal"] == "host_agent"
    assert out["search"].structured_content["results"][0]["id"] == ident
    assert out["recall"].content[0].text.startswith("# Recalled memory")
    assert "## Source context" in out["recall"].content[0].text  # lossy: the source comes along
    assert out["query"].content[0].text == '[{"X":"prolog"}]'
    nodes = out["explain"].structured_content["proof_nodes"]
    leaf = nodes[nodes[0]["children"][0]]
    assert f'"supports":["source:{ident}"]' in out["explain"].content[0].text  # the model sees what it rests on
    assert leaf["memories"][0]["id"] == ident and leaf["memories"][0]["source_text"] == TRICKY
    assert [t["id"] for t in out["dry"].structured_content["targets"]] == [ident]
    assert out["forget"].structured_content["removed_facts"] == ["uses(alpha, prolog)"]
    # empty, and the note says why: uses/2 lost its only facts with the memory
    assert out["after"].content[0].text.split("\n")[0] == "[]" and "uses/2" in out["after"].content[0].text
    assert error_of(out["hidden"])["code"] == "not_found"
    assert "existence_error(memory" in out["hidden"].content[0].text
    # A memory no longer current says so before its text (which follows exactly), so the text alone misleads no one.
    status, text = out["archived"].content[0].text.split("\n", 1)
    assert status.startswith("% archived at ") and status.endswith(": not current; the text as recorded follows")
    assert text == TRICKY and out["archived"].structured_content["current"] is False
    # Asked as it stood before it was recorded: the caller may read it, so it is told why, not "not visible".
    assert error_of(out["before"])["code"] == "not_found"
    assert "did not exist then; omit as_of" in out["before"].content[0].text


@pytest.mark.parametrize("era", ERAS)
def test_authority_comes_only_from_the_host(store_file, era):
    """A read-only host refuses writes; arguments naming a principal or capabilities are refused arguments."""
    async def scenario(client):
        refused = await call(client, "memory_remember", {"memory": "x"})
        errors = []
        for extra in ({"principal": "root"}, {"capabilities": ["memory_write_global"]}, {"session_id": "other"}):
            errors.append(error_of(await client.call_tool("memory_remember", {"memory": "x", **extra}))["code"])
        searched = await call(client, "memory_search", {"query": "x"})
        return refused, errors, searched
    refused, errors, searched = run(store_file, era, scenario, {**HOST, "DATALOG_MEMORY_CAPABILITIES": "memory_read"})
    assert refused.is_error and error_of(refused)["code"] == "permission_denied"
    assert errors == ["invalid_arguments"] * 3
    assert not searched.is_error and searched.structured_content["results"] == []


def test_an_empty_capability_list_means_none_over_raw_json_rpc(store_file):
    server = RawServer.__new__(RawServer)
    server.proc = subprocess.Popen([*COMMAND, "--db", store_file, "serve"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, text=True, cwd=ROOT,
                                   env=env({"SYMBOLIC_MEMORY_CAPABILITIES": ""}))
    try:
        reply = server.request({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
            "name": "memory_remember", "arguments": {"memory": "x"}, "_meta": MODERN_META}})
    finally:
        server.close()
    assert reply["result"]["isError"] is True and reply["result"]["resultType"] == "complete"
    assert reply["result"]["_meta"]["datalog-memory/error"]["code"] == "permission_denied"


def test_sessions_are_isolated_across_server_processes(store_file):
    async def remember(client):
        return (await call(client, "memory_remember", {"memory": "session secret"})).structured_content["id"]

    async def probe(client, ident):
        got = await call(client, "memory_get", {"id": ident})
        found = await call(client, "memory_search", {"query": "secret"})
        return got, found
    one = {"DATALOG_MEMORY_SESSION_ID": "one"}
    ident = run(store_file, "legacy", remember, one)
    got, found = run(store_file, "legacy", lambda c: probe(c, ident), {"DATALOG_MEMORY_SESSION_ID": "two"})
    assert got.is_error and error_of(got)["code"] == "not_found"
    assert found.structured_content["results"] == []
    mine, _ = run(store_file, "legacy", lambda c: probe(c, ident), one)  # and it survived the restart
    assert mine.content[0].text == "session secret"


def test_cli_remember_get_and_forget(store_file):
    stored = cli_json(store_file, "memory-remember", "--memory", TRICKY, "--projections",
                      json.dumps([{"predicate": "p", "arguments": ["a"], "statement": "p of a"}]), extra_env=HOST)
    got = subprocess.run([*COMMAND, "--db", store_file, "memory-get", "--id", stored["id"]], capture_output=True,
                         cwd=ROOT, env=env(HOST), timeout=120)
    assert got.returncode == 0 and got.stdout == TRICKY.encode("utf-8")  # byte for byte, nothing added
    assert cli_json(store_file, "query-logic", "--goal", "p(X)", extra_env=HOST)["bindings"] == [{"X": "a"}]
    forgot = cli_json(store_file, "memory-forget", "--ids", stored["id"], "--action", "delete", "--erase", "true",
                      extra_env=HOST)
    assert forgot["forgotten"] == 1 and forgot["erased"] is True
    other = cli(store_file, "memory-get", "--id", stored["id"], extra_env={**HOST, "DATALOG_MEMORY_SESSION_ID": "x",
                                                                       "SYMBOLIC_MEMORY_PROJECT_REMOTE": "/elsewhere"})
    assert other.returncode == 1 and "existence_error(memory" in other.stderr
    bad = cli(store_file, "memory-remember", "--memory", "x", "--projections", "[not json", extra_env=HOST)
    assert bad.returncode == 2


def test_cli_reads_the_exact_text_from_standard_input(store_file):
    text = "line one\r\n\ttabbed ✓\n\ntrailing newline kept\n"
    stored = subprocess.run([*COMMAND, "--db", store_file, "memory-remember", "--memory", "-", "--json"],
                            input=text.encode("utf-8"), capture_output=True, cwd=ROOT, env=env(HOST), timeout=120)
    assert stored.returncode == 0, stored.stderr
    ident = json.loads(stored.stdout)["id"]
    got = subprocess.run([*COMMAND, "--db", store_file, "memory-get", "--id", ident], capture_output=True, cwd=ROOT,
                         env=env(HOST), timeout=120)
    assert got.stdout == text.encode("utf-8")
    bad = subprocess.run([*COMMAND, "--db", store_file, "memory-remember", "--memory", "-"], input=b"\xff\xfe bad",
                         capture_output=True, cwd=ROOT, env=env(HOST), timeout=120)
    assert bad.returncode == 1 and b"UTF-8" in bad.stderr
