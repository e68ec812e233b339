"""The Datalog engine: normalization, analysis, planning, semi-naive evaluation, demand, proofs."""

from .analysis import analyze, stratify
from .budget import Budget
from .engine import Model, evaluate
from .program import Normalizer, Program, parse_program
from .proofs import ProofNode
from .queries import Answers, explain, solve

__all__ = ["Answers", "Budget", "Model", "Normalizer", "Program", "ProofNode", "analyze", "evaluate",
           "explain", "parse_program", "solve", "stratify"]
