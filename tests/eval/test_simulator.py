"""The noisy simulated reviewer, over real HTTP, asked with the pipeline's own prompts."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from typing import Any, TypeVar

import pytest
from pydantic import BaseModel

from assay.diff import parse_unified_diff
from assay.diff.types import Anchor, AnchorMode, FileDiff
from assay.errors import LLMHTTPError
from assay.eval import SimulatedCase, SimulatedEndpoint, SimulatorConfig, TruthDefect
from assay.eval.judge import JudgeReply, build_judge_messages
from assay.eval.matcher import Predicted
from assay.llm._prompting import render_prompt
from assay.llm.client import LLMClient, Message
from assay.llm.schemas import DiscoveryReply
from assay.llm.settings import LLMSettings
from assay.model import Claim, ClaimKind, Finding, PullRequestMeta, ReportedFinding, Severity
from assay.pipeline.cluster import Cluster
from assay.pipeline.confirm import ConfirmReply, build_confirm_messages
from assay.pipeline.discover import DiscoveryInput, build_discovery_messages
from assay.pipeline.factcheck import FactCheckReply, build_fact_check_messages
from assay.pipeline.recheck import RecheckReply, build_recheck_messages
from assay.pipeline.synthesize import SynthesisReply, build_synthesis_messages

ReplyT = TypeVar("ReplyT", bound=BaseModel)

HEAD_LINES = [f"    value_{n} = compute_{n}(items)" for n in range(1, 41)]
PATCH = (
    "diff --git a/app/db.py b/app/db.py\n"
    "new file mode 100644\n"
    "--- /dev/null\n"
    "+++ b/app/db.py\n"
    f"@@ -0,0 +1,{len(HEAD_LINES)} @@\n" + "".join(f"+{line}\n" for line in HEAD_LINES)
)
DEFECT = TruthDefect(
    path="app/db.py",
    line_start=12,
    line_end=12,
    category="security",
    severity=Severity.P1,
    description="The query is built from user input: SQL injection.",
)
CASE = SimulatedCase(name="db", defects=(DEFECT,))
PR = PullRequestMeta(
    title="Add queries", base_ref="main", head_ref="pr", base_sha="a" * 40,
    head_sha="b" * 40, merge_base_sha="a" * 40,
)  # fmt: skip


def files() -> tuple[FileDiff, ...]:
    return tuple(parse_unified_diff(PATCH.encode()))


def discovery_messages(rep: int) -> list[Message]:
    return build_discovery_messages(DiscoveryInput(pr=PR, files=files()), rep=rep)


@pytest.fixture
def endpoint_factory() -> Iterator[Any]:
    started: list[SimulatedEndpoint] = []

    def start(**config: Any) -> SimulatedEndpoint:
        endpoint = SimulatedEndpoint(SimulatorConfig(**config)).start()
        endpoint.review(CASE)
        started.append(endpoint)
        return endpoint

    yield start
    for endpoint in started:
        endpoint.close()


def ask(
    endpoint: SimulatedEndpoint,
    stage: str,
    messages: list[Message],
    reply_model: type[ReplyT],
    seed: int | None = None,
) -> ReplyT:
    settings = LLMSettings(
        base_url=endpoint.base_url, model=endpoint.model, transport_retries=0, reasks=0
    )

    async def run() -> ReplyT:
        async with LLMClient(settings) as client:
            return (await client.call_stage(stage, messages, reply_model, seed=seed)).value

    return asyncio.run(run())


def test_discovery_is_reproducible_per_request_and_differs_by_rep(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(seed=3)
    first = ask(endpoint, "discover", discovery_messages(0), DiscoveryReply, seed=0)
    again = ask(endpoint, "discover", discovery_messages(0), DiscoveryReply, seed=0)
    replies = [
        ask(endpoint, "discover", discovery_messages(r), DiscoveryReply, seed=r) for r in range(6)
    ]

    assert first == again
    assert len({reply.model_dump_json() for reply in replies}) > 1
    other_seed = endpoint_factory(seed=4)
    assert ask(other_seed, "discover", discovery_messages(0), DiscoveryReply, seed=0) != first


def test_a_perfect_reviewer_reports_exactly_the_defect(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(recall=1.0, fp_rate=0.0, line_jitter=0, severity_noise=0.0,
                                category_noise=0.0)  # fmt: skip
    reply = ask(endpoint, "discover", discovery_messages(0), DiscoveryReply, seed=0)

    (finding,) = reply.findings
    assert (finding.path, finding.line, finding.severity, finding.category) == (
        "app/db.py",
        12,
        "P1",
        "security",
    )
    (deterministic, free) = finding.claims
    # The deterministic claim quotes the head line the request showed, so it verifies.
    assert deterministic.kind == ClaimKind.LINE_CONTAINS
    assert (deterministic.line, deterministic.needle) == (12, "compute_12")
    assert free.kind == ClaimKind.FREE


def test_false_positives_keep_away_from_the_defect(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(recall=0.0, fp_rate=3.0)
    lines = [
        finding.line
        for rep in range(5)
        for finding in ask(
            endpoint, "discover", discovery_messages(rep), DiscoveryReply, rep
        ).findings
    ]
    assert len(lines) >= 10
    assert all(abs(line - 12) > 10 for line in lines)


def test_decoys_repeat_across_reps(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(recall=0.0, fp_rate=1.0, fp_shared=1.0, decoys=1)
    titles = {
        (finding.line, finding.title)
        for rep in range(4)
        for finding in ask(
            endpoint, "discover", discovery_messages(rep), DiscoveryReply, rep
        ).findings
    }
    assert len(titles) == 1


def finding_at(line: int, rep: int | None = None, severity: Severity = Severity.P1) -> Finding:
    return Finding(
        severity=severity,
        category="security",
        title="SQL injection in the query",
        path="app/db.py",
        line=line,
        evidence=f"app/db.py:{line}: user input reaches SQL.",
        claims=(Claim(kind=ClaimKind.FREE, text="input reaches the query"),),
        rep=rep,
    )


@pytest.mark.parametrize(("line", "verdict"), [(13, "confirmed"), (30, "refuted")])
def test_confirm_answers_from_the_truth(endpoint_factory: Any, line: int, verdict: str) -> None:
    endpoint = endpoint_factory(check_error_rate=0.0)
    messages = build_confirm_messages(finding_at(line), excerpts="", lang="en", agentic=False)
    assert ask(endpoint, "confirm", messages, ConfirmReply).verdict == verdict


def test_check_error_rate_one_always_answers_wrong(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(check_error_rate=1.0)
    messages = build_confirm_messages(finding_at(12), excerpts="", lang="en", agentic=False)
    assert ask(endpoint, "confirm", messages, ConfirmReply).verdict == "refuted"


@pytest.mark.parametrize(("line", "status"), [(12, "verified"), (30, "refuted")])
def test_fact_check_answers_every_listed_claim(
    endpoint_factory: Any, line: int, status: str
) -> None:
    endpoint = endpoint_factory(check_error_rate=0.0)
    claims = [Claim(text="one"), Claim(text="two"), Claim(text="three")]
    messages = build_fact_check_messages(
        finding_at(line), claims, excerpts="", lang="en", agentic=False
    )
    reply = ask(endpoint, "fact_check", messages, FactCheckReply)
    assert [(c.claim, c.status) for c in reply.claims] == [(1, status), (2, status), (3, status)]


def test_synthesis_keeps_the_report_nearest_the_defect(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(check_error_rate=0.0)
    cluster = Cluster(members=(finding_at(15, rep=0, severity=Severity.P2), finding_at(13, rep=1)))
    reply = ask(endpoint, "synthesize", build_synthesis_messages(cluster, lang="en", reps=3),
                SynthesisReply)  # fmt: skip
    assert (reply.line, reply.severity, reply.claim_ids) == (13, "P1", ["2.1"])


@pytest.mark.parametrize(("line", "status"), [(12, "still_open"), (30, "cannot_substantiate")])
def test_recheck_answers_from_the_truth(endpoint_factory: Any, line: int, status: str) -> None:
    endpoint = endpoint_factory(check_error_rate=0.0)
    previous = ReportedFinding(
        id="abc",
        finding=finding_at(line),
        severity=Severity.P1,
        anchor=Anchor(mode=AnchorMode.LINE, path="app/db.py", line=line),
    )
    messages = build_recheck_messages(
        previous,
        path_now="app/db.py",
        line_now=line,
        current_lines=HEAD_LINES,
        changes=None,
        previous_head_known=True,
        head12="b" * 12,
        round_index=2,
    )
    assert ask(endpoint, "recheck", messages, RecheckReply).status == status


def test_checklist_answers_every_item(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory()
    item = {"id": "G.6.1.22", "label": "6.1", "section": "Errors", "text": "t", "guidance": ""}
    failed = {"id": "P.B.1", "label": "P.B", "section": "Tests", "text": "t", "check": "no tests"}
    user = render_prompt(
        "checklist.user.j2",
        nonce="0" * 16,
        metadata_block="m",
        diff_block="d",
        findings_block="f",
        checklist_title="General",
        judge_items=[item],
        failed_items=[failed],
        count=2,
        ids=["G.6.1.22", "P.B.1"],
    )
    from assay.checklists.reply import ChecklistReply

    reply = ask(endpoint, "checklist", [{"role": "user", "content": user}], ChecklistReply)
    assert [(r.item_id, r.status) for r in reply.results] == [
        ("G.6.1.22", "pass"),
        ("P.B.1", "fail"),
    ]


def test_judge_pairs_findings_near_a_defect(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory(check_error_rate=0.0)
    findings = [
        Predicted(id="far", path="app/db.py", line=30),
        Predicted(id="near", path="app/db.py", line=13),
    ]
    reply = ask(endpoint, "judge", build_judge_messages(findings, [DEFECT]), JudgeReply)
    assert [(pair.defect, pair.finding) for pair in reply.pairs] == [("D1", "F2")]


def test_an_unknown_stage_fails_loudly_and_is_counted(endpoint_factory: Any) -> None:
    endpoint = endpoint_factory()
    with pytest.raises(LLMHTTPError):
        ask(endpoint, "brand_new_stage", discovery_messages(0), DiscoveryReply)
    assert endpoint.unanswered == {"brand_new_stage": 1}
    assert len(endpoint.errors) == 1
    endpoint.server.reset()  # the error was expected


def test_model_name_names_the_reviewer_not_its_speed() -> None:
    assert SimulatorConfig(seed=1).model_name == SimulatorConfig(seed=1, ttft_s=0.5).model_name
    assert SimulatorConfig(seed=1).model_name != SimulatorConfig(seed=2).model_name
    assert SimulatorConfig(recall=0.5).model_name != SimulatorConfig(recall=0.6).model_name


def test_a_request_that_does_not_show_the_defects_file_does_not_report_it(
    endpoint_factory: Any,
) -> None:
    other = PATCH.replace("app/db.py", "app/other.py")
    files = tuple(parse_unified_diff(other.encode()))
    messages = build_discovery_messages(DiscoveryInput(pr=PR, files=files), rep=0)
    endpoint = endpoint_factory(recall=1.0, fp_rate=0.0)
    assert ask(endpoint, "discover", messages, DiscoveryReply, seed=0).findings == []
