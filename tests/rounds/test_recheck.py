"""Recheck of earlier open findings against a new head: shortcuts first, then the model."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from dataclasses import dataclass

from assay.diff import parse_unified_diff
from assay.diff.types import AnchorMode, FileDiff
from assay.forge.git import GitRepo
from assay.forge.local import GitRevisionReader
from assay.llm import LLMClient
from assay.model import (
    Claim,
    ClaimKind,
    ClosedFinding,
    Finding,
    FindingSource,
    RecheckStatus,
    ReportedFinding,
    Severity,
)
from assay.pipeline.recheck import RecheckOutcome, RecheckReply, recheck_open_findings
from assay.static import ChangedPythonFile, run_static_analysis
from assay.testing import (
    ChatRequest,
    Fault,
    ScriptedLLMServer,
    json_reply,
    script_by_stage,
    tool_call_reply,
)
from assay.tools import Toolbox, Workspace

from ._helpers import Repo, lines_text, reported, settings_for

LEAKY = "def load(path):\n    handle = open(path)\n    return handle.read()\n"
FIXED = "def load(path):\n    with open(path) as handle:\n        return handle.read()\n"
LEAK_TITLE = "File handle is never closed"


@dataclass
class Heads:
    repo: Repo
    old: str
    new: str


def _run(
    heads: Heads,
    findings: Sequence[ReportedFinding],
    *,
    server: ScriptedLLMServer | None = None,
    static_now: Sequence[Finding] | None = None,
    lang: str = "en",
    use_line_map: bool = True,
) -> RecheckOutcome:
    async def run() -> RecheckOutcome:
        with GitRepo.open(heads.repo.path) as git_repo:
            pr_files = _pr_files(git_repo, heads)
            reader = GitRevisionReader(git_repo, heads.new)
            line_map = heads.repo.line_map(heads.old, heads.new) if use_line_map else None
            if server is None:
                return await recheck_open_findings(
                    findings,
                    line_map=line_map,
                    head=reader,
                    head_sha=heads.new,
                    pr_files=pr_files,
                    client=None,
                    static_findings_now=static_now,
                    round_index=2,
                    lang="zh" if lang == "zh" else "en",
                )
            async with LLMClient(settings_for(server)) as client:
                return await recheck_open_findings(
                    findings,
                    line_map=line_map,
                    head=reader,
                    head_sha=heads.new,
                    pr_files=pr_files,
                    client=client,
                    static_findings_now=static_now,
                    round_index=2,
                    lang="zh" if lang == "zh" else "en",
                )

    return asyncio.run(run())


def _pr_files(git_repo: GitRepo, heads: Heads) -> tuple[FileDiff, ...]:
    """The PR's full diff: the root commit (the base) to the new head."""
    root = heads.repo.git("rev-list", "--max-parents=0", heads.new)
    return parse_unified_diff(git_repo.diff(root, heads.new))


def _leak_heads(repo: Repo, *, fixed: str = FIXED) -> Heads:
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.write("service.py", LEAKY)
    old = repo.commit("round 1")
    repo.write("service.py", fixed)
    return Heads(repo, old, repo.commit("round 2"))


def _leak() -> ReportedFinding:
    return reported(
        "f-leak",
        LEAK_TITLE,
        "service.py",
        2,
        severity=Severity.P1,
        evidence="service.py:2 opens the file and nothing closes it.",
        first_seen_round=1,
        blocking=True,
    )


def test_a_finding_whose_file_was_deleted_cannot_be_substantiated(repo: Repo) -> None:
    repo.write("old_module.py", lines_text(10))
    old = repo.commit()
    repo.remove("old_module.py")
    new = repo.commit()
    earlier = reported("f-gone", "Bad cast of qp_count", "old_module.py", 4, severity=Severity.P3)

    outcome = _run(Heads(repo, old, new), [earlier])

    (result,) = outcome.results
    assert result.status is RecheckStatus.CANNOT_SUBSTANTIATE
    assert result.method == "deleted"
    assert result.proof == (
        f"file old_module.py does not exist at head {new[:12]}; the code the finding is about "
        "was deleted with it."
    )
    assert outcome.closed == (
        ClosedFinding(
            id="f-gone",
            title="Bad cast of qp_count",
            severity=Severity.P3,
            path="old_module.py",
            line=4,
            status=RecheckStatus.CANNOT_SUBSTANTIATE,
            proof=result.proof,
            first_seen_round=1,
            closed_round=2,
        ),
    )
    assert outcome.still_open == ()
    assert outcome.kpi.cannot_substantiate == 1


def test_the_deleted_file_proof_in_chinese_reads_like_the_seed(repo: Repo) -> None:
    repo.write("gone.h", lines_text(5))
    old = repo.commit()
    repo.remove("gone.h")
    new = repo.commit()

    outcome = _run(Heads(repo, old, new), [reported("f", "t", "gone.h", 2)], lang="zh")

    assert outcome.results[0].proof == (
        f"文件 gone.h 在当前 head {new[:12]} 不存在，原发现所指的代码已随文件删除而消失。"
    )


def test_unchanged_lines_stay_open_without_a_model_call_and_move_with_the_file(
    repo: Repo, server: ScriptedLLMServer
) -> None:
    content = lines_text(30)
    repo.write("app.py", content)
    old = repo.commit()
    repo.write("app.py", "import os\nimport sys\n" + content)
    new = repo.commit()
    claim = Claim(kind=ClaimKind.LINE_CONTAINS, text="x", path="app.py", line=21, needle="line 21")
    earlier = reported(
        "f-open", "Retry loop never sleeps", "app.py", 20, end_line=21, claims=[claim]
    )

    outcome = _run(Heads(repo, old, new), [earlier], server=server)

    assert server.request_count == 0
    (result,) = outcome.results
    assert (result.status, result.method) == (RecheckStatus.STILL_OPEN, "unchanged")
    assert result.proof == (
        f"app.py lines 22-23 are unchanged since the previous round (head {new[:12]})."
    )
    (carried,) = outcome.still_open
    assert (carried.id, carried.first_seen_round) == ("f-open", 1)
    assert (carried.finding.line, carried.finding.end_line) == (22, 23)
    assert carried.finding.claims[0].line == 23
    assert not carried.on_changed_line
    # Re-anchored on this round's PR diff, which only adds the imports: the nearest hunk line.
    assert (carried.anchor.mode, carried.anchor.line) == (AnchorMode.NEAREST_HUNK, 5)
    assert outcome.kpi.still_open == 1 and outcome.unchecked == ()


def test_a_static_finding_is_rechecked_by_its_analyzer(repo: Repo) -> None:
    broken = "def total(values):\n    return summ(values)\n"
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.write("calc.py", broken)
    old = repo.commit("round 1")
    # The fix defines the name above the line: the cited line itself is unchanged.
    repo.write("calc.py", "summ = sum\n\n\n" + broken)
    new = repo.commit("round 2")
    undefined = reported(
        "f-821",
        "Undefined name `summ`",
        "calc.py",
        2,
        severity=Severity.P0,
        source=FindingSource.STATIC,
        rule="F821",
    )
    static_now = _static_findings(repo, new, "calc.py")

    outcome = _run(Heads(repo, old, new), [undefined], static_now=static_now)

    assert static_now == ()
    (result,) = outcome.results
    assert (result.status, result.method) == (RecheckStatus.FIXED, "static")
    assert result.proof == f"ruff no longer reports F821 at calc.py:5 (head {new[:12]})."
    assert [closed.id for closed in outcome.closed] == ["f-821"]


def test_a_static_finding_the_analyzer_still_reports_stays_open(repo: Repo) -> None:
    repo.write("README.md", "base\n")
    repo.commit("base")
    repo.write("calc.py", "def total(values):\n    return summ(values)\n")
    old = repo.commit("round 1")
    repo.write("calc.py", "# totals\ndef total(values):\n    return summ(values)\n")
    new = repo.commit("round 2")
    undefined = reported(
        "f-821",
        "Undefined name `summ`",
        "calc.py",
        2,
        severity=Severity.P0,
        source=FindingSource.STATIC,
        rule="F821",
    )
    static_now = _static_findings(repo, new, "calc.py")

    outcome = _run(Heads(repo, old, new), [undefined], static_now=static_now)

    assert [finding.rule for finding in static_now] == ["F821"]
    assert outcome.results[0].status is RecheckStatus.STILL_OPEN
    assert outcome.results[0].method == "static"
    assert outcome.still_open[0].finding.line == 3


def _static_findings(repo: Repo, head: str, path: str) -> tuple[Finding, ...]:
    with GitRepo.open(repo.path) as git_repo:
        reader = GitRevisionReader(git_repo, head)
        content = reader.read(path)
        assert content is not None
        changed = frozenset(range(1, content.count(b"\n") + 1))
        report = run_static_analysis(
            [ChangedPythonFile(path=path, content=content, changed_lines=changed)], reader
        )
    assert report.errors == ()
    return report.findings


def _recheck_reply(request: ChatRequest, status: str, proof: str, lines: list[int]) -> object:
    assert request.stage == "recheck"
    return json_reply({"status": status, "proof": proof, "lines": lines})


def test_the_model_proves_a_fix_citing_current_lines(repo: Repo, server: ScriptedLLMServer) -> None:
    heads = _leak_heads(repo)
    proof = "line 2 now opens the file in a `with` block, which closes it on every path."
    server.reply = script_by_stage(
        {"recheck": lambda request: _recheck_reply(request, "fixed", proof, [2, 3])}
    )

    outcome = _run(heads, [_leak()], server=server)

    (result,) = outcome.results
    assert (result.status, result.method, result.proof) == (RecheckStatus.FIXED, "llm", proof)
    assert result.current_lines == (2, 3)
    assert outcome.closed[0].proof == proof
    assert outcome.closed[0].severity is Severity.P1
    assert outcome.still_open == ()
    assert outcome.kpi.fixed == 1
    assert len(outcome.calls) == 1 and outcome.calls[0].stage == "recheck"
    (request,) = server.requests
    prompt = request.last_user_text
    # The model sees the finding, what changed since, and the current lines, numbered.
    assert LEAK_TITLE in prompt
    assert "|+    with open(path) as handle:" in prompt
    assert "2 |     with open(path) as handle:" in prompt
    assert request.response_format is not None
    schema = json.dumps(request.response_format)
    assert "cannot_substantiate" in schema


def test_the_model_says_still_open_and_the_finding_is_carried(
    repo: Repo, server: ScriptedLLMServer
) -> None:
    heads = _leak_heads(
        repo, fixed="def load(path):\n    handle = open(path, 'rb')\n    return handle.read()\n"
    )
    server.reply = script_by_stage(
        {
            "recheck": lambda request: _recheck_reply(
                request, "still_open", "line 2 still opens the file without closing it.", [2]
            )
        }
    )

    outcome = _run(heads, [_leak()], server=server)

    assert outcome.results[0].status is RecheckStatus.STILL_OPEN
    (carried,) = outcome.still_open
    assert (carried.id, carried.severity, carried.first_seen_round) == ("f-leak", Severity.P1, 1)
    assert carried.finding.line == 2
    assert carried.on_changed_line
    assert outcome.closed == ()


def test_an_invalid_reply_is_re_asked_and_then_used(repo: Repo, server: ScriptedLLMServer) -> None:
    heads = _leak_heads(repo)
    server.reply = script_by_stage(
        {
            "recheck": [
                json_reply({"status": "fixed", "proof": "it is fixed", "lines": []}),
                json_reply({"status": "fixed", "proof": "line 2 uses `with`.", "lines": [2]}),
            ]
        }
    )

    outcome = _run(heads, [_leak()], server=server)

    assert outcome.results[0].status is RecheckStatus.FIXED
    assert server.request_count == 2
    assert "at least one current line" in server.requests[1].last_user_text


def test_a_stage_error_is_a_fail_and_the_finding_stays_open(
    repo: Repo, server: ScriptedLLMServer
) -> None:
    heads = _leak_heads(repo)
    server.reply = lambda request: Fault.status(500)

    outcome = _run(heads, [_leak()], server=server)

    (result,) = outcome.results
    assert result.status is RecheckStatus.FAIL
    assert result.error is not None and "LLMHTTPError" in result.error
    assert [carried.id for carried in outcome.still_open] == ["f-leak"]
    assert outcome.closed == ()
    assert outcome.kpi.fail == 1
    assert [failure.stage for failure in outcome.failures] == ["recheck[f-leak]"]


def test_a_proof_citing_lines_the_file_lacks_is_a_fail(
    repo: Repo, server: ScriptedLLMServer
) -> None:
    heads = _leak_heads(repo)
    server.reply = lambda request: _recheck_reply(request, "fixed", "line 40 closes it.", [40])

    outcome = _run(heads, [_leak()], server=server)

    assert outcome.results[0].status is RecheckStatus.FAIL
    assert outcome.results[0].error == "the proof cites line 40 but service.py has 3 lines"
    assert outcome.still_open[0].id == "f-leak"


def test_without_a_model_a_changed_location_stays_open_unchecked(repo: Repo) -> None:
    heads = _leak_heads(repo)

    outcome = _run(heads, [_leak()])

    assert (outcome.results[0].status, outcome.results[0].method) == (
        RecheckStatus.STILL_OPEN,
        "none",
    )
    assert outcome.unchecked == ("f-leak",)
    assert outcome.kpi.still_open == 1


def test_when_the_previous_head_is_gone_the_model_is_told(
    repo: Repo, server: ScriptedLLMServer
) -> None:
    heads = _leak_heads(repo)
    server.reply = lambda request: _recheck_reply(request, "fixed", "line 2 uses `with`.", [2])

    outcome = _run(heads, [_leak()], server=server, use_line_map=False)

    assert outcome.results[0].status is RecheckStatus.FIXED
    assert "previously reviewed head no longer exists" in server.requests[0].last_user_text


def test_closures_list_fixes_first_then_cumulate_newest_first(repo: Repo) -> None:
    repo.write("a.py", lines_text(5))
    repo.write("b.py", lines_text(5))
    repo.write("c.py", "print('c')\n")
    old = repo.commit()
    repo.remove("a.py")
    repo.write("c.py", "print('c')  # noqa\n")
    new = repo.commit()
    static = reported("f-c", "Print found", "c.py", 1, source=FindingSource.STATIC, rule="T201")
    gone = reported("f-a", "Bad loop", "a.py", 2)
    still = reported("f-b", "Odd name", "b.py", 3)
    earlier_closure = ClosedFinding(
        id="f-old",
        title="Old",
        severity=Severity.P2,
        path="x.py",
        line=1,
        status=RecheckStatus.FIXED,
        proof="gone",
        first_seen_round=1,
        closed_round=1,
    )

    outcome = _run(Heads(repo, old, new), [gone, still, static], static_now=())

    assert [closed.id for closed in outcome.closed] == ["f-c", "f-a"]
    assert [c.id for c in outcome.cumulative_closed([earlier_closure])] == ["f-c", "f-a", "f-old"]
    assert [carried.id for carried in outcome.still_open] == ["f-b"]
    assert outcome.kpi.model_dump() == {
        "fixed": 1,
        "still_open": 1,
        "cannot_substantiate": 1,
        "fail": 0,
    }


def test_the_reply_model_needs_a_current_line_for_fixed() -> None:
    assert RecheckReply.model_validate(
        {"status": "cannot_substantiate", "proof": "the function is gone", "lines": []}
    )
    for bad in (
        {"status": "fixed", "proof": "fixed", "lines": []},
        {"status": "still_open", "proof": " ", "lines": [1]},
        {"status": "fixed", "proof": "line 0", "lines": [0]},
    ):
        try:
            RecheckReply.model_validate(bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


def test_with_a_toolbox_the_recheck_reads_the_repository_itself(
    repo: Repo, server: ScriptedLLMServer
) -> None:
    heads = _leak_heads(repo)
    proof = "line 2 now opens the file in a `with` block."
    server.reply = script_by_stage(
        {
            "recheck": [
                tool_call_reply("read_file", {"path": "service.py"}),
                json_reply({"status": "fixed", "proof": proof, "lines": [2]}),
            ]
        }
    )

    async def run() -> RecheckOutcome:
        with GitRepo.open(repo.path) as git_repo, Workspace(git_repo, head=heads.new) as space:
            async with LLMClient(settings_for(server)) as client:
                return await recheck_open_findings(
                    [_leak()],
                    line_map=repo.line_map(heads.old, heads.new),
                    head=GitRevisionReader(git_repo, heads.new),
                    head_sha=heads.new,
                    pr_files=_pr_files(git_repo, heads),
                    client=client,
                    static_findings_now=None,
                    round_index=2,
                    toolbox=Toolbox(space, ripgrep=None),
                )

    outcome = asyncio.run(run())

    assert outcome.results[0].status is RecheckStatus.FIXED
    assert outcome.results[0].proof == proof
    first, second = server.requests
    assert first.stage == second.stage == "recheck"
    assert first.tools is not None and "read_file" in json.dumps(first.tools)
    assert "read-only tools" in first.system_text
    tool_answers = [m for m in second.messages if m.get("role") == "tool"]
    assert len(tool_answers) == 1 and "with open(path) as handle:" in str(tool_answers[0])
    assert len(outcome.calls) == 2
