"""Running an evaluation: build each case, review it through the public runner, score it.

Everything a run produces goes under ``out_dir``:

- ``assay.db``: the store, whose replay cache keeps every model exchange;
- ``eval.json``: the manifest (cases and their defects, configurations, simulator, model);
- ``reviews/<label>.json``: each case's round result and call records, per configuration;
- ``scores.json`` / ``scores.md`` (and ``lift.svg`` when several rep counts ran).

:func:`rescore` re-scores a stored run with new windows (or the judge) without any model call:
from the stored round results, or (``replay=True``) by reviewing every case again with the
endpoint pointed at a closed port, so every answer must come from the replay cache.
"""

from __future__ import annotations

import asyncio
import contextlib
import socket
import tempfile
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from assay.config import Settings
from assay.errors import AssayError, ConfigError, LLMUnreachable
from assay.eval.cases import EvalCase, TruthDefect, load_cases
from assay.eval.judge import JudgeVerdict, judge_many, verdict_result
from assay.eval.matcher import DEFAULT_WINDOWS, PRIMARY_WINDOW, Predicted, predicted_from_reported
from assay.eval.report import LiftTable, lift_table, write_outputs
from assay.eval.repos import build_case_repo
from assay.eval.run_files import (
    CaseReview,
    Manifest,
    StoredCase,
    StoredEnsemble,
    case_stub,
    db_url,
    read_manifest,
    read_reviews,
    write_manifest,
    write_reviews,
)
from assay.eval.scores import CaseScore, ReviewOutcome, ScoreSummary, score_case, summarize
from assay.eval.simulator import SimulatedCase, SimulatedEndpoint, SimulatorConfig
from assay.llm.client import LLMClient
from assay.runner import LocalReviewRequest, review_local
from assay.store import Store

__all__ = [
    "EnsembleConfig",
    "EvalReport",
    "EvalRun",
    "rescore",
    "run_eval",
    "run_lift",
]

Progress = Callable[[str], None]
Lang = Literal["en", "zh"]
Simulator = SimulatorConfig | SimulatedEndpoint | None
"""A simulator to start for the run, one already running (the caller owns it), or none."""
_CHECKS_OFF = "[review]\nconfirm = false\nfact_check = false\n"
"""The case repository's ``.assay.toml`` (at its base) for a run without confirm and fact-check."""


@dataclass(frozen=True)
class EnsembleConfig:
    """The ensemble settings one evaluation runs with.

    Args:
        reps: Independent discovery reps.
        block_support: Votes a model finding needs to block; ``None``: a majority of ``reps``
            (1 of 1, 2 of 3, 3 of 5), so that a single rep can block at all.
        checks: Run confirm and fact-check (the one toggle for both). Off, the case repository's
            ``.assay.toml`` turns both stages off, and by the gate's rule a model finding that
            was not confirmed and fact-checked cannot block.
        agentic_reps: Reps that may use repository tools; ``None``: the configuration's default.
    """

    reps: int = 1
    block_support: int | None = None
    checks: bool = True
    agentic_reps: int | None = None

    @property
    def support(self) -> int:
        return self.block_support if self.block_support is not None else self.reps // 2 + 1

    @property
    def label(self) -> str:
        label = f"reps{self.reps}-support{self.support}-{'checks' if self.checks else 'nochecks'}"
        return label if self.agentic_reps is None else f"{label}-agentic{self.agentic_reps}"


@dataclass(frozen=True)
class EvalReport:
    """The scores of one configuration."""

    label: str
    ensemble: EnsembleConfig
    summary: ScoreSummary
    cases: tuple[CaseScore, ...]


@dataclass(frozen=True)
class EvalRun:
    """Everything a run (or a re-score) produced."""

    reports: tuple[EvalReport, ...]
    out_dir: Path
    lift: LiftTable | None = None
    notes: tuple[str, ...] = ()


def run_eval(
    cases: Path,
    *,
    out_dir: Path,
    ensemble: EnsembleConfig | None = None,
    simulator: Simulator = None,
    settings: Settings | None = None,
    judge: bool = False,
    windows: Sequence[int] = DEFAULT_WINDOWS,
    primary_window: int = PRIMARY_WINDOW,
    lang: Lang = "en",
    progress: Progress | None = None,
) -> EvalReport:
    """Review every case once with one ensemble configuration and score it.

    Args:
        cases: A case directory, a directory of cases, or an archive (see ``eval.cases``).
        out_dir: Where the store, the reviews and the scores go (created if needed).
        ensemble: Reps, block support and checks; default one rep.
        simulator: Review against the noisy simulator instead of ``settings``' model: a
            configuration (the run starts and stops it) or a running endpoint (the caller's).
        settings: The model endpoint (``Settings()`` reads the environment); its ``db_url`` is
            replaced by ``out_dir/assay.db``.
        judge: Also ask the LLM judge (reported separately).
        windows: Line windows to score at.
        primary_window: The headline window.
        lang: Review language.
        progress: Called with one line per reviewed case.

    Returns:
        The configuration's scores (also written to ``out_dir``).

    Raises:
        ConfigError: Invalid cases, or no model configured.
        LLMUnreachable: The model endpoint cannot be reached.
    """
    run = _run(
        cases,
        out_dir=out_dir,
        ensembles=[ensemble or EnsembleConfig()],
        simulator=simulator,
        settings=settings,
        judge=judge,
        windows=windows,
        primary_window=primary_window,
        lang=lang,
        progress=progress,
    )
    return run.reports[0]


def run_lift(
    cases: Path,
    *,
    out_dir: Path,
    reps: Sequence[int] = (1, 3, 5),
    checks: Sequence[bool] = (True, False),
    block_support: int | None = None,
    simulator: Simulator = None,
    settings: Settings | None = None,
    judge: bool = False,
    windows: Sequence[int] = DEFAULT_WINDOWS,
    primary_window: int = PRIMARY_WINDOW,
    lang: Lang = "en",
    progress: Progress | None = None,
) -> EvalRun:
    """Measure the ensemble's lift: every rep count, with and without confirm and fact-check.

    Every configuration reviews the same cases with the same reviewer; the replay cache is
    shared, so rep 0 of the 5-rep run is the very answer of the 1-rep run (a paired
    comparison).

    Args:
        cases: As for :func:`run_eval`.
        out_dir: As for :func:`run_eval`; also gets ``lift.svg``.
        reps: Rep counts to compare.
        checks: Which check settings to run.
        block_support: Fixed votes to block; ``None``: a majority of each rep count.
        simulator, settings, judge, windows, primary_window, lang, progress: As for
            :func:`run_eval`.

    Returns:
        The run, with its lift table.
    """
    ensembles = [
        EnsembleConfig(reps=count, block_support=block_support, checks=with_checks)
        for with_checks in checks
        for count in reps
    ]
    return _run(
        cases,
        out_dir=out_dir,
        ensembles=ensembles,
        simulator=simulator,
        settings=settings,
        judge=judge,
        windows=windows,
        primary_window=primary_window,
        lang=lang,
        progress=progress,
    )


def rescore(
    out_dir: Path,
    *,
    windows: Sequence[int] = DEFAULT_WINDOWS,
    primary_window: int = PRIMARY_WINDOW,
    replay: bool = False,
    judge: bool | None = None,
    settings: Settings | None = None,
    progress: Progress | None = None,
) -> EvalRun:
    """Score a stored run again, without any new model call.

    Args:
        out_dir: A directory a run wrote.
        windows: Line windows to score at.
        primary_window: The headline window.
        replay: Review every case again from the replay cache (the endpoint is a closed port,
            so a missing exchange fails with ``LLMUnreachable`` instead of calling a model).
            Needs the cases where the manifest says they are. Without it, the stored round
            results are re-matched.
        judge: Ask the judge (answered from the replay cache only); ``None``: as the run did.
        settings: The endpoint to use for replay and judge; default a closed port, so an
            exchange missing from the cache fails instead of reaching a model. Its model name is
            always the run's (the cache keys include it).
        progress: Called with one line per re-reviewed case.

    Returns:
        The run's new scores (also written to ``out_dir``).

    Raises:
        ConfigError: ``out_dir`` holds no run.
        LLMUnreachable: ``replay`` or ``judge`` needed an exchange the cache does not hold.
    """
    manifest = read_manifest(out_dir)
    use_judge = manifest.judge if judge is None else judge
    endpoint = settings.llm_base_url if settings is not None else None
    replay_settings = (settings or Settings()).model_copy(
        update={
            "llm_base_url": endpoint or f"http://127.0.0.1:{_closed_port()}/v1",
            "llm_api_key": "none",
            "model": manifest.model,
            "llm_transport_retries": 0,
            "db_url": db_url(out_dir),
        }
    )
    ensembles = [
        EnsembleConfig(
            reps=stored.reps,
            block_support=stored.block_support,
            checks=stored.checks,
            agentic_reps=stored.agentic_reps,
        )
        for stored in manifest.configs
    ]
    if replay:
        return _run(
            Path(manifest.cases_path),
            out_dir=out_dir,
            ensembles=ensembles,
            simulator=None,
            settings=replay_settings,
            judge=use_judge,
            windows=windows,
            primary_window=primary_window,
            lang=manifest.lang,
            progress=progress,
            simulator_config=manifest.simulator,
        )
    cases = [case_stub(stored) for stored in manifest.cases]
    store = Store.open(db_url(out_dir))
    try:
        reviews_by_config = [read_reviews(out_dir, ensemble.label, cases) for ensemble in ensembles]
        if use_judge:
            reviews_by_config = [
                _judge_reviews(reviews, cases, replay_settings, store)
                for reviews in reviews_by_config
            ]
            for ensemble, reviews in zip(ensembles, reviews_by_config, strict=True):
                write_reviews(out_dir, ensemble.label, reviews)
    finally:
        store.close()
    reports = [
        _report(ensemble, cases, reviews, windows, primary_window)
        for ensemble, reviews in zip(ensembles, reviews_by_config, strict=True)
    ]
    return _finish(out_dir, reports, manifest.simulator, primary_window, tuple(manifest.notes))


# -- the run ---------------------------------------------------------------------------------


def _run(
    cases_path: Path,
    *,
    out_dir: Path,
    ensembles: Sequence[EnsembleConfig],
    simulator: Simulator,
    settings: Settings | None,
    judge: bool,
    windows: Sequence[int],
    primary_window: int,
    lang: Lang,
    progress: Progress | None,
    simulator_config: SimulatorConfig | None = None,
) -> EvalRun:
    if not ensembles:
        raise ConfigError("nothing to evaluate: no configuration")
    out_dir.mkdir(parents=True, exist_ok=True)
    notes: list[str] = []
    reviewer = simulator.config if isinstance(simulator, SimulatedEndpoint) else simulator
    reviewer = reviewer or simulator_config
    with tempfile.TemporaryDirectory(prefix="assay-eval-") as scratch:
        workdir = Path(scratch)
        cases = load_cases(cases_path, extract_to=workdir / "extracted")
        with contextlib.ExitStack() as stack:
            endpoint = (
                stack.enter_context(SimulatedEndpoint(simulator))
                if isinstance(simulator, SimulatorConfig)
                else simulator
            )
            run_settings = _run_settings(settings, endpoint, out_dir)
            if run_settings.llm() is None:
                raise ConfigError(
                    "no model configured: set ASSAY_MODEL and ASSAY_LLM_BASE_URL, or use the "
                    "simulator"
                )
            manifest = Manifest(
                cases_path=str(cases_path.resolve()),
                cases=[_stored_case(case) for case in cases],
                configs=[_stored_ensemble(ensemble) for ensemble in ensembles],
                simulator=reviewer,
                model=run_settings.model or "",
                lang=lang,
                judge=judge,
                notes=notes,
            )
            write_manifest(out_dir, manifest)
            store = Store.open(run_settings.resolved_db_url())
            stack.callback(store.close)
            reports = []
            for ensemble in ensembles:
                reviews = _review_cases(
                    cases, ensemble, run_settings, store, endpoint, workdir, lang, progress
                )
                if judge:
                    reviews = _judge_reviews(reviews, cases, run_settings, store, endpoint)
                write_reviews(out_dir, ensemble.label, reviews)
                reports.append(_report(ensemble, cases, reviews, windows, primary_window))
            if endpoint is not None and endpoint.unanswered:
                counts = ", ".join(f"{stage} ({n})" for stage, n in endpoint.unanswered.items())
                notes.append(
                    "the simulator has no responder for some stages, which therefore failed in "
                    f"the rounds: {counts}"
                )
                write_manifest(out_dir, manifest.model_copy(update={"notes": notes}))
    return _finish(out_dir, reports, reviewer, primary_window, tuple(notes))


def _stored_case(case: EvalCase) -> StoredCase:
    return StoredCase(
        name=case.name, language=case.language, title=case.title, defects=list(case.defects)
    )


def _stored_ensemble(ensemble: EnsembleConfig) -> StoredEnsemble:
    return StoredEnsemble(
        reps=ensemble.reps,
        block_support=ensemble.support,
        checks=ensemble.checks,
        agentic_reps=ensemble.agentic_reps,
        label=ensemble.label,
    )


def _review_cases(
    cases: Sequence[EvalCase],
    ensemble: EnsembleConfig,
    settings: Settings,
    store: Store,
    endpoint: SimulatedEndpoint | None,
    workdir: Path,
    lang: Lang,
    progress: Progress | None,
) -> list[CaseReview]:
    # The checks are turned off the way a repository would: in its .assay.toml, at the base.
    repo_config = None if ensemble.checks else _CHECKS_OFF
    reviews = []
    for number, case in enumerate(cases, start=1):
        repo = build_case_repo(case, workdir / ensemble.label, repo_config=repo_config)
        request = LocalReviewRequest(
            repo=repo.path,
            base=repo.base,
            head=repo.head,
            pr_id=f"eval:{ensemble.label}:{case.name}",
            lang=lang,
            reps=ensemble.reps,
            block_support=ensemble.support,
            agentic_reps=ensemble.agentic_reps,
        )
        if endpoint is not None:
            endpoint.review(SimulatedCase.of(case))
        try:
            review = _review_one(case, request, settings, store)
        finally:
            if endpoint is not None:
                endpoint.review(None)
        reviews.append(review)
        if progress is not None:
            outcome = (
                f"{len(review.result.findings)} findings, {len(review.result.blocking)} blocking"
                if review.result is not None
                else f"failed: {review.error}"
            )
            progress(f"[{ensemble.label}] {number}/{len(cases)} {case.name}: {outcome}")
    return reviews


def _review_one(
    case: EvalCase, request: LocalReviewRequest, settings: Settings, store: Store
) -> CaseReview:
    """Review one case; a failed review is recorded (and scored as all missed), except an
    unreachable endpoint, which would fail every case alike."""
    assert request.pr_id is not None  # set by the caller
    started = time.perf_counter()
    try:
        review = review_local(request, settings, store=store)
    except LLMUnreachable:
        raise
    except AssayError as error:
        return CaseReview(
            case=case.name, pr_id=request.pr_id, error=f"{type(error).__name__}: {error}"
        )
    result = review.outcome.result
    return CaseReview(
        case=case.name,
        pr_id=request.pr_id,
        result=result,
        calls=list(review.outcome.calls),
        wall_ms=result.kpi.wall_ms,
        total_ms=int((time.perf_counter() - started) * 1000),
    )


def _judge_reviews(
    reviews: Sequence[CaseReview],
    cases: Sequence[EvalCase],
    settings: Settings,
    store: Store,
    endpoint: SimulatedEndpoint | None = None,
) -> list[CaseReview]:
    llm_settings = settings.llm()
    if llm_settings is None:
        raise ConfigError("the judge needs a model")
    by_name = {case.name: case for case in cases}
    work = [
        (review.case, _findings(review), by_name[review.case].defects)
        for review in reviews
        if review.result is not None
    ]

    async def judge(
        items: Sequence[tuple[Sequence[Predicted], Sequence[TruthDefect]]],
    ) -> list[JudgeVerdict]:
        async with LLMClient(llm_settings, store.replay_cache) as client:
            return await judge_many(client, items)

    if endpoint is None:
        verdicts = asyncio.run(judge([(findings, truths) for _, findings, truths in work]))
    else:
        # The simulator answers for one case at a time: judge case by case.
        verdicts = []
        for name, findings, truths in work:
            endpoint.review(SimulatedCase(name=name, defects=tuple(truths)))
            try:
                verdicts.extend(asyncio.run(judge([(findings, truths)])))
            finally:
                endpoint.review(None)
    judged = {name: verdict for (name, _, _), verdict in zip(work, verdicts, strict=True)}
    store.record_calls(None, [call for verdict in verdicts for call in verdict.calls])
    return [
        review.model_copy(update={"judge": judged[review.case]})
        if review.case in judged
        else review
        for review in reviews
    ]


def _report(
    ensemble: EnsembleConfig,
    cases: Sequence[EvalCase],
    reviews: Sequence[CaseReview],
    windows: Sequence[int],
    primary_window: int,
) -> EvalReport:
    by_name = {case.name: case for case in cases}
    outcomes = [_outcome(review, by_name[review.case], ensemble.support) for review in reviews]
    scores = [
        score_case(outcome, windows=windows, primary_window=primary_window) for outcome in outcomes
    ]
    summary = summarize(scores, outcomes, primary_window=primary_window)
    return EvalReport(
        label=ensemble.label,
        ensemble=ensemble,
        summary=summary,
        cases=tuple(scores),
    )


def _outcome(review: CaseReview, case: EvalCase, support: int) -> ReviewOutcome:
    findings = tuple(_findings(review))
    judge = (
        verdict_result(review.judge, len(findings), len(case.defects))
        if review.judge is not None and review.judge.error is None
        else None
    )
    result = review.result
    return ReviewOutcome(
        case=case.name,
        language=case.language,
        truths=case.defects,
        findings=findings,
        verdict=result.verdict.value if result is not None else "ERROR",
        calls=tuple(review.calls),
        wall_ms=review.wall_ms,
        failures=tuple(f"{f.stage}: {f.error}" for f in result.failures) if result else (),
        error=review.error,
        judge_pairs=judge,
        support=support,
    )


def _findings(review: CaseReview) -> list[Predicted]:
    if review.result is None:
        return []
    return [predicted_from_reported(reported) for reported in review.result.findings]


def _finish(
    out_dir: Path,
    reports: Sequence[EvalReport],
    simulator: SimulatorConfig | None,
    primary_window: int,
    notes: tuple[str, ...],
) -> EvalRun:
    table = lift_table(reports, window=primary_window, simulator=simulator) if reports else None
    run = EvalRun(reports=tuple(reports), out_dir=out_dir, lift=table, notes=notes)
    write_outputs(run)
    return run


# -- settings, toggles, files ----------------------------------------------------------------


def _run_settings(
    settings: Settings | None, endpoint: SimulatedEndpoint | None, out_dir: Path
) -> Settings:
    base = settings or Settings()
    # The ensemble comes from the EnsembleConfig (and the case's .assay.toml) only: overrides
    # from the environment would make a run differ from its replay.
    update: dict[str, object] = {
        "db_url": db_url(out_dir),
        "reps": None,
        "agentic_reps": None,
        "block_support": None,
    }
    if endpoint is not None:
        # Retries only slow a simulator down: its failures are deterministic.
        update.update(
            llm_base_url=endpoint.base_url,
            llm_api_key="none",
            model=endpoint.model,
            llm_transport_retries=0,
        )
    return base.model_copy(update=update)


def _closed_port() -> int:
    # Bind, read the port, close: nothing listens there afterwards, so a request fails fast.
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])
