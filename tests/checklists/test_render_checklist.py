"""The Checklist Findings block and the inline ``Checklist:`` lines, against the seed (zh)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from assay.checklists import (
    Catalog,
    checklist_links,
    link_findings,
    load_builtin_catalogs,
    parse_catalog,
)
from assay.model import (
    ChecklistItemResult,
    ChecklistReport,
    ChecklistStatus,
    Kpi,
    PullRequestMeta,
    ReportedFinding,
    RoundResult,
)
from assay.render import CHECKLIST_SEPARATOR, EVIDENCE_BUDGET, inline_comments, render_review
from tests.render._visible import visible_text

from ._helpers import RTP_EXAMPLE, reported

GOLDEN = Path(__file__).parent / "golden"
_ENTRY = re.compile(
    r"^  • \[(?P<label>[^\]]+)\] (?P<section>.+?) — (?P<text>.+) → issue (?P<title>.+)$"
)
_IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


@dataclass(frozen=True)
class _SeedEntry:
    label: str
    section: str
    text: str
    title: str
    evidence: str


def _seed_entries(block: str) -> list[_SeedEntry]:
    lines = block.splitlines()
    entries = []
    for index, line in enumerate(lines):
        match = _ENTRY.match(line)
        if match is not None:
            evidence = lines[index + 1]
            assert evidence.startswith("    ")
            entries.append(_SeedEntry(**match.groupdict(), evidence=evidence.removeprefix("    ")))
    return entries


def _source_for(visible: str) -> str:
    """Evidence source whose first ``EVIDENCE_BUDGET`` characters render as the seed's cut text.

    The seed cut the markdown source, then GitHub hid the backticks of the code spans before
    the cut (so a cut paragraph shows fewer than 500 characters) and showed the backtick of the
    span the cut opened. We rebuild such a source: identifiers in code spans until the budget
    is reached exactly, then a tail past the cut (closing the open span).
    """
    open_span = visible.count("`") % 2 == 1
    if not open_span and not visible.endswith("，"):
        return visible  # the seed's evidence was not cut
    pairs = EVIDENCE_BUDGET - len(visible)
    assert pairs >= 0 and pairs % 2 == 0
    pairs //= 2
    limit = visible.rfind("`") if open_span else len(visible)
    out, position = [], 0
    for match in _IDENTIFIER.finditer(visible, 0, limit):
        if not pairs:
            break
        if "`" in visible[max(match.start() - 1, 0) : match.end() + 1]:
            continue
        out += [visible[position : match.start()], f"`{match.group()}`"]
        position, pairs = match.end(), pairs - 1
    assert pairs == 0
    source = "".join([*out, visible[position:]])
    assert len(source) == EVIDENCE_BUDGET
    return source + ("Done)` 之后的原文。" if open_span else "之后的原文。")


def _catalogs() -> list[Catalog]:
    builtin = {catalog.name: catalog for catalog in load_builtin_catalogs()}
    rtp = parse_catalog(RTP_EXAMPLE.read_text(encoding="utf-8"), source="base:rtp.toml")
    return [builtin["general"], rtp, builtin["python"]]


def _seed_round() -> tuple[RoundResult, str]:
    golden = (GOLDEN / "seed000_checklist_block.zh.txt").read_text(encoding="utf-8")
    entries = _seed_entries(golden)
    assert len(entries) == 23
    findings: dict[str, ReportedFinding] = {}
    for entry in entries:
        if entry.title not in findings:
            findings[entry.title] = reported(
                f"f{len(findings)}",
                entry.title,
                "rtp_llm/cpp/model_rpc/DecodeRpcServer.cc",
                100 + len(findings),
                evidence=_source_for(entry.evidence),
            )
    failing = {(e.label, e.section, e.text): findings[e.title].id for e in entries}
    catalogs = _catalogs()
    items = []
    for catalog in catalogs:
        for section, item in catalog.entries():
            key = (catalog.label_of(section), section.title.zh, item.text.zh)
            finding_id = failing.pop(key, None)
            items.append(
                ChecklistItemResult(
                    item_id=item.id,
                    checklist=catalog.name,
                    label=key[0],
                    section=key[1],
                    text=key[2],
                    status=ChecklistStatus.FAIL if finding_id else ChecklistStatus.PASS,
                    finding_id=finding_id,
                )
            )
    assert failing == {}, "every seed entry is an item of the catalogs"
    report = ChecklistReport(
        checklists=tuple(c.name for c in catalogs),
        checklist_titles=tuple(c.catalog.title.zh for c in catalogs),
        items=tuple(items),
    )
    linked = link_findings(list(findings.values()), checklist_links(report))
    result = RoundResult(
        pr=PullRequestMeta(
            number=1344,
            base_ref="main",
            head_ref="fix/cache-store-rpc-xgrammar",
            base_sha="f" * 40,
            head_sha="1f34a8aa9505" + "0" * 28,
            merge_base_sha="f" * 40,
        ),
        reviewed_at=datetime(2026, 8, 28, 7, 52, tzinfo=UTC),
        findings=linked,
        kpi=Kpi(),
        checklist=report,
    )
    return result, golden


def test_checklist_findings_block_reads_exactly_like_seed_000_review_1() -> None:
    result, golden = _seed_round()
    assert result.checklist is not None

    visible = visible_text(render_review(result, lang="zh", tz="UTC+8"))

    block = visible[visible.index("Checklist Findings") :]
    total = result.checklist.total
    expected = golden.replace("(23 fail / 121 total)", f"(23 fail / {total} total)")
    assert block == expected
    assert total == 25 + 2 + 37  # the applicable items of the three catalogs, not the seed's 121


def test_inline_checklist_lines_list_the_items_without_section_in_body_order() -> None:
    result, _ = _seed_round()

    comments = {c.finding_id: visible_text(c.body) for c in inline_comments(result, lang="zh")}

    by_title = {f.finding.title: f.id for f in result.findings}
    mega = comments[by_title["单个 PR 混合五件互不相关的变更，难以定位与回滚"]]
    # Seed 000 line 532 lists these four (joined with "；" there).
    assert mega.splitlines()[-1] == (
        "Checklist: [6.1] 回滚路径：风险行为存在运维回滚手段"
        " · [6.1] Commit 原子、message 与行为匹配"
        " · [6.1] Mega-PR 已拆分为独立变更 · [6.1] PR description 说明动机与设计"
    )
    dead_code = comments[
        by_title["删除 loadCacheSyncForTp 后 thread_pool_ 与 initThreadPool 成为完全不可达的死代码"]
    ]
    line = dead_code.splitlines()[-1].removeprefix("Checklist: ")
    # The RTP item contains "；" itself: the separator keeps the two items apart.
    items = line.split(CHECKLIST_SEPARATOR)
    assert items[0] == "[6.1] KISS/YAGNI：无投机性抽象"
    assert items[1].startswith("[I] 删除或重命名内部 file") and "；只有暴露到" in items[1]
    assert len(items) == 2
    unlinked = [f.id for f in result.findings if not f.checklist_items]
    assert all("Checklist:" not in comments[finding_id] for finding_id in unlinked)


def test_no_block_without_checklist_and_a_header_without_failures() -> None:
    result, _ = _seed_round()
    assert result.checklist is not None
    passed = result.checklist.model_copy(
        update={
            "items": tuple(
                item.model_copy(update={"status": ChecklistStatus.PASS, "finding_id": None})
                for item in result.checklist.items
            )
        }
    )

    none = visible_text(render_review(result.model_copy(update={"checklist": None}), lang="zh"))
    clean = visible_text(render_review(result.model_copy(update={"checklist": passed}), lang="en"))

    assert "Checklist Findings" not in none
    assert clean.rstrip().endswith(f"Checklist Findings (0 fail / {passed.total} total)")


def test_entries_escape_untrusted_text_and_cut_evidence_without_ellipsis() -> None:
    finding = reported(
        "x1",
        "<!-- hide --> *bold* title",
        "app/a.py",
        3,
        evidence="- starts like a list " + "y" * 600,
    )
    item = ChecklistItemResult(
        item_id="T.1",
        checklist="team",
        label="T",
        section="General",
        text="Use [links](http://x) carefully",
        status=ChecklistStatus.FAIL,
        finding_id="x1",
    )
    result = RoundResult(
        pr=PullRequestMeta(
            base_ref="main",
            head_ref="b",
            base_sha="a" * 40,
            head_sha="b" * 40,
            merge_base_sha="a" * 40,
        ),
        reviewed_at=datetime(2026, 1, 1, tzinfo=UTC),
        findings=(finding,),
        kpi=Kpi(),
        checklist=ChecklistReport(checklists=("team",), checklist_titles=("Team",), items=(item,)),
    )

    markdown = render_review(result, lang="en")

    assert (
        "- \\[T] General — Use \\[links](http://x) carefully"
        " → issue \\<!-- hide --> \\*bold\\* title" in markdown
    )
    evidence_line = markdown.split("→ issue", 1)[1].splitlines()[1]
    assert evidence_line.startswith("  \\- starts like a list ")
    assert evidence_line.endswith("y") and not evidence_line.endswith("...")
    assert len(visible_text(evidence_line).strip()) == EVIDENCE_BUDGET
