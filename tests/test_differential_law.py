"""The differential law: on generated programs of the whole dialect (recursion of every shape, stratified
negation, negated conjunctions, comparisons, arithmetic, aggregates over expressions in rules and queries,
bound and free goals) the engine answers exactly as an in-repository oracle, SWI-Prolog with tabling and
clingo (each where installed), refuses none of them, and every proof it gives checks: each leaf a stored
fact or a step that holds, each rule node its rule firing on its children.

The programs come from a fixed seed (`differential_programs.Generator`), so a failure names a program that
reproduces; DIFFERENTIAL_PROGRAMS and DIFFERENTIAL_SEED run more or others.
"""

from __future__ import annotations

import os
import random
from dataclasses import replace

import pytest

from memory.datalog import Budget, Pred, solve, solve_kept
from memory.datalog.maintenance import BaseChange
from memory.datalog.relations import StoredRelation
from memory.errors import DatalogMemoryError
from memory.terms import Compound, format_term, parse_clauses, parse_term

import datalog_oracle as oracle
import reference_systems as refs
from differential_programs import DERIVED, DOMAIN, LAYER, STORED, Generator, clingo_text
from engine_helpers import loader, program, proof

PROGRAMS = int(os.environ.get("DIFFERENTIAL_PROGRAMS", "1000"))
SEED = int(os.environ.get("DIFFERENTIAL_SEED", "33"))
PROOFS_PER_PROGRAM = 2
NAMES = {name for name, _ in STORED} | {name for layer in DERIVED for name, _ in layer}


class Case:
    """One generated program with the engine's answers to its queries."""

    def __init__(self, index: int, generated) -> None:
        self.index = index
        self.generated = generated
        self.text = generated.text()
        self.facts = generated.edb()
        self.refused: str | None = None
        self.ours: list = []  # per query: (variables, set of rows) or the error's message
        try:
            self.program = program(self.text)
        except DatalogMemoryError as exc:
            self.refused = exc.message
            return
        load = loader(self.facts)
        for goal in generated.queries:
            try:
                result = solve(self.program, parse_term(goal), load)
                self.ours.append((result.variables, set(result.rows)))
            except DatalogMemoryError as exc:
                self.ours.append(exc.message)

    def describe(self, j: int | None = None) -> str:
        query = f"\nquery: {self.generated.queries[j]}" if j is not None else ""
        return f"program {self.index} (seed {SEED}):\n{self.text}\nfacts: {self.facts}{query}"


@pytest.fixture(scope="module")
def cases() -> list[Case]:
    generator = Generator(SEED)
    return [Case(i, generator.program()) for i in range(PROGRAMS)]


def test_no_generated_program_is_refused_or_fails(cases):
    assert len(cases) >= min(PROGRAMS, 1000)
    for case in cases:
        assert case.refused is None, f"refused: {case.refused}\n{case.describe()}"
        for j, answer in enumerate(case.ours):
            assert not isinstance(answer, str), f"error: {answer}\n{case.describe(j)}"


def test_same_answers_as_the_oracle(cases):
    for case in cases:
        if case.refused is not None:
            continue
        model = oracle.evaluate(case.text, LAYER, case.facts)
        for j, (goal, answer) in enumerate(zip(case.generated.queries, case.ours)):
            if isinstance(answer, str):
                continue
            variables, rows = answer
            assert rows == oracle.answers(goal, variables, model), case.describe(j)


def _require(present: bool, what: str) -> None:
    """Skip without a reference system, except under CI (.ci/run installs them), where its absence fails."""
    if not present:
        if os.environ.get("CI"):
            pytest.fail(f"{what} is missing under CI")
        pytest.skip(f"{what} is not installed")


def test_same_answers_as_swi_prolog_with_tabling(cases):
    _require(refs.SWIPL is not None, "SWI-Prolog (apt-get install swi-prolog-nox)")
    batch, asked = [], []
    for case in cases:
        if case.refused is not None:
            continue
        prefix = f"p{case.index}_"
        queries = [(answer[0], _prefixed(goal, prefix))
                   for goal, answer in zip(case.generated.swi_queries, case.ours) if not isinstance(answer, str)]
        asked.append([j for j, answer in enumerate(case.ours) if not isinstance(answer, str)])
        batch.append((prefix, case.generated.preds, STORED,
                      case.generated.swi_facts(prefix) + "\n" + case.generated.text(prefix, swi=True), queries))
    theirs = refs.swi_answers(batch)
    live = [case for case in cases if case.refused is None]
    for k, case in enumerate(live):
        for position, j in enumerate(asked[k]):
            expected = theirs.get((k, position))
            assert expected is not None and expected != "error", f"SWI-Prolog: {expected}\n{case.describe(j)}"
            assert case.ours[j][1] == expected, case.describe(j)


def test_same_models_as_clingo(cases):
    _require(refs.clingo is not None, "clingo (pip install clingo)")
    compared = 0
    for case in cases:
        if case.refused is not None or not case.generated.clingo:
            continue
        model = refs.clingo_model(clingo_text(case.generated))
        for j, (name, arity) in enumerate(case.generated.preds):  # the first queries ask each relation in full
            assert case.ours[j][1] == model.get((name, arity), set()), case.describe(j)
        compared += 1
    assert compared >= len(cases) // 2


def test_every_proof_checks(cases):
    """Proofs of derived tuples: every leaf a stored fact or a builtin, negation or aggregate step that holds
    in the oracle's model, every rule node an instance of its rule whose body literals are its children, in
    order, nothing truncated and no auxiliary predicate shown."""
    rng = random.Random(SEED)
    checked = 0
    for case in cases:
        if case.refused is not None:
            continue
        model = oracle.evaluate(case.text, LAYER, case.facts)
        derived = [(name, row) for (name, arity), answer in zip(case.generated.preds, case.ours)
                   for row in sorted(answer[1], key=repr)]
        for name, row in rng.sample(derived, min(PROOFS_PER_PROGRAM, len(derived))):
            goal = format_term(Compound(name, row)) if row else name
            tree = proof(case.program, goal, case.facts)
            assert tree is not None, f"no proof of {goal}\n{case.describe()}"
            _check_tree(tree, case.facts, model, f"proof of {goal}\n{case.describe()}")
            checked += 1
    assert checked >= len(cases)


def test_order_dependent_programs_are_refused_or_answered_as_prolog_does(cases):
    """The same programs with a negation or an aggregate moved to the front of its rule's body, where Prolog
    runs it before anything is bound: the engine refuses the rule, saying why, or (when the move changed no
    variable's scope) answers as the oracle, which runs bodies in Prolog's order, does."""
    refused = agreed = 0
    for case in cases:
        variant = _moved_to_front(case.generated)
        if variant is None or case.refused is not None:
            continue
        text = variant.text()
        try:
            moved = program(text)
        except DatalogMemoryError as exc:
            assert "order-dependent rule" in exc.message or "unsafe rule" in exc.message, (exc.message, text)
            refused += 1
            continue
        try:
            model = oracle.evaluate(text, LAYER, case.facts)
        except oracle.OracleError:
            continue  # Prolog raises an error on this program: there is no answer to agree with
        for goal, answer in zip(variant.queries, case.ours):
            if isinstance(answer, str):
                continue
            rows = set(solve(moved, parse_term(goal), loader(case.facts)).rows)
            assert rows == oracle.answers(goal, answer[0], model), f"{goal}\n{text}"
        agreed += 1
    assert refused and agreed, (refused, agreed)


def _moved_to_front(generated):
    """The program with the first negation or aggregate of one rule moved to the front of its body (None when
    no rule has one)."""
    for k, (head, body) in enumerate(generated.rules):
        for i, g in enumerate(body):
            if g[0] in ("not", "agg") and i:
                rules = list(generated.rules)
                rules[k] = (head, [g] + body[:i] + body[i + 1:])
                return replace(generated, rules=rules)
    return None


MAINTAINED_EVERY = 3  # one program in so many is also maintained through changes of its stored facts
CHANGES = 3


def test_maintained_answers_equal_the_oracle(cases):
    """A goal's kept evaluation brought up to date after random additions and removals of stored facts
    (`Evaluation.update`, DRed) answers as the oracle does on the changed facts."""
    rng = random.Random(SEED)
    maintained = 0
    for case in cases[::MAINTAINED_EVERY]:
        if case.refused is not None:
            continue
        j = rng.choice([k for k in range(len(case.ours)) if not isinstance(case.ours[k], str)])
        goal, (variables, _) = case.generated.queries[j], case.ours[j]
        current = {key: set(ts) for key, ts in case.facts.items()}
        _, evaluation = solve_kept(case.program, parse_term(goal), loader(current), budget=Budget())
        if evaluation is None:
            continue
        try:
            for step in range(CHANGES):
                changes = {}
                for key in STORED:
                    removed = {t for t in current[key] if rng.random() < 0.25}
                    added = [t for t in {tuple(rng.choice(DOMAIN) for _ in range(key[1])) for _ in range(2)}
                             if t not in current[key]]
                    current[key] = (current[key] - removed) | set(added)
                    changes[Pred.stored(*key)] = BaseChange(added=added, removed=removed,
                                                            relation=StoredRelation(current[key]))
                rows = set(evaluation.update(changes, Budget()).rows)
                model = oracle.evaluate(case.text, LAYER, current)
                assert rows == oracle.answers(goal, variables, model), \
                    f"after change {step + 1}: {current}\n{case.describe(j)}"
        finally:
            evaluation.release()
        maintained += 1
    assert maintained >= len(cases) // MAINTAINED_EVERY // 2


def _check_tree(root, facts: dict, model: dict, where: str) -> None:
    stack = [root]
    while stack:
        node = stack.pop()
        assert not node.truncated and "$" not in node.goal, where
        goal = parse_term(node.goal)
        key = (goal.functor, len(goal.args)) if type(goal) is Compound else (goal, 0)
        row = goal.args if type(goal) is Compound else ()
        if node.kind == "fact":
            assert row in set(facts.get(key, ())), (node.goal, where)
            continue
        assert node.kind == "rule" and row in model.get(key, set()), (node.goal, where)
        (clause,) = parse_clauses(node.rule + ".")
        head, body = clause.args
        goals = _conjuncts(body)
        assert len(goals) == len(node.children), (node.rule, [c.goal for c in node.children], where)
        binding: dict = {}
        assert oracle.unify(head, goal, binding), (node.rule, node.goal, where)
        for literal, child in zip(goals, node.children):
            instance = parse_term(child.goal)
            assert oracle.unify(literal, instance, binding), (format_term(literal), child.goal, where)
            if child.kind in ("fact", "rule"):
                stack.append(child)
            else:
                assert child.kind in ("builtin", "negation", "aggregate"), (child.kind, where)
                assert not child.children and oracle.holds(instance, model), (child.goal, where)


def _conjuncts(body) -> list:
    out, stack = [], [body]
    while stack:
        term = stack.pop()
        if type(term) is Compound and term.functor == "," and len(term.args) == 2:
            stack.extend(reversed(term.args))
        else:
            out.append(term)
    return out


def _prefixed(goal: str, prefix: str) -> str:
    """A query with the program's predicates renamed as SWI-Prolog holds them."""
    def rename(term):
        if type(term) is Compound:
            args = tuple(rename(a) for a in term.args)
            name = prefix + term.functor if term.functor in NAMES else term.functor
            return Compound(name, args)
        if type(term) is str and term in NAMES:
            return prefix + term
        return term
    return format_term(rename(parse_term(goal)))


def test_the_prefixing_keeps_arithmetic_and_variables():
    assert _prefixed("a(X, _), aggregate_all(max(Y - X), e(X, Y), M)", "p1_") == \
        "p1_a(X, _), aggregate_all(max(Y - X), p1_e(X, Y), M)"
