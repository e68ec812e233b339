"""The proof view (memory/knowledge/proof_view.py): one typed step, every shape a reply shows built from it."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from memory import Memory
from memory.knowledge import proof_view
from memory.knowledge.proof_view import Evidence, ProofStep
from memory.tools.knowledge import ProofNode

GOALS = st.sampled_from(["p(a)", "q(a, b)", "r", "'odd atom'(1)", "s([1, 2])"])


def _leaf() -> st.SearchStrategy[ProofStep]:
    fact = st.builds(lambda g, s, seg: ProofStep(g, "fact", supports=s, memory=seg), GOALS,
                     st.lists(st.sampled_from(["asserted", "assumption:a", "source:mem_1"]), max_size=2),
                     st.none() | st.just("work"))
    other = st.builds(lambda g, k: ProofStep(g, k), GOALS, st.sampled_from(["builtin", "negation", "aggregate"]))
    return fact | other


def _rule(children: st.SearchStrategy[list[ProofStep]]) -> st.SearchStrategy[ProofStep]:
    return st.builds(lambda g, c, i, t: ProofStep(g, "rule", f"{g} :- body{i}", i, c, truncated=t),
                     GOALS, children, st.integers(1, 9), st.booleans())


STEPS = st.recursive(_leaf(), lambda inner: _rule(st.lists(inner, min_size=0, max_size=3)), max_leaves=12)


def _same(a: ProofStep, b: ProofStep) -> bool:
    pairs = [(a, b)]
    while pairs:
        x, y = pairs.pop()
        if (x.goal, x.kind, x.rule_applied, x.rule_id, x.truncated, x.supports, x.memory) != \
                (y.goal, y.kind, y.rule_applied, y.rule_id, y.truncated, y.supports, y.memory) \
                or len(x.children) != len(y.children):
            return False
        pairs += list(zip(x.children, y.children))
    return True


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_the_flat_list_reads_back_as_the_same_steps(root):
    """What the CLI and the explorer receive (proof_nodes) is the proof the service built, step for step."""
    nodes = proof_view.flat(root)
    assert len(nodes) == sum(1 for _ in root.walk())
    assert all(child > index for index, node in enumerate(nodes) for child in node["children"])  # root first
    assert _same(proof_view.from_flat(nodes), root)


@settings(max_examples=150, deadline=None)
@given(STEPS)
def test_the_nested_shapes_agree_with_the_flat_one(root):
    flat = proof_view.flat(root)
    detailed = proof_view.detailed(root)
    reference = proof_view.reference(root)
    text = proof_view.text_tree(root)
    pending = [(0, detailed, reference, text)]
    while pending:
        index, d, r, t = pending.pop()
        node = flat[index]
        assert {k: v for k, v in d.items() if k != "children"} == {k: v for k, v in node.items() if k != "children"}
        assert set(r) <= {"goal", "rule_applied", "children", "truncated"} and r["goal"] == node["goal"]
        assert t.get("supports") == node.get("supports")
        pending += [(c, *trio) for c, *trio in zip(node["children"], d["children"], r["children"], t["children"])]


def test_every_key_of_a_node_is_in_the_published_model():
    step = ProofStep("p(a)", "fact", supports=["asserted"], memory="work", memories=[], rule_id=3, truncated=True)
    assert set(proof_view.flat(step)[0]) <= set(ProofNode.model_fields)


@settings(max_examples=100, deadline=None)
@given(STEPS)
def test_the_evidence_graph_lists_premises_before_conclusions(root):
    nodes, edges = proof_view.evidence_graph(root, {})
    ids = [n["id"] for n in nodes]
    assert ids == [f"n{i}" for i in range(1, len(nodes) + 1)] and len(nodes) == sum(1 for _ in root.walk())
    assert all(ids.index(e["from"]) < ids.index(e["to"]) for e in edges)
    assert len(edges) == len(nodes) - 1  # a tree: every node but the root proves one parent
    assert nodes[-1]["fact"] == root.goal


def test_conclusions_shown_twice_share_one_step_tag():
    leaf = ProofStep("e(1)", "evidence", confidence=0.5,
                     evidence=Evidence("HEDGE-1", 1, "f", 0, ["a"], 0.5, "h"))
    inner = ProofStep("q(1)", "rule", "q(X) :- e(X)", 2, [leaf], confidence=0.5, label="rule:2")
    step_of: dict[str, str] = {}
    first, _ = proof_view.evidence_graph(ProofStep("p(1)", "rule", "p(X) :- q(X)", 1, [inner], label="rule:1"),
                                         step_of)
    second, _ = proof_view.evidence_graph(inner, step_of)
    assert [n.get("step_tag") for n in first] == [None, "STEP-1", "STEP-2"]
    assert second[-1]["step_tag"] == "STEP-1" and first[0]["hedge_tag"] == "HEDGE-1"


def test_an_explanation_carries_the_typed_proof_and_its_shapes(tmp_path):
    with Memory(str(tmp_path / "m.db")) as m:
        m.remember_fact("edge(a, b)")
        m.define_rule("reach(X, Y)", "edge(X, Y)")
        explained = m.explain_why("reach(a, b)")
        assert explained.proof is not None and explained.proof.kind == "rule"
        assert [leaf.supports for leaf in explained.proof.leaves()] == [["asserted"]]
        assert explained.proof_tree == proof_view.reference(explained.proof)
        assert explained.detailed_tree["children"][0] == {"goal": "edge(a, b)", "rule_applied": "fact",
                                                          "kind": "fact", "children": [], "supports": ["asserted"]}
        assert m.explain_why("reach(b, a)").proof is None
