"""MCP over Streamable HTTP (`serve --http`) and the bearer tokens that name its callers.

In process: the tokens (hashed, constant-time checked, revocable, administered with memory_admin and audited),
when a token is required, and the CLI's refusals. Through the real surface, a few server processes driven by
the mcp package's Streamable HTTP client: the same tools, results and errors as stdio in both eras, callers
with different tokens isolated as the authority rules isolate them, refused requests touching nothing, a
revoked token refused at once, an acknowledged write surviving kill -9; and the official conformance suite."""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
import subprocess
from pathlib import Path

import anyio
import httpx2
import pytest
from hypothesis import given, settings, strategies as st

from conftest import by_hand
from memory import Memory
from memory.errors import Conflict, InvalidArguments, InvalidConfiguration, PermissionDenied
from memory.access.context import ADMIN, READ, CallerContext
from memory.access.tokens import DEFAULT_TOKEN_CAPABILITIES, caller_of, is_loopback, token_required, verify
from memory.workers.protocol import Call, decode, encode
from surfaces import ERAS, ROOT, HttpServer, cli, run_http_client
from test_official_clients import CALLS, TS_CLIENT, _check_text, _node_ready, assert_answers_to_calls

CONFORMANCE = ROOT / "tests" / "conformance"
MODERN = "2026-07-28"


def _audit(path: str) -> list[tuple]:
    with by_hand(path) as conn:
        return conn.execute("SELECT actor, operation, payload FROM audit_log ORDER BY id").fetchall()


def _count(path: str, table: str) -> int:
    with by_hand(path) as conn:
        return conn.execute(f"SELECT count(*) FROM {table}").fetchone()[0]


# --- tokens, in process ------------------------------------------------------------------------------

def test_a_token_is_kept_only_as_its_digest_and_names_its_caller(store_file):
    store_file = store_file
    with Memory(store_file) as m:
        issued = m.create_token("ci runner", "alice", project_remote="git@example.com:team/app.git")
        secret = issued.token.split("_", 2)[2]  # the secret itself may hold "_" (URL-safe base64)
        row = verify(m.repository, issued.token)
        assert row is not None and row.id == issued.row.id and row.principal == "alice"
        assert set(row.capabilities) == DEFAULT_TOKEN_CAPABILITIES and ADMIN not in row.capabilities
        assert caller_of(row, "http-1") == CallerContext(
            principal="alice", session_id="http-1", project_remote="git@example.com:team/app.git",
            capabilities=DEFAULT_TOKEN_CAPABILITIES)
        listed = m.list_tokens()
    # Neither the token nor its secret is anywhere in the files; the audit row names the token's id and caller.
    for suffix in ("", "-wal"):
        if os.path.exists(store_file + suffix):
            data = Path(store_file + suffix).read_bytes()
            assert issued.token.encode() not in data and secret.encode() not in data
    assert [r.id for r in listed] == [issued.row.id]
    (actor, operation, payload), = [r for r in _audit(store_file) if r[1].startswith("token_")]
    assert (actor, operation) == ("local_mcp", "token_create")
    assert json.loads(payload)["principal"] == "alice" and row.digest not in payload


def test_wrong_malformed_and_revoked_tokens_are_refused(store_file):
    store_file = store_file
    with Memory(store_file) as m:
        issued = m.create_token("a", "alice")
        other = m.create_token("b", "bob")
        token_id, secret = issued.token.split("_")[1], issued.token.split("_", 2)[2]
        for wrong in ("", "Bearer", issued.token + "x", issued.token[:-1], issued.token.upper(),
                      f"dlm_{other.row.id}_{secret}",  # another token's id with this secret
                      f"dlm_{token_id}_{other.token.split('_', 2)[2]}", "x" * 100_000):
            assert verify(m.repository, wrong) is None, wrong[:80]
        m.revoke_token(issued.row.id)
        assert verify(m.repository, issued.token) is None
        assert verify(m.repository, other.token).principal == "bob"
        before = _audit(store_file)
        with pytest.raises(Conflict):
            m.revoke_token(issued.row.id)
        assert _audit(store_file) == before
        assert [(r.id, r.revoked_by is not None) for r in m.list_tokens()] == [(issued.row.id, True),
                                                                               (other.row.id, False)]
    assert [r[1] for r in _audit(store_file)] == ["token_create", "token_create", "token_revoke"]


def test_only_the_issued_token_verifies(store_file):
    store_file = store_file
    """The law: a text names a caller exactly when it is a valid token's own text."""
    with Memory(store_file) as m:
        issued = m.create_token("a", "alice")

        token_id, secret = issued.row.id, issued.token.split("_", 2)[2]
        urlsafe = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-"
        @settings(max_examples=60, deadline=None)
        @given(presented=st.text(max_size=80)
               | st.text(alphabet=urlsafe, min_size=43, max_size=43).map(lambda s: f"dlm_{token_id}_{s}")
               | st.text(alphabet="0123456789abcdef", min_size=12, max_size=12).map(lambda i: f"dlm_{i}_{secret}"))
        def law(presented):
            assert (verify(m.repository, presented) is not None) == (presented == issued.token)

        law()
        assert verify(m.repository, issued.token).id == issued.row.id


def test_a_revoked_token_stays_revoked_in_the_database(store_file):
    store_file = store_file
    with Memory(store_file) as m:
        issued = m.create_token("a", "alice")
        m.revoke_token(issued.row.id)
    for change in ("revoked_at = NULL", "principal = 'mallory'", "capabilities = '[\"memory_admin\"]'"):
        with pytest.raises(Exception, match="can only be revoked"), by_hand(store_file) as conn:  # sqlite3 or psql
            conn.execute(f"UPDATE access_tokens SET {change}")


def test_token_administration_needs_memory_admin_and_bad_input_changes_nothing(store_file):
    store_file = store_file
    with Memory(store_file) as admin:
        issued = admin.create_token("a", "alice")
    before = (_audit(store_file), _count(store_file, "access_tokens"))
    with Memory(store_file, context=CallerContext(capabilities=frozenset({READ}))) as m:
        for attempt in (lambda: m.create_token("b", "bob"), m.list_tokens, lambda: m.revoke_token(issued.row.id)):
            with pytest.raises(PermissionDenied):
                attempt()
    with Memory(store_file) as m:
        for bad in ({"principal": "a/b"}, {"principal": " alice"}, {"principal": "al ice"}, {"principal": ""},
                    {"name": "x\ny"}, {"capabilities": ["memory_raed"]}, {"source_class": "trusted"},
                    {"project_remote": ""}):
            arguments = {"name": "n", "principal": "p", **bad}
            with pytest.raises(InvalidArguments):
                m.create_token(**arguments)
    assert (_audit(store_file), _count(store_file, "access_tokens")) == before
    assert verify(Memory(store_file).repository, issued.token) is not None


def test_when_a_token_is_required(store_file):
    assert [is_loopback(h) for h in ("127.0.0.1", "127.9.9.9", "::1", "[::1]", "localhost", "0.0.0.0", "::",
                                     "10.0.0.5", "example.com")] == [True] * 5 + [False] * 4
    with Memory(store_file) as m:
        assert token_required(m.repository, "127.0.0.1", False) is False  # local, no token: like stdio
        for host, flag in (("127.0.0.1", True), ("0.0.0.0", False), ("example.com", False)):
            with pytest.raises(InvalidConfiguration, match="no valid access token"):
                token_required(m.repository, host, flag)
        issued = m.create_token("a", "alice")
        assert all(token_required(m.repository, host, flag) for host, flag in
                   (("127.0.0.1", False), ("127.0.0.1", True), ("0.0.0.0", False)))
        m.revoke_token(issued.row.id)  # only revoked ones left: as good as none
        with pytest.raises(InvalidConfiguration):
            token_required(m.repository, "0.0.0.0", False)


def test_cli_refuses_an_unauthenticated_remote_server_and_never_shows_a_token_again(store_file):
    for args in (("--host", "0.0.0.0"), ("--require-token",)):
        ran = cli(store_file, "serve", "--http", *args)
        assert ran.returncode == 2 and "no valid access token" in ran.stderr, ran
    ran = cli(store_file, "serve", "--require-token")
    assert ran.returncode == 2 and "add --http" in ran.stderr
    created = cli(store_file, "token", "create", "--name", "laptop", "--principal", "alice", "--capabilities",
                  "memory_read", check=True)
    token = created.stdout.strip()
    assert re.fullmatch(r"dlm_[0-9a-f]{12}_[A-Za-z0-9_-]{43}", token) and "not shown again" in created.stderr
    listed = cli(store_file, "token", "list", "--json", check=True)
    (record,) = json.loads(listed.stdout)
    assert record["capabilities"] == ["memory_read"] and record["revoked_at"] is None
    assert token not in listed.stdout and "digest" not in record
    assert token not in cli(store_file, "token", "list", check=True).stdout
    assert cli(store_file, "token", "revoke", record["id"], check=True).returncode == 0
    assert json.loads(cli(store_file, "token", "list", "--json", check=True).stdout)[0]["revoked_by"] == "local_mcp"
    assert cli(store_file, "token", "revoke", record["id"]).returncode == 1
    bad = cli(store_file, "token", "create", "--name", "x", "--principal", "a/b")
    assert bad.returncode == 2 and "'principal'" in bad.stderr


def test_a_call_carries_its_caller_to_the_worker():
    caller = CallerContext(principal="alice", session_id="http-1", project_remote="p1",
                           capabilities=frozenset({READ}))
    message = decode(encode(Call(7, "query_logic", {"goal": "p(X)"}, 0.5, caller).to_message()))
    assert Call.from_message(message).context == caller
    assert "context" not in Call(8, "query_logic", {}, 0.0).to_message()
    assert Call.from_message(decode(encode(Call(8, "query_logic", {}, 0.0).to_message()))).context is None


def test_each_caller_gets_its_own_memory_over_one_database(store_file):
    from memory.api import CallerMemories

    base = Memory(store_file)
    memories = CallerMemories(base, size=2)
    alice, bob, carol = (CallerContext(principal=p, session_id=f"http-{p}", project_remote=f"proj-{p}")
                         for p in ("alice", "bob", "carol"))
    assert memories.of(None) is base and memories.of(base.context) is base
    first = memories.of(alice)
    assert memories.of(alice) is first and first.context == alice and first.path == base.path
    first.memory_remember("alice's own", scope="session")
    assert memories.of(bob).memory_search("own")["results"] == []
    memories.of(carol)  # alice's Memory is the least recently used of two kept: closed, and still usable
    assert memories.of(alice) is not first
    assert [r["id"] for r in first.memory_search("own")["results"]] == \
        [r["id"] for r in memories.of(alice).memory_search("own")["results"]] != []
    memories.close()
    base.close()


# --- the server process -------------------------------------------------------------------------------

def _dump(tools) -> list[dict]:
    return [t.model_dump(mode="json", by_alias=True, exclude_none=True) for t in tools]


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
@pytest.mark.parametrize("era", ERAS)
def test_http_serves_what_stdio_serves_stops_abandoned_calls_and_keeps_acknowledged_writes(tmp_path, era):
    from mcp.shared.exceptions import MCPError

    from memory.mcp_server import mcp_tools

    db = str(tmp_path / "m.db")

    async def scenario(client):
        tools = (await client.list_tools()).tools
        results = [await client.call_tool(name, args) for name, args, _, _ in CALLS]
        try:
            await client.call_tool("no_such_tool", {})
            unknown = None
        except MCPError as exc:
            unknown = exc.error.code
        # A call the client gives up on stops its evaluation: the one worker is free for the next call at once
        # (were it still evaluating, that call would wait for it past its own budget: budget_exceeded).
        await client.call_tool("define_rule", {"head": "n(Y)", "body": "n(X), Y is X + 1"})
        await client.call_tool("remember_fact", {"fact": "n(0)"})
        with anyio.move_on_after(1.0) as abandoned:
            await client.call_tool("query_logic", {"goal": "n(X)"})
        after = await client.call_tool("query_logic", {"goal": "X = 1"})
        durable = await client.call_tool("remember_fact", {"fact": "durable(acknowledged)"})
        if era == "legacy":
            await client.set_logging_level("debug")  # this connection's threshold, no other's
        return tools, results, unknown, (abandoned.cancelled_caught, after), durable

    messages = []

    async def collect(params):
        messages.append(params.level)

    async def another(client):
        await client.call_tool("remember_fact", {"fact": "p("})  # an info message: below the default warning

    server = HttpServer(db, extra_env={"DATALOG_MEMORY_WORKERS": "1", "DATALOG_MEMORY_TIMEOUT_S": "8"})
    try:
        tools, results, unknown, (abandoned, after), durable = run_http_client(server.url, era, scenario)
        run_http_client(server.url, era, another, logging_callback=collect)
    finally:
        server.kill9()  # no shutdown, no checkpoint: the acknowledged write must already be on disk
    assert _dump(tools) == _dump(mcp_tools())  # the list stdio serves, definition for definition
    assert_answers_to_calls(results)
    assert unknown == -32602
    assert messages == []
    assert abandoned and not after.is_error and after.structured_content["bindings"] == [{"X": "1"}]
    assert not durable.is_error
    with sqlite3.connect(db) as conn:  # read as anyone would, after the kill
        assert conn.execute("SELECT count(*) FROM facts WHERE text = 'durable(acknowledged)'").fetchone() == (1,)


def _raw(url: str, token: str | None, body: dict, session: str | None = None,
         headers: dict | None = None) -> httpx2.Response:
    """One POST as a client sends it in the 2026-07-28 era (or with a session, the handshake era)."""
    headers = {"content-type": "application/json", "accept": "application/json, text/event-stream", **(headers or {})}
    if session is None:
        headers |= {"mcp-protocol-version": MODERN, "mcp-method": body["method"]}
        if body["method"] == "tools/call":
            headers["mcp-name"] = body["params"]["name"]
        body = {**body, "params": {**body.get("params", {}), "_meta": {
            "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "tests", "version": "1"}}}}
    else:
        headers |= {"mcp-protocol-version": "2025-11-25", "mcp-session-id": session}
    if token is not None:  # "Basic": a header of another scheme
        headers["authorization"] = "Basic dXNlcjpwYXNz" if token == "Basic" else f"Bearer {token}"
    return httpx2.post(url, headers=headers, json=body, timeout=30)


def _payload(response: httpx2.Response) -> dict:
    """The JSON-RPC answer of a response, sent as JSON or as the last event of an SSE stream."""
    if response.headers["content-type"].startswith("text/event-stream"):
        return json.loads([line for line in response.text.splitlines() if line.startswith("data:")][-1][5:])
    return response.json()


def _initialize(url: str, token: str) -> str:
    response = httpx2.post(url, timeout=30, json={
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}},
        headers={"content-type": "application/json", "accept": "application/json, text/event-stream",
                 "authorization": f"Bearer {token}"})
    assert response.status_code == 200, response.text
    return response.headers["mcp-session-id"]


def test_tokens_name_each_caller_and_nothing_else_does(tmp_path):
    from mcp.shared.exceptions import MCPError

    db = str(tmp_path / "team.db")
    tokens = {}
    for name, principal, project, caps in (("alice", "alice", "git@example.com:a.git", None),
                                           ("bob", "bob", "git@example.com:b.git", None),
                                           ("carol", "carol", "git@example.com:a.git", "memory_read")):
        args = ["token", "create", "--name", name, "--principal", principal, "--project", project]
        tokens[name] = cli(db, *args, *(["--capabilities", caps] if caps else []), check=True).stdout.strip()
    write = {"jsonrpc": "2.0", "id": 5, "method": "tools/call",
             "params": {"name": "remember_fact", "arguments": {"fact": "intruder(was_here)"}}}

    with HttpServer(db) as server:  # loopback, but tokens exist: every request needs one
        url = server.url
        before = (_audit(db), _count(db, "facts"))
        refused = [_raw(url, token, write) for token in (None, "Basic", "dlm_0", tokens["alice"] + "x",
                                                         tokens["alice"].replace("dlm_", "dlm_f"))]
        assert [r.status_code for r in refused] == [401] * 5
        assert all(r.headers["www-authenticate"].startswith("Bearer ") for r in refused)
        assert (_audit(db), _count(db, "facts")) == before  # refused requests touched nothing
        # OAuth/OIDC discovery probes (mcp-use sends these) and any other path are unknown here: 404, not 401,
        # with or without a token; the MCP endpoint itself still answers 401 without a valid one (above).
        base = url.rsplit("/mcp", 1)[0]
        for path in ("/.well-known/oauth-protected-resource", "/.well-known/oauth-protected-resource/mcp",
                     "/.well-known/oauth-authorization-server", "/.well-known/openid-configuration", "/register",
                     "/mcpx", "/"):
            for token in (None, tokens["alice"]):
                probe = httpx2.get(base + path, timeout=30,
                                   headers={"authorization": f"Bearer {token}"} if token else {})
                assert probe.status_code == 404, (path, probe.status_code, probe.text)
                assert "www-authenticate" not in probe.headers
        assert _count(db, "facts") == before[1]

        async def alice(client):
            remembered = await client.call_tool("memory_remember", {
                "memory": "The launch code is 4242", "scope": "project",
                "projections": [{"predicate": "launch_code", "arguments": [4242], "statement": "code 4242"}]})
            note = await client.call_tool("memory_remember", {"memory": "alice's session note", "scope": "session"})
            seen = await client.call_tool("query_logic", {"goal": "launch_code(X)"})  # in a worker, as alice
            return remembered.structured_content, note.structured_content, seen.structured_content

        remembered, note, seen = run_http_client(url, "legacy", alice, tokens["alice"])
        assert remembered["namespace"]["type"] == "project" and note["namespace"]["id"].startswith("http-")
        assert seen["bindings"] == [{"X": "4242"}]
        assert ("alice", "memory_remember") in [(a, o) for a, o, _ in _audit(db)]

        async def other(client):
            query = await client.call_tool("query_logic", {"goal": "launch_code(X)"})
            search = await client.call_tool("memory_search", {"query": "launch code"})
            got = await client.call_tool("memory_get", {"id": remembered["id"]})
            note_got = await client.call_tool("memory_get", {"id": note["id"]})
            facts = await client.call_tool("list_facts", {})
            written = await client.call_tool("remember_fact", {"fact": "bob_was_here(yes)"})
            listed = [str(r.uri) for r in (await client.list_resources()).resources]
            try:
                await client.read_resource(f"datalog-memory://memory/{note['id']}")
                read = None
            except MCPError as exc:
                read = exc.error.code
            return query, search, got, note_got, facts, written, (listed, read)

        for era in ERAS:  # bob (another project) sees none of alice's project or session memories
            query, search, got, note_got, facts, written, (listed, read) = run_http_client(url, era, other,
                                                                                          tokens["bob"])
            assert read == -32002 and not any(remembered["id"] in uri or note["id"] in uri for uri in listed)
            assert query.structured_content["bindings"] == [] and search.structured_content["results"] == []
            for hidden in (got, note_got):
                assert hidden.is_error and hidden.meta["datalog-memory/error"]["code"] == "not_found"
            assert "launch_code" not in facts.content[0].text and not written.is_error
        # carol shares alice's project but not her session, and may only read
        query, search, got, note_got, facts, written, (listed, read) = run_http_client(url, MODERN, other,
                                                                                      tokens["carol"])
        assert f"datalog-memory://memory/{remembered['id']}" in listed and read == -32002
        assert query.structured_content["bindings"] == [{"X": "4242"}] and not got.is_error
        assert note_got.is_error and written.is_error
        assert written.meta["datalog-memory/error"]["code"] == "permission_denied"

        # A session belongs to the token that opened it: another token asking for it finds no such session.
        session = _initialize(url, tokens["alice"])
        listing = {"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}}
        assert _raw(url, tokens["bob"], listing, session).status_code == 404
        # A 2026-07-28 request has no session: one naming a connection's session id still gets the token's own.
        remember = {"jsonrpc": "2.0", "id": 3, "method": "tools/call", "params": {
            "name": "memory_remember", "arguments": {"memory": "stateless note", "scope": "session"}}}
        forged = _raw(url, tokens["alice"], remember, headers={"mcp-session-id": session})
        assert forged.status_code == 200, forged.text
        alice_id = tokens["alice"].split("_")[1]
        assert _payload(forged)["result"]["structuredContent"]["namespace"]["id"] == f"token-{alice_id}"

        # Revoked: refused from the next request on, and the request touches nothing.
        cli(db, "token", "revoke", alice_id, check=True)
        before = (_audit(db), _count(db, "facts"))
        assert _raw(url, tokens["alice"], write).status_code == 401
        assert _raw(url, tokens["alice"], listing, session).status_code == 401
        with pytest.raises(Exception):  # noqa: B017  (whatever the SDK raises for a 401: the point is that it fails)
            run_http_client(url, "legacy", alice, tokens["alice"])
        assert (_audit(db), _count(db, "facts")) == before
        assert _raw(url, tokens["bob"], {**write, "params": {**write["params"], "arguments": {"fact": "ok(b)"}}}
                    ).status_code == 200


def test_typescript_sdk_client_over_http_with_a_token(tmp_path):
    """The official TypeScript client (what most hosts embed) over Streamable HTTP with a bearer token: the
    results stdio gives it, and each accepted by the client library."""
    if not _node_ready():
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the TypeScript client test: node or tests/ts_client/node_modules is missing")
        pytest.skip("node or the TypeScript MCP SDK (npm ci in tests/ts_client) is not installed")
    db = str(tmp_path / "ts.db")
    token = cli(db, "token", "create", "--name", "ts", "--principal", "ts_host", "--capabilities",
                "memory_read,memory_write_knowledge,memory_write_observations,memory_write_session,memory_admin",
                check=True).stdout.strip()
    with HttpServer(db) as server:
        plan = {"url": server.url, "headers": {"Authorization": f"Bearer {token}"},
                "calls": [{"name": n, "arguments": a} for n, a, _, _ in CALLS]}
        proc = subprocess.run(["node", str(TS_CLIENT / "client.mjs")], input=json.dumps(plan), capture_output=True,
                              text=True, timeout=120, cwd=TS_CLIENT)
        refused = subprocess.run(["node", str(TS_CLIENT / "client.mjs")], input=json.dumps({**plan, "headers": {}}),
                                 capture_output=True, text=True, timeout=120, cwd=TS_CLIENT)
    assert proc.returncode == 0, proc.stderr
    out = json.loads(proc.stdout)
    from memory.tools import REGISTRY
    assert out["tools"] == list(REGISTRY)
    for (name, _, is_error, expected), got in zip(CALLS, out["calls"]):
        assert "thrown" not in got and got["isError"] is is_error, (name, got)
        _check_text(got["text"], expected)
    assert refused.returncode != 0 and "401" in refused.stderr
    assert ("ts_host", "remember_fact") in [(a, o) for a, o, _ in _audit(db)]


# --- the official conformance suite ----------------------------------------------------------------------

def _suite_ready() -> bool:
    return shutil.which("node") is not None and (CONFORMANCE / "node_modules" / ".bin" / "conformance").exists()


def test_official_conformance_suite(store_file, tmp_path):
    """The pinned suite's active server scenarios against `serve --http` on each store: all pass but those listed
    in tests/conformance/expected-failures.yml, and those fail only because they call the suite's own fixtures."""
    if not _suite_ready():
        if os.environ.get("CI") == "true":
            pytest.fail("CI must run the conformance suite: node or tests/conformance/node_modules is missing")
        pytest.skip("node or the conformance suite (npm ci in tests/conformance) is not installed")
    out = tmp_path / "results"
    with HttpServer(store_file) as server:
        url = server.url.replace("127.0.0.1", "localhost")
        proc = subprocess.run([str(CONFORMANCE / "node_modules" / ".bin" / "conformance"), "server", "--url", url,
                               "--expected-failures", str(CONFORMANCE / "expected-failures.yml"), "-o", str(out)],
                              capture_output=True, text=True, timeout=300, cwd=CONFORMANCE)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    expected = {line.strip()[2:] for line in (CONFORMANCE / "expected-failures.yml").read_text().splitlines()
                if line.strip().startswith("- ")}
    fixture = re.compile(r"Unknown tool: test_|Unknown prompt: test_|-32601: Method not found|"
                         r"-32002: Resource not found: test://")
    passed = set()
    for folder in out.iterdir():
        scenario = re.sub(r"^server-|-\d{4}-\d\d-\d\dT.*$", "", folder.name)
        checks = json.loads((folder / "checks.json").read_text())
        failures = [c for c in checks if c["status"] == "FAILURE"]
        if scenario in expected:
            assert failures and all(fixture.search(c.get("errorMessage") or "") for c in failures), (scenario, failures)
        else:
            assert not failures, (scenario, failures)
            passed.add(scenario)
    assert {"server-initialize", "ping", "tools-list", "logging-set-level", "resources-list",
            "dns-rebinding-protection"} <= passed
