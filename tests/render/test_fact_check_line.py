"""The round summary's fact-check bullet (seed §5.2): verdict, then each claim cut to 40 chars."""

from __future__ import annotations

from assay.model import (
    Claim,
    ClaimCheck,
    ClaimStatus,
    FactCheck,
    FactCheckVerdict,
    ReportedFinding,
    Severity,
)
from assay.render import render_summary

from ._factory import reported, round_result
from ._visible import visible_text

# Copied verbatim from seeds/002_a32ad62bcf2fc2a1.txt, line 1376 (round 12 of PR #1353).
SEED_LINE = (
    "  • 事实核验：hold — verified(py_proto.bzl 将 proto_srcs 声明为 mandatory=)；"
    "verified(flexlb_schedule_service_py 目标未传 proto_sr)；"
    "verified(补丁只给 model_rpc_service_py 与 multimodal_o)；"
    "verified(依赖链闭合：flexlb_schedule_service_py_proto 依)；"
    "verified(该目标在生产构建中可达（server 是实际构建目标，会触发对 flexlb_s)；"
    "verified(Bazel 分析 flexlb_schedule_service_py 时会因 )"
)
# The claims in full; the seed printed the first 40 characters of each.
SEED_CLAIMS = (
    "py_proto.bzl 将 proto_srcs 声明为 mandatory=True",
    "flexlb_schedule_service_py 目标未传 proto_srcs",
    "补丁只给 model_rpc_service_py 与 multimodal_output_py 补了 proto_srcs",
    "依赖链闭合：flexlb_schedule_service_py_proto 依赖该目标",
    "该目标在生产构建中可达（server 是实际构建目标，会触发对 flexlb_schedule_service_py 的分析）",
    "Bazel 分析 flexlb_schedule_service_py 时会因 missing value for mandatory attribute "
    "'proto_srcs' 失败",
)


def _with_fact_check(fact_check: FactCheck | None) -> ReportedFinding:
    finding = reported(
        "b0",
        Severity.P1,
        "generate_grpc_proto 新增 mandatory proto_srcs 后 flexlb_schedule_service_py 未传该属性",
        "rtp_llm/cpp/model_rpc/proto/BUILD",
        85,
        category="build",
        votes=5,
        first_seen_round=6,
        evidence="依据见 BUILD:85-89。",
        suggestion="补上 proto_srcs。",
    )
    return finding.model_copy(update={"fact_check": fact_check})


def _fact_check(verdict: FactCheckVerdict, *checks: tuple[ClaimStatus, str]) -> FactCheck:
    return FactCheck(
        verdict=verdict,
        checks=tuple(ClaimCheck(claim=Claim(text=text), status=status) for status, text in checks),
        round_index=12,
    )


def _fact_check_lines(finding: ReportedFinding, lang: str) -> list[str]:
    label = "事实核验：" if lang == "zh" else "Fact check: "
    text = visible_text(render_summary(round_result([finding], round_index=12), lang=lang))
    return [line for line in text.split("\n") if line.startswith(f"  • {label}")]


def test_the_zh_line_reads_exactly_like_the_seed() -> None:
    fact_check = _fact_check(
        FactCheckVerdict.HOLD, *((ClaimStatus.VERIFIED, text) for text in SEED_CLAIMS)
    )

    assert _fact_check_lines(_with_fact_check(fact_check), "zh") == [SEED_LINE]


def test_the_en_line_names_each_claim_status() -> None:
    fact_check = _fact_check(
        FactCheckVerdict.REFUTED,
        (ClaimStatus.VERIFIED, "The pool is created once per process and shared"),
        (ClaimStatus.REFUTED, "release() is never called"),
        (ClaimStatus.UNVERIFIED, "Callers may retry"),
    )

    assert _fact_check_lines(_with_fact_check(fact_check), "en") == [
        "  • Fact check: refuted — verified(The pool is created once per process and); "
        "refuted(release() is never called); unverified(Callers may retry)"
    ]


def test_a_fact_check_without_claims_shows_only_its_verdict() -> None:
    fact_check = _fact_check(FactCheckVerdict.PARSE_FAIL)

    assert _fact_check_lines(_with_fact_check(fact_check), "zh") == ["  • 事实核验：parse_fail"]


def test_no_fact_check_no_line() -> None:
    assert _fact_check_lines(_with_fact_check(None), "zh") == []


def test_claims_are_untrusted_markdown_shown_verbatim() -> None:
    fact_check = _fact_check(
        FactCheckVerdict.UNVERIFIED,
        (ClaimStatus.UNVERIFIED, "<b>bold</b> *and* `half a span"),
        (ClaimStatus.VERIFIED, "second ` claim\nspans two lines"),
        (ClaimStatus.VERIFIED, "<!-- hides the rest"),
    )
    finding = _with_fact_check(fact_check)

    markdown = render_summary(round_result([finding], round_index=12), lang="en")

    (line,) = _fact_check_lines(finding, "en")
    assert line.startswith(
        "  • Fact check: unverified — unverified(<b>bold</b> *and* `half a span); "
        "verified(second ` claim spans two lines); "
    )
    # Escaped: nothing in a claim opens HTML, a comment, emphasis or a code span across claims.
    assert (
        "unverified(\\<b>bold\\</b> \\*and\\* \\`half a span); "
        "verified(second \\` claim spans two lines); verified(\\<!-- hides the rest)"
    ) in markdown
