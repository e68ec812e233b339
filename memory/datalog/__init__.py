"""The Datalog engine: normalization, analysis, planning, semi-naive evaluation, demand, proofs.

Its public face is what this module exports: programs are built with `parse_program` or a
`Normalizer` and checked with `analyze`; predicates are `Pred`s; `evaluate_program` computes a
program's model from a loader of stored tuples within a `Budget`, and the `Model` answers which
tuples hold and, through `Model.provenance`, which rule derived each and at what stamp; `solve`
and `explain` answer goals; `BodyMatcher` finds the ways a rule's body holds in a model.
"""

from .analysis import analyze, stratify
from .budget import Budget
from .engine import EdbLoader, Model, Provenance, evaluate, evaluate_program
from .predicates import Pred
from .program import Normalizer, Program, parse_program
from .proofs import ProofNode
from .queries import Answers, explain, solve

__all__ = ["Answers", "Budget", "EdbLoader", "Model", "Normalizer", "Pred", "Program", "ProofNode", "Provenance",
           "analyze", "evaluate", "evaluate_program", "explain", "parse_program", "solve", "stratify"]
