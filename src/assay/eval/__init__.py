"""Evaluation harness: benchmark cases with known defects, a deterministic matcher, scores, and
a noisy simulated reviewer to measure the ensemble's lift without a model.

Example::

    from assay.eval import EnsembleConfig, SimulatorConfig, run_eval

    report = run_eval(
        Path("bench/cases"),
        out_dir=Path("eval-out"),
        ensemble=EnsembleConfig(reps=3),
        simulator=SimulatorConfig(recall=0.6, fp_rate=1.0, seed=0),
    )
    report.summary.at(3).all.f1

See ``docs/eval.md``.
"""

from __future__ import annotations

from assay.eval.cases import (
    EvalCase,
    RecipeSource,
    RepositorySource,
    TruthDefect,
    load_case,
    load_cases,
    parse_truth,
)
from assay.eval.command import EvalOptions, eval_command
from assay.eval.formats import (
    ExternalPullRequest,
    external_case,
    read_aacr_samples,
    read_martian_golden,
)
from assay.eval.judge import JudgeReply, JudgeVerdict
from assay.eval.matcher import (
    CATEGORIES,
    DEFAULT_WINDOWS,
    PRIMARY_WINDOW,
    MatchedPair,
    MatchPolicy,
    MatchResult,
    Predicted,
    canonical_category,
    categories_compatible,
    match_findings,
)
from assay.eval.report import LiftRow, LiftTable
from assay.eval.repos import CaseRepo, build_case_repo
from assay.eval.run import (
    EnsembleConfig,
    EvalReport,
    EvalRun,
    rescore,
    run_eval,
    run_lift,
)
from assay.eval.run_files import CaseReview
from assay.eval.scores import CaseScore, Rates, ScoreSummary, WindowScore
from assay.eval.simulator import (
    RESPONDERS,
    NoisyReviewer,
    SimulatedCase,
    SimulatedEndpoint,
    SimulatorConfig,
    StageContext,
)

__all__ = [
    "CATEGORIES",
    "DEFAULT_WINDOWS",
    "PRIMARY_WINDOW",
    "RESPONDERS",
    "CaseRepo",
    "CaseReview",
    "CaseScore",
    "EnsembleConfig",
    "EvalCase",
    "EvalOptions",
    "EvalReport",
    "EvalRun",
    "ExternalPullRequest",
    "JudgeReply",
    "JudgeVerdict",
    "LiftRow",
    "LiftTable",
    "MatchPolicy",
    "MatchResult",
    "MatchedPair",
    "NoisyReviewer",
    "Predicted",
    "Rates",
    "RecipeSource",
    "RepositorySource",
    "ScoreSummary",
    "SimulatedCase",
    "SimulatedEndpoint",
    "SimulatorConfig",
    "StageContext",
    "TruthDefect",
    "WindowScore",
    "build_case_repo",
    "canonical_category",
    "categories_compatible",
    "eval_command",
    "external_case",
    "load_case",
    "load_cases",
    "match_findings",
    "parse_truth",
    "read_aacr_samples",
    "read_martian_golden",
    "rescore",
    "run_eval",
    "run_lift",
]
