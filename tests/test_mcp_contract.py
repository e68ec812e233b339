"""The MCP contract over the whole registry and the in-process server: schemas hosts accept, error results
every client accepts, resources, logging, and discover agreeing with initialize."""

from typing import get_args

import anyio
import jsonschema
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from memory import Memory
from memory.mcp_server import ERROR_META, build_server
from memory.services.segments import SegmentService
from memory.access import CallerContext
from memory.tools import REGISTRY
from memory.tools.models import OutputPart, ToolOutput
from surfaces import ERAS, MODERN_META, RawServer


def _walk(schema, path="$"):
    yield path, schema
    if isinstance(schema, dict):
        for key, value in schema.items():
            yield from _walk(value, f"{path}.{key}")
    elif isinstance(schema, list):
        for i, value in enumerate(schema):
            yield from _walk(value, f"{path}[{i}]")


@pytest.mark.parametrize("name", list(REGISTRY))
def test_no_schema_uses_a_type_list_with_null(name):
    """`"type": [X, "null"]` is rejected by some hosts' schema subsets: optional properties instead."""
    spec = REGISTRY[name]
    for which, schema in (("input", spec.input_schema), ("output", spec.output_schema)):
        for path, node in _walk(schema):
            if isinstance(node, dict) and isinstance(node.get("type"), list):
                pytest.fail(f"{name} {which} schema {path} has a type list {node['type']}")


def _in_process(memory, era, scenario, **client_options):
    async def main():
        async with Client(build_server(memory), mode=era, **client_options) as client:
            return await scenario(client)
    return anyio.run(main)


@pytest.mark.parametrize("era", ERAS)
def test_optional_outputs_are_left_out_and_results_match_their_schemas(store_file, era):
    memory = Memory(store_file)

    async def scenario(client):
        return (await client.call_tool("explain_why", {"fact": "p(a)"}),
                await client.call_tool("get_persistence_status", {}),
                await client.call_tool("define_rule", {"head": "h(X)", "body": "p(X)"}))
    unproven, status, rule = _in_process(memory, era, scenario)
    # the reference's text, then our note (p/1 has no facts or rules)
    assert unproven.content[0].text.split("\n")[0] == '{"fact":"p(a)","proven":false,"proof_tree":null}'
    assert "proof_tree" not in unproven.structured_content and "detailed_tree" not in unproven.structured_content
    assert "name" not in rule.structured_content
    for name, result in (("explain_why", unproven), ("get_persistence_status", status), ("define_rule", rule)):
        jsonschema.validate(result.structured_content, REGISTRY[name].output_schema)


def _result_models(model, seen):
    """The result model and every result model nested in its fields, at any depth."""
    if model in seen:
        return
    seen.add(model)
    yield model
    for field in model.model_fields.values():
        for inner in _inner_types(field.annotation):
            if isinstance(inner, type) and issubclass(inner, (ToolOutput, OutputPart)):
                yield from _result_models(inner, seen)


def _inner_types(annotation):
    yield annotation
    for arg in get_args(annotation):
        yield from _inner_types(arg)


def test_every_result_model_at_any_depth_leaves_out_optional_values_it_lacks():
    """A null where the published schema says an object broke the official client (detect without a window):
    every result model, nested ones included, leaves an optional field without a value out."""
    models = set()
    for spec in REGISTRY.values():
        list(_result_models(spec.output_model, models))
    nested = [m for m in models if issubclass(m, OutputPart)]
    assert nested, "the registry has nested result models"
    for model in models:
        optional = [n for n, f in model.model_fields.items() if not f.is_required()]
        required = set(model.model_fields) - set(optional)
        dumped = model.model_construct(**dict.fromkeys(optional)).model_dump(exclude=required)
        assert not set(optional) & set(dumped), (model.__name__, dumped)


@pytest.mark.parametrize("era", ERAS)
def test_detect_without_a_window_matches_its_schema_through_the_client(store_file, era):
    memory = Memory(store_file)
    memory.remember(["account:admin", "host:db01"], 1_780_000_000, 0.9, "failed_login")

    async def scenario(client):
        await client.call_tool("enable_toolsets", {"enable": ["evidence"]})
        return await client.call_tool("detect", {})
    result = _in_process(memory, era, scenario)
    assert not result.is_error, result.content[0].text
    assert "window" not in result.structured_content["summary"]
    jsonschema.validate(result.structured_content, REGISTRY["detect"].output_schema)


@pytest.mark.parametrize("era", ERAS)
def test_internal_failures_are_error_results_and_the_server_keeps_serving(store_file, era, monkeypatch):
    memory = Memory(store_file)
    monkeypatch.setattr(SegmentService, "list_memories", lambda self: 1 / 0)

    async def scenario(client):
        return await client.call_tool("list_memories", {}), await client.call_tool("echo", {"message": "on"})
    failed, echoed = _in_process(memory, era, scenario)
    assert failed.is_error and failed.structured_content is None
    assert failed.content[0].text == "InternalError: ZeroDivisionError: division by zero"
    assert failed.meta[ERROR_META]["code"] == "internal_error"
    assert echoed.content[0].text == "on"


@pytest.mark.parametrize("era", ERAS)
def test_unknown_tools_stay_protocol_errors(store_file, era):
    async def scenario(client):
        with pytest.raises(MCPError) as info:
            await client.call_tool("no_such_tool", {})
        return info.value
    assert _in_process(Memory(store_file), era, scenario).error.code == -32602


@pytest.mark.parametrize("era", ERAS)
def test_resources_list_and_read_only_what_the_caller_may_read(store_file, era):
    mine = CallerContext.from_env({"DATALOG_MEMORY_SESSION_ID": "mine"})
    theirs = CallerContext.from_env({"DATALOG_MEMORY_SESSION_ID": "theirs"})
    with Memory(store_file, context=theirs) as other:
        hidden = other.memory_remember("their secret")["id"]
    memory = Memory(store_file, context=mine)
    exact = "  exact  text,\nwith 'quotes' and ünïcode  "
    ident = memory.memory_remember(exact)["id"]
    memory.remember_fact("p(a)")
    memory.define_rule("q(X)", "p(X)")

    sqlite = memory.store.dialect == "sqlite"  # only an SQLite store has a schema text (PostgreSQL: psql's \d)
    schema = ["datalog-memory://schema"] if sqlite else []
    GUIDES = ["datalog-memory://guide/conventions", "datalog-memory://guide/tools"]  # noqa: N806
    async def scenario(client):
        listed = await client.list_resources()
        templates = await client.list_resource_templates()
        texts = {uri: (await client.read_resource(uri)).contents[0]
                 for uri in ["datalog-memory://segment/default", f"datalog-memory://memory/{ident}", *schema]}
        if not sqlite:
            with pytest.raises(MCPError, match="schema resource shows SQLite's schema text"):
                await client.read_resource("datalog-memory://schema")
        refused = []
        for uri in (f"datalog-memory://memory/{hidden}", "datalog-memory://memory/mem_nope",
                    "datalog-memory://segment/nowhere", "datalog-memory://other"):
            with pytest.raises(MCPError) as info:
                await client.read_resource(uri)
            refused.append((info.value.error.code, info.value.error.message))
        return listed, templates, texts, refused
    listed, templates, texts, refused = _in_process(memory, era, scenario)
    uris = [str(r.uri) for r in listed.resources]
    assert uris == [*GUIDES, *schema, "datalog-memory://segment/default", f"datalog-memory://memory/{ident}"]
    assert listed.next_cursor is None
    assert {t.uri_template for t in templates.resource_templates} == {
        "datalog-memory://segment/{name}", "datalog-memory://memory/{id}"}
    assert texts[f"datalog-memory://memory/{ident}"].text == exact
    assert texts["datalog-memory://segment/default"].text.splitlines()[1:] == ["p(a).", "q(X) :- p(X)."]
    assert texts["datalog-memory://segment/default"].mime_type == "text/x-prolog"
    assert not sqlite or "CREATE TABLE source_memories" in texts["datalog-memory://schema"].text
    assert [code for code, _ in refused] == [-32002] * 4
    # an invisible memory and an unknown one are refused alike: no existence oracle
    assert refused[0][1].replace(hidden, "ID") == refused[1][1].replace("mem_nope", "ID")


def test_resource_listing_pages_through_many_memories(store_file):
    from memory.resources import PAGE, list_resources
    memory = Memory(store_file)
    for i in range(PAGE + 5):
        memory.memory_remember(f"note {i}")
    first, cursor = list_resources(memory, None)
    second, end = list_resources(memory, cursor)
    assert len([r for r in first if "/memory/" in r.uri]) == PAGE and end is None
    assert len(second) == 5 and {r.uri for r in first}.isdisjoint(r.uri for r in second)


@pytest.mark.filterwarnings("ignore:The logging capability is deprecated")
def test_logging_capability_in_the_handshake_era(store_file):
    messages = []

    async def collect(params):
        messages.append((params.level, params.data))

    async def scenario(client):
        await client.call_tool("remember_fact", {"fact": "p("})  # a tool error: info, below the default warning
        await client.set_logging_level("debug")
        await client.call_tool("remember_fact", {"fact": "p(a)"})
        await client.call_tool("remember_fact", {"fact": "p("})
        await client.set_logging_level("error")
        await client.call_tool("remember_fact", {"fact": "p("})
    _in_process(Memory(store_file), "legacy", scenario, logging_callback=collect)
    assert [(level, data["tool"]) for level, data in messages] == [("debug", "remember_fact"), ("info", "remember_fact")]
    assert messages[1][1]["error"] == "syntax_error" and messages[1][1]["message"].startswith("SyntaxError: ")


def test_logging_in_the_stateless_era_is_a_per_request_opt_in(store_file):
    messages = []

    async def collect(params):
        messages.append(params.level)

    async def scenario(client):
        await client.call_tool("remember_fact", {"fact": "p("})
    _in_process(Memory(store_file), "2026-07-28", scenario, logging_callback=collect, log_level="info")
    assert messages == ["info"]


def test_discover_and_initialize_agree(store_file):
    server = RawServer(store_file)
    discover = server.request({"jsonrpc": "2.0", "id": 1, "method": "server/discover", "params": {"_meta": MODERN_META}})
    server.close()
    server = RawServer(store_file)
    init = server.request({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "raw", "version": "1"}}})
    server.close()
    versions = discover["result"]["supportedVersions"]
    assert "2025-11-25" in versions and "2026-07-28" in versions and init["result"]["protocolVersion"] in versions
    assert discover["result"]["capabilities"] == init["result"]["capabilities"]
    assert init["result"]["capabilities"]["tools"] == {"listChanged": True}  # enable_toolsets changes the list
    assert "resources" in init["result"]["capabilities"] and "logging" in init["result"]["capabilities"]


@pytest.mark.parametrize("era", ERAS)
def test_a_failed_folder_is_reopened_on_the_next_call_and_status_tells_the_truth(tmp_path, era):
    """Reproducer: a file named .datalog-memory where the folder should be broke every later call."""
    blocker = tmp_path / ".datalog-memory"
    blocker.write_text("not a folder")
    memory = Memory(str(blocker / "memory.db"))

    async def scenario(client):
        out = [await client.call_tool("get_persistence_status", {}),
               await client.call_tool("remember_fact", {"fact": "p(a)"}),
               await client.call_tool("remember_fact", {"fact": "p(a)"})]
        blocker.unlink()  # the user fixes the folder: the server carries on without a restart
        out += [await client.call_tool("remember_fact", {"fact": "p(a)"}),
                await client.call_tool("query_logic", {"goal": "p(X)"}),
                await client.call_tool("get_persistence_status", {})]
        return out
    degraded, failed, again, stored, queried, healthy = _in_process(memory, era, scenario)
    assert degraded.structured_content["status"] == "degraded"
    assert "is a file where the database's folder should be" in degraded.structured_content["problem"]
    for result in (failed, again):
        assert result.meta[ERROR_META]["code"] == "storage_error" and "FileExistsError" in result.content[0].text
    assert stored.content[0].text == "Asserted: p(a)" and queried.content[0].text == '[{"X":"a"}]'
    assert healthy.structured_content["status"] == "active" and "problem" not in healthy.structured_content


def test_kb_overview_reports_real_snapshots_and_health_and_clamps_sample_size(store_file):
    from memory.tools import call_tool
    memory = Memory(store_file)
    memory.remember_fact("p(a)")
    memory.remember_fact("p(b)")
    memory.remember_fact("p(c)")
    empty = call_tool(memory, "get_kb_overview", {}).structured
    assert empty["snapshots"] == {"count": 0, "latest": None, "latest_at": None}
    assert empty["persistence"]["healthy"] is True
    memory.save_snapshot("first")
    memory.save_snapshot("second")
    memory.save_snapshot("a_last")  # the latest is the last taken, not the last by name
    for size, samples in ((-5, 0), (1000, 3), (1, 1)):
        view = call_tool(memory, "get_kb_overview", {"sample_size": size}).structured
        assert len(view["predicates"][0]["samples"]) == samples
    assert view["snapshots"]["count"] == 3 and view["snapshots"]["latest"] == "a_last"
    assert view["snapshots"]["latest_at"] == memory.list_snapshots()["snapshots"][-1]["created_at"]
    import os
    if memory.store.dialect != "sqlite":  # what follows is about the file's folder
        return
    os.chmod(os.path.dirname(store_file), 0o500)  # the folder becomes read-only: no longer healthy
    try:
        if not os.access(os.path.dirname(store_file), os.W_OK):  # (root ignores permissions: nothing to see then)
            assert call_tool(memory, "get_kb_overview", {}).structured["persistence"]["healthy"] is False
    finally:
        os.chmod(os.path.dirname(store_file), 0o700)


def test_update_fact_on_a_fact_believed_only_through_an_assumption_agrees_with_forget_fact(store_file):
    """Reproducer: update_fact said `No matching clause` where forget_fact said the fact is still believed."""
    from memory.tools import call_tool
    memory = Memory(store_file)
    memory.assume_fact("server(alpha, v1)", "maintenance")
    updated = call_tool(memory, "update_fact", {"old_fact": "server(alpha, v1)", "new_fact": "server(alpha, v2)"})
    assert updated.text == ("Updated: server(alpha, v1) -> server(alpha, v2); "
                            "still believed through other supports: server(alpha, v1)")
    assert updated.structured["kept"] == ["server(alpha, v1)"] and updated.structured["removed"] == []
    assert memory.query_logic("server(alpha, X)").total == 2
    assert memory.get_belief_status("server(alpha, v1)")["justifications"] == ["maintenance"]
    forgotten = memory.forget_fact("server(alpha, v1)")
    assert not forgotten.removed  # forget_fact says the same: still believed through the assumption
    memory.retract_assumption("maintenance")
    assert [b["X"] for b in memory.query_logic("server(alpha, X)").bindings] == ["v2"]


def test_explain_why_text_names_every_leafs_supports(store_file):
    """Reproducer: the text (what hosts show the model) dropped the supports; only structuredContent had them."""
    import json as _json

    from memory.tools import call_tool
    memory = Memory(store_file)
    tag = call_tool(memory, "remember", {"members": ["drone:a", "sector:1"], "event_ts": 1780000000}).structured
    memory.assume_fact("hostile(sector1)", "intel")
    memory.remember_fact("hostile(sector1)")
    memory.define_rule("alert(E)", "member(E, 'drone:a'), hostile(sector1)")
    ident = tag["hedge_tag"].split("-")[1]
    explained = call_tool(memory, "explain_why", {"fact": f"alert({ident})"})
    tree = _json.loads(explained.text)["proof_tree"]
    leaves = {child["goal"]: child["supports"] for child in tree["children"]}
    assert leaves == {f"member({ident}, 'drone:a')": [tag["hedge_tag"].replace("HEDGE", "observation:HEDGE")],
                      "hostile(sector1)": ["assumption:intel", "asserted"]}  # in the order they were given
    nodes = explained.structured["proof_nodes"]
    assert [nodes[i]["supports"] for i in nodes[0]["children"]] == list(leaves.values())
