"""The ``assay`` command line.

Exit codes: 0 done (whatever the verdict), 3 the verdict is BLOCKING and ``--fail-on blocking``
was given, 2 an error (bad options, not a repository, unknown ref, unreachable model, …).
"""

from __future__ import annotations

import json
import logging
import sys
from enum import StrEnum
from pathlib import Path
from typing import Annotated, NoReturn

import structlog
import typer
from rich.console import Console

from assay.checklists import load_builtin_catalogs, render_catalog_listing, resolve_catalogs
from assay.config import REPO_CONFIG_FILE, Settings, parse_repo_config
from assay.errors import AssayError
from assay.eval import EvalOptions, eval_command
from assay.forge.git import GitRepo
from assay.forge.local import GitRevisionReader, local_identity
from assay.llm.batch import import_batch_responses
from assay.model import RoundResult, Verdict
from assay.pipeline.stages import reply_schema, stage_names
from assay.render import (
    findings_json,
    inline_comments,
    render_followup,
    render_kpi_json,
    render_review,
    render_summary,
)
from assay.render.history import render_history, resolve_round
from assay.runner import LLMMode, LocalReviewRequest, review_local
from assay.store import PullRequestKey, Store

__all__ = ["app", "main"]

EXIT_ERROR = 2
EXIT_BLOCKING = 3

app = typer.Typer(
    name="assay",
    help="An AI code reviewer for pull requests.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
)
llm_app = typer.Typer(help="Model exchanges: import batch answers into the replay cache.")
app.add_typer(llm_app, name="llm")


class Lang(StrEnum):
    en = "en"
    zh = "zh"


class OutputFormat(StrEnum):
    md = "md"
    json = "json"


class FailOn(StrEnum):
    never = "never"
    blocking = "blocking"


class LLMOption(StrEnum):
    auto = "auto"
    off = "off"
    batch_export = "batch-export"


@app.command()
def review(
    repo: Annotated[Path, typer.Option(help="The git repository to review.")] = Path("."),
    base: Annotated[
        str | None,
        typer.Option(help="Base ref (default: the upstream, else origin/HEAD, else HEAD~1)."),
    ] = None,
    head: Annotated[str, typer.Option(help="Head ref to review.")] = "HEAD",
    out: Annotated[
        Path | None, typer.Option(help="Write review.md, summary.md, comments.json, … here.")
    ] = None,
    lang: Annotated[Lang | None, typer.Option(help="Output language (default: en).")] = None,
    output_format: Annotated[
        OutputFormat, typer.Option("--format", help="stdout: the review (md) or findings (json).")
    ] = OutputFormat.md,
    timezone: Annotated[
        str | None, typer.Option("--tz", help="Time zone of the Reviewed: line (UTC, UTC+8, …).")
    ] = None,
    fail_on: Annotated[
        FailOn, typer.Option(help="Exit 3 when the verdict is BLOCKING ('blocking').")
    ] = FailOn.never,
    llm: Annotated[
        LLMOption,
        typer.Option(
            help="auto: use the model if configured; off: static only; batch-export FILE."
        ),
    ] = LLMOption.auto,
    batch_file: Annotated[
        Path | None, typer.Option(help="File for --llm batch-export (or: --llm batch-export FILE).")
    ] = None,
    no_cache: Annotated[bool, typer.Option(help="Do not answer from the replay cache.")] = False,
    reps: Annotated[int | None, typer.Option(min=1, max=16, help="Discovery reps.")] = None,
    agentic_reps: Annotated[
        int | None, typer.Option(min=0, max=16, help="Reps that may use repository tools.")
    ] = None,
    block_support: Annotated[
        int | None, typer.Option(min=1, help="Votes a model P0/P1 needs to block.")
    ] = None,
    pr_id: Annotated[
        str | None, typer.Option(help="Identity of the PR across rounds (default: repo@branch).")
    ] = None,
    quiet: Annotated[bool, typer.Option("--quiet", "-q", help="No progress on stderr.")] = False,
    verbose: Annotated[
        bool, typer.Option("--verbose", "-v", help="Log every model call and analyzer run.")
    ] = False,
) -> None:
    """Review HEAD (or --head) of a local repository against its base."""
    configure_logging(verbose=verbose)
    errors = Console(stderr=True)
    settings = Settings()
    request = LocalReviewRequest(
        repo=repo,
        base=base,
        head=head,
        pr_id=pr_id,
        lang=lang.value if lang else None,
        reps=reps,
        agentic_reps=agentic_reps,
        block_support=block_support,
        llm_mode=_llm_mode(llm),
        batch_file=batch_file,
        no_cache=no_cache,
    )
    progress = None if quiet or not errors.is_terminal else _ConsoleProgress(errors)
    store = _open_store(settings)
    try:
        done = review_local(request, settings, store=store, progress=progress)
    except AssayError as error:
        _fail(error)
    finally:
        store.close()
    if done.exported is not None:
        errors.print(
            f"assay: {done.exported} model request(s) pending; written to {batch_file} "
            "(OpenAI Batch API input). Run the batch, then `assay llm import <output.jsonl>` "
            "and rerun this review to continue.",
            highlight=False,
        )
        return
    result = done.outcome.result
    chosen_lang = request.lang or done.config.review.lang
    tz = timezone or done.config.review.timezone
    try:
        review_text = render_review(result, lang=chosen_lang, tz=tz)
    except ValueError as error:  # an unknown time zone name
        _fail(AssayError(str(error)))
    if not result.findings and not result.full_files:
        errors.print("assay: the diff is empty: nothing to review.", highlight=False)
    if out is not None:
        _write_outputs(out, result, review_text, lang=chosen_lang)
    if output_format is OutputFormat.json:
        typer.echo(findings_json(result))
    else:
        typer.echo(review_text)
    if fail_on is FailOn.blocking and result.verdict is Verdict.BLOCKING:
        raise typer.Exit(EXIT_BLOCKING)


@llm_app.command("import")
def llm_import(
    file: Annotated[Path, typer.Argument(help="A Batch API output file (JSONL).")],
) -> None:
    """Load a Batch API output file into the replay cache; then rerun the review."""
    configure_logging(verbose=False)
    settings = Settings()
    store = _open_store(settings)
    try:
        imported = import_batch_responses(file, store.replay_cache)
    except AssayError as error:
        _fail(error)
    finally:
        store.close()
    typer.echo(f"imported {len(imported.exchanges)} answer(s) into the replay cache")
    for failure in imported.failures:
        typer.echo(
            f"line {failure.line}: {failure.custom_id}: not imported: {failure.message}", err=True
        )


@app.command()
def history(
    repo: Annotated[Path, typer.Option(help="The git repository.")] = Path("."),
    head: Annotated[str, typer.Option(help="The branch whose rounds to list.")] = "HEAD",
    pr_id: Annotated[str | None, typer.Option(help="Identity of the PR across rounds.")] = None,
    lang: Annotated[Lang, typer.Option(help="Output language.")] = Lang.en,
) -> None:
    """List the reviewed rounds of a pull request with verdicts and counts."""
    configure_logging(verbose=False)
    settings = Settings()
    store = _open_store(settings)
    try:
        key = _local_key(repo, head, pr_id)
        typer.echo(
            render_history(store.rounds.list_rounds(key), target=key.key, lang=lang.value), nl=False
        )
    except AssayError as error:
        _fail(error)
    finally:
        store.close()


@app.command()
def show(
    round_index: Annotated[
        int | None, typer.Argument(metavar="ROUND", help="Round number (default: the latest).")
    ] = None,
    repo: Annotated[Path, typer.Option(help="The git repository.")] = Path("."),
    head: Annotated[str, typer.Option(help="The branch whose rounds to show.")] = "HEAD",
    pr_id: Annotated[str | None, typer.Option(help="Identity of the PR across rounds.")] = None,
    lang: Annotated[Lang, typer.Option(help="Output language.")] = Lang.en,
    timezone: Annotated[str, typer.Option("--tz", help="Time zone of the Reviewed: line.")] = "UTC",
    out: Annotated[Path | None, typer.Option(help="Write every output file here too.")] = None,
) -> None:
    """Re-render a stored round (no model calls)."""
    configure_logging(verbose=False)
    settings = Settings()
    store = _open_store(settings)
    try:
        key = _local_key(repo, head, pr_id)
        available = [r.round_index for r in store.rounds.list_rounds(key)]
        chosen = resolve_round(round_index, available, target=key.key)
        result = store.rounds.load_round(key, chosen)
        assert result is not None  # resolve_round only returns stored rounds
        review_text = render_review(result, lang=lang.value, tz=timezone)
    except (AssayError, ValueError) as error:
        _fail(error if isinstance(error, AssayError) else AssayError(str(error)))
    finally:
        store.close()
    if out is not None:
        _write_outputs(out, result, review_text, lang=lang.value)
    typer.echo(review_text)


@app.command()
def checklists(
    repo: Annotated[
        Path | None, typer.Option(help="Also list the repository's own checklists (at --base).")
    ] = None,
    base: Annotated[str, typer.Option(help="Revision to read .assay.toml from.")] = "HEAD",
    lang: Annotated[Lang, typer.Option(help="Language of titles and items.")] = Lang.en,
) -> None:
    """List the checklist catalogs and their items."""
    configure_logging(verbose=False)
    try:
        if repo is None:
            catalogs = load_builtin_catalogs()
        else:
            with GitRepo.open(repo) as git:
                reader = GitRevisionReader(git, git.rev_parse(base))
                text = reader.read(REPO_CONFIG_FILE)
                config = parse_repo_config(text.decode("utf-8", errors="replace") if text else None)
                catalogs = resolve_catalogs(config.checklists, reader)
    except AssayError as error:
        _fail(error)
    typer.echo(render_catalog_listing(catalogs, lang=lang.value), nl=False)


class Checks(StrEnum):
    on = "on"
    off = "off"
    both = "both"


@app.command("eval")
def evaluate(
    cases: Annotated[
        Path | None, typer.Argument(help="Cases directory or .tar.gz (not needed with --rescore).")
    ] = None,
    out: Annotated[Path, typer.Option(help="Where scores, reviews and the store go.")] = Path(
        "eval-out"
    ),
    reps: Annotated[str, typer.Option(help="Rep counts, e.g. 1,3,5 (a lift table).")] = "1",
    block_support: Annotated[
        int | None, typer.Option(min=1, help="Votes to block (default: a majority of reps).")
    ] = None,
    checks: Annotated[Checks, typer.Option(help="Confirm and fact-check: on, off or both.")] = (
        Checks.on
    ),
    simulator: Annotated[bool, typer.Option(help="Review against the noisy simulator.")] = False,
    sim_recall: Annotated[float, typer.Option(help="Simulated per-rep recall.")] = 0.6,
    sim_fp: Annotated[float, typer.Option(help="Simulated false findings per rep and case.")] = 1.0,
    seed: Annotated[int, typer.Option(help="Simulator seed.")] = 0,
    judge: Annotated[bool, typer.Option(help="Also score with the LLM judge.")] = False,
    windows: Annotated[str, typer.Option(help="Matching windows in lines.")] = "0,3,10",
    window: Annotated[int, typer.Option(help="The headline matching window.")] = 3,
    lang: Annotated[Lang, typer.Option(help="Review language.")] = Lang.en,
    rescore: Annotated[
        bool, typer.Option(help="Re-score the run in --out without model calls.")
    ] = False,
    replay: Annotated[
        bool, typer.Option(help="With --rescore: review again from the replay cache.")
    ] = False,
) -> None:
    """Score reviews on benchmark cases with known defects (precision, recall, F1, lift)."""
    configure_logging(verbose=False)
    try:
        options = EvalOptions(
            cases=cases,
            out=out,
            reps=_numbers(reps, "--reps"),
            block_support=block_support,
            checks=checks.value,
            simulator=simulator,
            sim_recall=sim_recall,
            sim_fp=sim_fp,
            seed=seed,
            judge=judge,
            windows=_numbers(windows, "--windows"),
            primary_window=window,
            lang=lang.value,
            rescore=rescore,
            replay=replay,
        )
        code = eval_command(options, settings=Settings(), echo=typer.echo)
    except AssayError as error:
        _fail(error)
    raise typer.Exit(code)


def _numbers(text: str, option: str) -> tuple[int, ...]:
    try:
        return tuple(int(part) for part in text.split(",") if part.strip())
    except ValueError:
        _fail(AssayError(f"{option} takes comma-separated whole numbers, not {text!r}"))


@app.command()
def schema(
    stage: Annotated[str, typer.Argument(help=f"One of: {', '.join(stage_names())}.")],
) -> None:
    """Print the JSON schema of a stage's model reply."""
    try:
        schema_json = reply_schema(stage)
    except AssayError as error:
        _fail(error)
    typer.echo(json.dumps(schema_json, indent=2, ensure_ascii=False))


def configure_logging(*, verbose: bool) -> None:
    """Structured log lines go to stderr: errors only, or every event with ``--verbose``."""
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(
            logging.INFO if verbose else logging.ERROR
        ),
        logger_factory=structlog.PrintLoggerFactory(file=sys.stderr),
        cache_logger_on_first_use=False,
    )


def _write_outputs(out: Path, result: RoundResult, review_text: str, *, lang: str) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "review.md").write_text(review_text, encoding="utf-8")
    followup = render_followup(result, lang=lang)
    followup_path = out / "followup.md"
    if followup is not None:
        followup_path.write_text(followup, encoding="utf-8")
    elif followup_path.exists():
        followup_path.unlink()  # stale from an earlier BLOCKING run into the same folder
    comments = [c.model_dump(mode="json") for c in inline_comments(result, lang=lang)]
    (out / "comments.json").write_text(
        json.dumps(comments, indent=2, ensure_ascii=False) + "\n", encoding="utf-8"
    )
    (out / "summary.md").write_text(render_summary(result, lang=lang), encoding="utf-8")
    (out / "kpi.json").write_text(render_kpi_json(result) + "\n", encoding="utf-8")
    (out / "findings.json").write_text(findings_json(result) + "\n", encoding="utf-8")
    (out / "result.json").write_text(result.model_dump_json(indent=2) + "\n", encoding="utf-8")


def _local_key(repo: Path, head: str, pr_id: str | None) -> PullRequestKey:
    with GitRepo.open(repo) as git:
        return PullRequestKey(forge="local", repo=local_identity(git, head=head, pr_id=pr_id))


def _llm_mode(option: LLMOption) -> LLMMode:
    modes: dict[LLMOption, LLMMode] = {
        LLMOption.auto: "auto",
        LLMOption.off: "off",
        LLMOption.batch_export: "batch-export",
    }
    return modes[option]


def _open_store(settings: Settings) -> Store:
    try:
        return Store.open(settings.resolved_db_url())
    except AssayError as error:
        _fail(error)


def _fail(error: AssayError) -> NoReturn:
    message = str(error).splitlines()[0] if str(error) else type(error).__name__
    typer.echo(f"assay: error: {message}", err=True)
    raise typer.Exit(EXIT_ERROR)


class _ConsoleProgress:
    """Progress on stderr: the current stage, reps done, tokens so far."""

    def __init__(self, console: Console) -> None:
        self._console = console
        self._prompt_tokens = 0
        self._completion_tokens = 0

    def stage(self, name: str) -> None:
        self._console.print(f"[dim]assay:[/] {name}", highlight=False)

    def rep_done(self, done: int, total: int) -> None:
        self._console.print(f"[dim]assay:[/] discover {done}/{total} reps done", highlight=False)

    def tokens(self, prompt_tokens: int, completion_tokens: int) -> None:
        self._prompt_tokens += prompt_tokens
        self._completion_tokens += completion_tokens
        self._console.print(
            f"[dim]assay:[/] tokens so far: {self._prompt_tokens} prompt, "
            f"{self._completion_tokens} completion",
            highlight=False,
        )


def _rewrite_batch_export(argv: list[str]) -> list[str]:
    """Accept the documented ``--llm batch-export FILE`` (click options take one value)."""
    rewritten: list[str] = []
    index = 0
    while index < len(argv):
        arg = argv[index]
        following = argv[index + 1 : index + 3]
        if (
            arg == "--llm"
            and len(following) == 2
            and following[0] == "batch-export"
            and not following[1].startswith("-")
        ):
            rewritten += ["--llm", "batch-export", "--batch-file", argv[index + 2]]
            index += 3
            continue
        rewritten.append(arg)
        index += 1
    return rewritten


def main(argv: list[str] | None = None) -> None:
    """Console entry point."""
    args = _rewrite_batch_export(list(sys.argv[1:] if argv is None else argv))
    app(args=args, prog_name="assay")
