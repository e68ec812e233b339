"""A change that takes support away says which conclusions stopped holding, in its text and its structured result:
retracting assumptions, forgetting source memories (forget_rule: tests/test_forget_rule.py)."""

from memory.tools import call_tool


def test_retracting_an_assumption_names_the_facts_and_the_conclusions_that_fell(mem):
    mem.assume_fact("healthy(db)", "infra_ok")
    mem.assume_fact("healthy(cache)", "infra_ok")
    mem.remember_fact("healthy(cache)")  # asserted too: it stays
    mem.remember_fact("uses(api, db)")
    mem.remember_fact("uses(web, cache)")
    mem.define_rule("up(S)", "uses(S, D), healthy(D)")
    mem.define_rule("degraded(S)", "uses(S, _), \\+ up(S)")
    result = call_tool(mem, "retract_assumption", {"assumption": "infra_ok"})
    assert result.structured["removed"] == ["healthy(db)"] and result.structured["kept"] == ["healthy(cache)"]
    assert result.structured["withdrawn"] == ["up(api)"] and result.structured["withdrawn_total"] == 1
    assert result.text.splitlines() == [
        "Retracted assumption 'infra_ok': 1 fact(s) removed",
        "% removed (1): healthy(db)",
        "% still believed through other supports: healthy(cache)",
        "% no longer hold (1): up(api)",
    ]
    # what newly holds (degraded(api)) is not a withdrawal
    assert "degraded" not in result.text


def test_a_retraction_that_withdraws_nothing_says_so(mem):
    mem.assume_fact("p(a)", "h")
    result = call_tool(mem, "retract_assumptions", {"pattern": "h*"})
    assert result.text.endswith("% no conclusion stopped holding") and result.structured["withdrawn"] == []


def test_forgetting_a_memory_names_the_conclusions_resting_on_its_projections(mem):
    receipt = mem.memory_remember("We chose Redis for caching", projections=[
        {"predicate": "decision", "arguments": ["caching", "redis"], "statement": "caching uses redis"}])
    mem.define_rule("needs_ops(T)", "decision(_, T)")
    dry = call_tool(mem, "memory_forget", {"ids": [receipt["id"]], "dry_run": True})
    assert "withdrawn" not in dry.structured and dry.text.startswith("Would expire 1 memory(ies)")
    result = call_tool(mem, "memory_forget", {"ids": [receipt["id"]]})
    assert result.structured["removed_facts"] == ["decision(caching, redis)"]
    assert result.structured["withdrawn"] == ["needs_ops(redis)"]
    assert result.text.splitlines()[1:] == ["% facts removed (1): decision(caching, redis)",
                                            "% no longer hold (1): needs_ops(redis)"]
