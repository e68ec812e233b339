"""The reference's examples replayed in order over MCP, in both protocol eras, checking the exact
texts and validating every structured result against the tool's output schema."""

import json

import anyio
import jsonschema
import pytest
from mcp import Client

from memory import Memory
from memory.tools import REGISTRY
from surfaces import error_of, server_params

# (tool, arguments, expected text, or a callable taking the text)
SCENARIO = [
    ("echo", {"message": "Hello, world!"}, "Hello, world!"),
    ("remember_fact", {"fact": "human(socrates)"}, "Asserted: human(socrates)"),
    ("define_rule", {"head": "mortal(X)", "body": "human(X)"}, "Asserted rule: mortal(X) :- human(X)"),
    ("query_logic", {"goal": "mortal(X)"}, '[{"X":"socrates"}]'),
    ("remember_fact", {"fact": "fruit(apple)"}, "Asserted: fruit(apple)"),
    ("remember_fact", {"fact": "fruit(banana)"}, "Asserted: fruit(banana)"),
    ("query_logic", {"goal": "fruit(X)"}, '[{"X":"apple"},{"X":"banana"}]'),
    ("query_logic", {"goal": "fruit(cherry)"}, "[]"),
    ("forget_fact", {"fact": "human(socrates)"}, "Retracted: human(socrates)"),
    ("query_logic", {"goal": "mortal(X)"}, "[]"),
    ("remember_fact", {"fact": "depends_on(a, b)"}, "Asserted: depends_on(a, b)"),
    ("remember_fact", {"fact": "depends_on(b, c)"}, "Asserted: depends_on(b, c)"),
    ("define_rule", {"head": "path(X, Y)", "body": "depends_on(X, Y)"}, "Asserted rule: path(X, Y) :- depends_on(X, Y)"),
    ("define_rule", {"head": "path(X, Z)", "body": "depends_on(X, Y), path(Y, Z)"},
     "Asserted rule: path(X, Z) :- depends_on(X, Y), path(Y, Z)"),
    ("trace_dependency", {"start_node": "a"}, '["b","c"]'),
    ("trace_dependency", {"start_node": "c"}, "[]"),
    ("remember_fact", {"fact": "untested(deploy_v3)"}, "Asserted: untested(deploy_v3)"),
    ("remember_fact", {"fact": "in_production(deploy_v3)"}, "Asserted: in_production(deploy_v3)"),
    ("define_rule", {"head": "risky(X)", "body": "untested(X), in_production(X)"},
     "Asserted rule: risky(X) :- untested(X), in_production(X)"),
    ("verify_consistency", {}, '{"violations":[]}'),
    ("define_rule", {"head": "integrity_violation(X)", "body": "risky(X)"},
     "Asserted rule: integrity_violation(X) :- risky(X)"),
    ("verify_consistency", {}, '{"violations":["deploy_v3"]}'),
    ("explain_why", {"fact": "risky(deploy_v3)"},
     '{"fact":"risky(deploy_v3)","proven":true,"proof_tree":{"goal":"risky(deploy_v3)","rule_applied":'
     '"risky(X) :- untested(X), in_production(X)","children":[{"goal":"untested(deploy_v3)","rule_applied":"fact",'
     '"children":[],"supports":["asserted"]},{"goal":"in_production(deploy_v3)","rule_applied":"fact","children":[],'
     '"supports":["asserted"]}]}}'),
    ("explain_why", {"fact": "risky(deploy_v4)"}, '{"fact":"risky(deploy_v4)","proven":false,"proof_tree":null}'),
    ("remember_fact", {"fact": "project(beta, api)"}, "Asserted: project(beta, api)"),
    ("remember_fact", {"fact": "project(beta, web)"}, "Asserted: project(beta, web)"),
    ("clear_context", {"category": "project(beta, _)"}, "Cleared all facts matching: project(beta, _) (2 fact(s) removed)"),
    ("clear_context", {"category": "nonexistent(_, _)"},
     "Cleared all facts matching: nonexistent(_, _) (0 fact(s) removed)"),
    ("remember_fact", {"fact": 'server(alpha, "1.0")'}, 'Asserted: server(alpha, "1.0")'),
    ("update_fact", {"old_fact": 'server(alpha, "1.0")', "new_fact": 'server(alpha, "2.0")'},
     'Updated: server(alpha, "1.0") -> server(alpha, "2.0")'),
    ("upsert_fact", {"fact": "deploy(prod, v1)"}, "Upserted: deploy(prod, v1)"),
    ("upsert_fact", {"fact": "deploy(prod, v2)"}, "Upserted: deploy(prod, v2)"),
    ("query_logic", {"goal": "deploy(prod, V)"}, '[{"V":"v2"}]'),
    ("remember_fact", {"fact": "task_status(f024, done)"}, "Asserted: task_status(f024, done)"),
    ("remember_fact", {"fact": "task_status(f025, in_progress)"}, "Asserted: task_status(f025, in_progress)"),
    ("define_rule", {"head": "active_work(X)", "body": "task_status(X, in_progress)"},
     "Asserted rule: active_work(X) :- task_status(X, in_progress)"),
    ("find_predicate_references", {"functor": "task_status", "arity": 2, "memory": "default"},
     '{"target":"task_status/2","memory":"default","rules":[{"head":"active_work(X)","body":"task_status(X, in_progress)",'
     '"memory":"default"}],"direct_facts_count":2,"facts_referenced_in_assumptions":[],"cross_memory_refs":[]}'),
    ("find_predicate_references", {"functor": "nonexistent_predicate"},
     '{"target":"nonexistent_predicate","memory":"default","rules":[],"direct_facts_count":0,'
     '"facts_referenced_in_assumptions":[],"cross_memory_refs":[]}'),
    ("rename_predicate", {"old_functor": "task_status", "new_functor": "feature_status", "arity": 2, "dry_run": True},
     '{"renamed_facts": 2, "rewritten_rule_bodies": 1, "affected_rule_ids": ["active_work(X)"], "cross_memory_impact": '
     '{"rewritten": [], "warnings": [], "skipped_readonly": []}, "is_error": false}'),
    ("query_logic", {"goal": "task_status(X, done)"}, '[{"X":"f024"}]'),
    ("rename_predicate", {"old_functor": "task_status", "new_functor": "feature_status", "arity": 2,
                          "memory": "default", "dry_run": False, "propagate_cross_memory_refs": False},
     '{"renamed_facts": 2, "rewritten_rule_bodies": 1, "affected_rule_ids": ["active_work(X)"], "cross_memory_impact": '
     '{"rewritten": [], "warnings": [], "skipped_readonly": []}, "is_error": false}'),
    ("query_logic", {"goal": "active_work(X)"}, '[{"X":"f025"}]'),
    ("query_logic", {"goal": "task_status(X, Y)"}, "[]"),
    ("assume_fact", {"fact": "available(server_a)", "assumption": "infra_healthy"},
     "Assumed: available(server_a) under assumption 'infra_healthy'"),
    ("assume_fact", {"fact": "available(server_a)", "assumption": "infra_healthy"},
     "Assumed: available(server_a) under assumption 'infra_healthy'"),
    ("assume_fact", {"fact": "available(server_b)", "assumption": "infra_healthy"},
     "Assumed: available(server_b) under assumption 'infra_healthy'"),
    ("assume_fact", {"fact": "approved(server_a)", "assumption": "budget_approved"},
     "Assumed: approved(server_a) under assumption 'budget_approved'"),
    ("get_belief_status", {"fact": "available(server_a)"},
     '{"status":"in","justifications":["infra_healthy"],"source":"assumption"}'),
    ("get_justification", {"assumption": "infra_healthy"}, '{"facts":["available(server_a)","available(server_b)"]}'),
    ("list_assumptions", {}, '{"assumptions":["infra_healthy","budget_approved"]}'),
    ("define_rule", {"head": "can_deploy(X)", "body": "available(X), approved(X)"},
     "Asserted rule: can_deploy(X) :- available(X), approved(X)"),
    ("get_belief_status", {"fact": "can_deploy(server_a)"},
     '{"status":"in","justifications":["budget_approved","infra_healthy"],"source":"derived"}'),
    ("retract_assumption", {"assumption": "infra_healthy"}, "Retracted assumption 'infra_healthy': 2 fact(s) removed"),
    ("get_belief_status", {"fact": "can_deploy(server_a)"}, '{"status":"out","justifications":[],"source":"unknown"}'),
    ("retract_assumptions", {"pattern": "budget_*"}, "Retracted pattern 'budget_*': 1 assumption(s) removed"),
    ("list_assumptions", {}, '{"assumptions":[]}'),
    ("get_knowledge_schema", {}, lambda text: json.loads(text)["total"] == 13),
    ("get_kb_overview", {"sample_size": 1}, lambda text: json.loads(text)["truncated"] is False),
    ("list_facts", {"functor": "deploy"}, "deploy(prod, v2)."),
    ("list_rules", {"limit": 1}, lambda text: text.startswith("mortal(X) :- human(X).\n% 6 more (total 7)")),
    ("materialize", {}, lambda text: text.startswith("Materialized ")),
    ("save_snapshot", {"name": "before_refactor"}, "Snapshot 'before_refactor' saved successfully."),
    ("save_snapshot", {"name": "daily_backup"}, "Snapshot 'daily_backup' saved successfully."),
    ("list_snapshots", {}, "Snapshots: [before_refactor, daily_backup]"),
    ("forget_fact", {"fact": "fruit(apple)"}, "Retracted: fruit(apple)"),
    ("restore_snapshot", {"name": "before_refactor"}, "Snapshot 'before_refactor' restored successfully."),
    ("query_logic", {"goal": "fruit(X)"}, '[{"X":"apple"},{"X":"banana"}]'),
    ("get_persistence_status", {}, lambda text: text.startswith("status: active\ndir: ")
     and "\nlast_snapshot: daily_backup\njournal_size: " in text),
    ("create_memory", {"name": "feature_auth"}, "Created memory 'feature_auth' (project scope)"),
    ("list_memories", {}, '{"memories":[{"name":"default","scope":"project","mounted":true,"mode":"rw"},'
                          '{"name":"feature_auth","scope":"project","mounted":false,"mode":null}]}'),
    ("mount_memory", {"name": "feature_auth"}, "Mounted memory 'feature_auth' (rw)"),
    ("remember_fact", {"fact": "task_done(login)", "memory": "feature_auth"}, "Asserted: task_done(login)"),
    ("define_rule", {"head": "shipped(X)", "body": "feature_auth:task_done(X)"},
     "Asserted rule: shipped(X) :- feature_auth:task_done(X)"),
    ("query_logic", {"goal": "shipped(X)"}, '[{"X":"login"}]'),
    ("mount_memory", {"name": "feature_auth", "mode": "ro"}, "Mounted memory 'feature_auth' (ro)"),
    ("unmount_memory", {"name": "feature_auth"}, "Unmounted memory 'feature_auth'"),
]

ERRORS = [
    ("forget_fact", {"fact": "human(socrates)"}, "No matching clause found for: human(socrates)"),
    ("update_fact", {"old_fact": 'server(alpha, "1.0")', "new_fact": 'server(alpha, "3.0")'},
     'No matching clause for: server(alpha, "1.0")'),
    ("rename_predicate", {"old_functor": "feature_status", "new_functor": "deploy", "arity": 2},
     "Cannot rename: deploy/2 already exists in memory 'default'"),
    ("rename_predicate", {"old_functor": "=", "new_functor": "eq", "arity": 2}, "Cannot rename ISO operator: =/2"),
    ("query_logic", {"goal": "x", "memory": "unknown_segment"}, "Memory not mounted: unknown_segment"),
    ("find_predicate_references", {"functor": "x", "memory": "unknown_segment"}, "Memory not mounted: unknown_segment"),
    ("retract_assumption", {"assumption": "nonexistent"}, "Unknown assumption 'nonexistent'"),
    ("restore_snapshot", {"name": "never_saved"}, "Snapshot not found: never_saved"),
    ("create_memory", {"name": "feature_auth"}, "Memory 'feature_auth' already exists"),
    ("unmount_memory", {"name": "default"}, "Cannot unmount the default memory"),
    ("mount_memory", {"name": "nowhere"}, "Memory 'nowhere' does not exist"),
]


@pytest.mark.parametrize("era", ["legacy", "2026-07-28"])
def test_reference_examples_in_order(store_file, era):
    async def scenario():
        async with Client(server_params(store_file), mode=era) as client:
            results = []
            for name, args, _ in SCENARIO + ERRORS:
                results.append(await client.call_tool(name, args))
            return results
    results = anyio.run(scenario)
    for (name, args, expected), result in zip(SCENARIO, results):
        text = result.content[0].text
        assert not result.is_error, (name, args, text)
        if callable(expected):
            assert expected(text), (name, text)
        else:  # the reference's text, then any notes of ours (`% warning: ...`, docs/differences.md)
            assert "\n".join(line for line in text.split("\n") if not line.startswith("% ")) == expected, \
                (name, args, text)
        jsonschema.validate(result.structured_content, REGISTRY[name].output_schema)
    for (name, _args, expected), result in zip(ERRORS, results[len(SCENARIO):]):
        assert result.is_error and result.content[0].text == expected, (name, result.content[0].text)
        assert error_of(result)["code"] in ("not_found", "conflict", "invalid_arguments")


def test_every_zpm_tool_is_exercised_over_mcp():
    """The zpm parity tools are replayed here; the source-memory and evidence tools have their own MCP tests."""
    ours = {"forget_rule", "enable_toolsets"}  # not zpm's: tests/test_forget_rule.py, tests/test_toolsets.py
    zpm = {name for name, spec in REGISTRY.items()
           if spec.handler.__module__.rsplit(".", 1)[-1] not in ("sources", "evidence") and name not in ours}
    assert {name for name, _, _ in SCENARIO} == zpm


def test_read_only_segments_refuse_every_mutation_tool(tmp_path):
    db = str(tmp_path / "ro.db")
    with Memory(db) as m:
        m.remember_fact("p(a)")
        with m.store.write() as conn:
            conn.execute("INSERT INTO segments (name, mode, created_at) VALUES ('frozen', 'ro', 'now')")
    mutations = [
        ("remember_fact", {"fact": "p(b)"}), ("forget_fact", {"fact": "p(a)"}),
        ("define_rule", {"head": "q(X)", "body": "p(X)"}), ("clear_context", {"category": "p(_)"}),
        ("update_fact", {"old_fact": "p(a)", "new_fact": "p(c)"}), ("upsert_fact", {"fact": "p(d)"}),
        ("rename_predicate", {"old_functor": "p", "new_functor": "r", "arity": 1}),
        ("assume_fact", {"fact": "p(e)", "assumption": "h"}), ("retract_assumption", {"assumption": "h"}),
        ("retract_assumptions", {"pattern": "*"}), ("restore_snapshot", {"name": "s"}),
    ]

    async def scenario():
        async with Client(server_params(db), mode="legacy") as client:
            return [await client.call_tool(name, {**args, "memory": "frozen"}) for name, args in mutations]
    for (name, _), result in zip(mutations, anyio.run(scenario)):
        assert result.is_error, name
        assert error_of(result)["code"] == "read_only"
        assert result.content[0].text in ("Memory is read-only", "Cannot rename in read-only memory: frozen")
