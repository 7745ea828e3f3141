"""Rounds across pushes through `assay review`: delta, recheck with proof, stable identity and
severity, a force-push that rewrites history, `assay history` and `assay show`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.testing import ChatRequest, ReplyValue, ScriptedLLMServer, json_reply
from tests.integration.conftest import CliResult, commit_all, git, write

SERVICE_LEAK = "def load(path):\n    return open(path).read()\n"
SERVICE_FIXED = "def load(path):\n    with open(path) as handle:\n        return handle.read()\n"
CALC = (
    "import math\n\n\ndef divide(a, b):\n    return a / b\n\n\ndef root(x):\n"
    "    return math.sqrt(x)\n"
)

FINDING_A = {
    "severity": "P2",
    "category": "resource-leak",
    "title": "load() never closes the file it opens",
    "path": "service.py",
    "line": 2,
    "end_line": None,
    "side": "RIGHT",
    "evidence": "service.py:2 opens the file and never closes it.",
    "suggestion": "Use a with block.",
    "claims": [],
}
FINDING_B = {
    "severity": "P2",
    "category": "correctness",
    "title": "divide() raises ZeroDivisionError for b == 0",
    "path": "calc.py",
    "line": 5,
    "end_line": None,
    "side": "RIGHT",
    "evidence": "calc.py:5 divides by b without a check.",
    "suggestion": "Check b first.",
    "claims": [],
}


class RoundScript:
    """Round 1 finds A and B; later rounds find nothing new, and recheck A as fixed."""

    def __init__(self) -> None:
        self.round = 1
        self.server: ScriptedLLMServer | None = None

    def stages(self) -> list[str | None]:
        assert self.server is not None
        return [request.stage for request in self.server.requests]

    def __call__(self, request: ChatRequest) -> ReplyValue:
        if request.stage == "discover":
            found: list[dict[str, Any]] = [FINDING_A, FINDING_B] if self.round == 1 else []
            return json_reply({"findings": found, "strengths": []})
        if request.stage == "recheck":
            assert "load() never closes" in request.last_user_text
            return json_reply(
                {
                    "status": "fixed",
                    "proof": "service.py:2-3 now opens the file in a with block, which closes it.",
                    "lines": [2, 3],
                }
            )
        raise AssertionError(f"unexpected stage {request.stage}")


@pytest.fixture
def script() -> Iterator[RoundScript]:
    scripted = RoundScript()
    with ScriptedLLMServer(scripted) as server:
        os.environ.update(ASSAY_LLM_BASE_URL=server.base_url, ASSAY_MODEL="assay-test")
        scripted.server = server
        yield scripted


def test_three_rounds_fix_carry_and_force_push(
    make_repo: Callable[..., Path],
    run_cli: Callable[..., CliResult],
    script: RoundScript,
    tmp_path: Path,
) -> None:
    repo = make_repo(
        {"service.py": "", "calc.py": ""}, {"service.py": SERVICE_LEAK, "calc.py": CALC}
    )

    def review(name: str, *extra: str) -> dict[str, Any]:
        out = tmp_path / name
        done = run_cli(
            "review",
            "--repo",
            str(repo),
            "--base",
            "main",
            "--reps",
            "1",
            "--agentic-reps",
            "0",
            "--out",
            str(out),
            *extra,
        )
        assert done.exit_code == 0, done.stderr
        return json.loads((out / "result.json").read_text(encoding="utf-8"))

    first = review("r1")
    ids = {f["finding"]["title"]: f["id"] for f in first["findings"]}
    assert first["kpi"]["round_index"] == 1 and first["kpi"]["new_findings"] == 2

    # Round 2: a commit fixes A and touches nothing near B.
    write(repo, "service.py", SERVICE_FIXED)
    commit_all(repo, "close the file")
    script.round = 2
    before = len(script.stages())
    second = review("r2")
    assert second["kpi"]["round_index"] == 2
    assert second["kpi"]["delta_files"] == 1 and second["kpi"]["full_files"] == 2
    assert second["kpi"]["recheck"] == {
        "fixed": 1,
        "still_open": 1,
        "cannot_substantiate": 0,
        "fail": 0,
    }
    [b] = second["findings"]
    assert b["id"] == ids[FINDING_B["title"]]
    assert (b["first_seen_round"], b["severity"]) == (1, "P2")
    [closed] = second["closed"]
    assert closed["id"] == ids[FINDING_A["title"]] and closed["status"] == "fixed"
    assert "with block" in closed["proof"]
    summary = (tmp_path / "r2" / "summary.md").read_text(encoding="utf-8")
    assert "load() never closes the file it opens" in summary  # in the fixed (recheck) list
    # Only A's recheck needed the model: B's lines did not change.
    assert script.stages()[before:] == ["discover", "recheck"]

    # Round 3: the branch is rewritten (squash) and force-pushed; the old head is gone.
    git(repo, "reset", "-q", "--soft", "main")
    commit_all(repo, "squashed")
    git(repo, "reflog", "expire", "--expire=now", "--all")
    git(repo, "gc", "-q", "--prune=now")
    script.round = 3
    third = review("r3")
    assert third["kpi"]["round_index"] == 3
    assert third["kpi"]["delta_files"] == third["kpi"]["full_files"] == 2
    [b3] = third["findings"]
    assert (b3["id"], b3["first_seen_round"]) == (ids[FINDING_B["title"]], 1)
    assert [c["id"] for c in third["closed"]] == [ids[FINDING_A["title"]]]

    for lang in ("en", "zh"):
        shown = run_cli("show", "2", "--repo", str(repo), "--lang", lang)
        assert shown.exit_code == 0, shown.stderr
        assert "divide()" in shown.stdout
    shown_zh = run_cli("show", "--repo", str(repo), "--lang", "zh", "--out", str(tmp_path / "show"))
    assert shown_zh.exit_code == 0, shown_zh.stderr
    zh_summary = (tmp_path / "show" / "summary.md").read_text(encoding="utf-8")
    assert (
        "第 3 轮评审" in zh_summary
        and "divide() raises ZeroDivisionError for b == 0 — calc.py:5 · 票数 1/1" in zh_summary
        and "已确认修复（recheck）" in zh_summary
    )
    listed = run_cli("history", "--repo", str(repo))
    assert listed.exit_code == 0
    assert [line.split()[0] for line in listed.stdout.splitlines()[-3:]] == ["1", "2", "3"]


class StaleBlockerScript:
    """Round 1: three reps report a P1 whose claim holds. Round 2: nobody reports it again,
    recheck says it is still open, but the line its claim cites has changed."""

    def __init__(self) -> None:
        self.round = 1

    def __call__(self, request: ChatRequest) -> ReplyValue:
        if request.stage == "discover":
            found = []
            if self.round == 1:
                found = [
                    {
                        **FINDING_A,
                        "severity": "P1",
                        "claims": [
                            {
                                "kind": "line_contains",
                                "text": "service.py:2 calls open(path) with no with block",
                                "path": "service.py",
                                "line": 2,
                                "needle": "open(path)",
                                "count": None,
                            }
                        ],
                    }
                ]
            return json_reply({"findings": found, "strengths": []})
        if request.stage == "confirm":
            return json_reply({"verdict": "confirmed", "reason": "service.py:2 leaks."})
        if request.stage == "recheck":
            return json_reply(
                {"status": "still_open", "proof": "service.py:2 still opens a file.", "lines": [2]}
            )
        raise AssertionError(f"unexpected stage {request.stage}")


def test_a_carried_blocker_whose_claim_is_now_refuted_stops_blocking(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    script = StaleBlockerScript()
    repo = make_repo({"service.py": ""}, {"service.py": SERVICE_LEAK})
    with ScriptedLLMServer(script) as server:
        os.environ.update(ASSAY_LLM_BASE_URL=server.base_url, ASSAY_MODEL="assay-test")

        def review(name: str) -> dict[str, Any]:
            out = tmp_path / name
            done = run_cli(
                "review", "--repo", str(repo), "--base", "main", "--reps", "3",
                "--agentic-reps", "0", "--block-support", "3", "--out", str(out),
            )  # fmt: skip
            assert done.exit_code == 0, done.stderr
            return json.loads((out / "result.json").read_text(encoding="utf-8"))

        first = review("r1")
        [blocker] = first["findings"]
        assert blocker["blocking"] and blocker["votes"] == 3
        assert blocker["fact_check"]["verdict"] == "hold"

        write(repo, "service.py", "def load(path):\n    return open(path, 'rb').read()\n")
        commit_all(repo, "read bytes")
        script.round = 2
        second = review("r2")

    [carried] = second["findings"]
    assert carried["id"] == blocker["id"] and carried["first_seen_round"] == 1
    assert not carried["blocking"]  # re-gated this round: its claim no longer holds
    assert carried["fact_check"]["verdict"] == "refuted"
    assert carried["fact_check"]["round_index"] == 2
    assert (carried["severity"], carried["original_severity"]) == ("P2", "P1")
    assert "fact-check refuted" in carried["gate_reason"]
    assert second["kpi"]["blocking"] == 0 and second["kpi"]["recheck"]["still_open"] == 1
