"""The Datalog engine: normalization, analysis, planning, semi-naive evaluation, demand, proofs.

Its public face is what this module exports: programs are built with `parse_program` or a
`Normalizer` and checked with `analyze`; predicates are `Pred`s; `evaluate_program` computes a
program's model from a loader of stored tuples within a `Budget`, and the `Model` answers which
tuples hold and, through `Model.provenance`, which rule derived each and at what stamp; `solve`
and `explain` answer goals (`solve_kept` keeps the `Evaluation`, which `maintenance` brings up to date when
base facts change); `BodyMatcher` finds the ways a rule's body holds in a model, and
`goal_text` prints a predicate's tuple as a goal.
"""

from .analysis import analyze, stratify
from .budget import Budget
from .engine import EdbLoader, Model, Provenance, evaluate, evaluate_program
from .matching import BodyMatcher, goal_text
from .predicates import Pred
from .program import Normalizer, Program, Rule, parse_program
from .proofs import ProofNode
from .maintenance import BaseChange
from .queries import AllAnswers, Answers, Evaluation, explain, solve, solve_all, solve_kept

__all__ = ["AllAnswers", "Answers", "BaseChange", "BodyMatcher", "Budget", "EdbLoader", "Evaluation", "Model", "Normalizer", "Pred", "Program", "ProofNode",
           "Provenance", "Rule", "analyze", "evaluate", "evaluate_program", "explain", "goal_text", "parse_program",
           "solve", "solve_all", "solve_kept", "stratify"]
