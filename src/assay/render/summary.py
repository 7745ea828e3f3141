"""The round-summary comment, edited in place every round, and its KPI JSON (seed §5).

Layout (zh wording; en is the same structure)::

    ## PR #1353 第 12 轮评审 — BLOCKED(1)         a non-blocking round: PASS
    - 标题：<title>（@<author>，<state>）
    - head <12 hex> · base <12 hex> · delta <n> 文件 · discover <ok>/<reps> 成功
    ### 阻塞项（P0/P1，support≥3 且过全部门）      only when something blocks
    #### [P1] <title>
    - <path>:<line> · 类别 <category> · 票数 <votes>/<reps> · 首见 r<round>
    - 依据：<evidence, in full>
    - 建议：<suggestion>
    - 事实核验：hold — verified(<claim[:40]>)；…    when the finding was fact-checked
    ### 非阻塞发现（并集报告：单票也保留，降级不丢弃）  when there are non-blocking findings
    - [P2] <title> — <path>:<line> · 票数 <votes>/<reps>[ · 由 P1 降级：<gate reason>]
    ### 已确认修复（recheck）                       when anything was ever closed (cumulative)
    - [P1] <original title> — <proof against the current head>
    ### 本轮 KPI                                   always, with the KPI JSON in a code block
    本报告由 <platform> 自动生成，同一 PR 的后续轮次就地更新同一条评论。
    <platform> review · 第 <k> 轮 · head <12 hex> · <verdict> · 同一 PR 的结论就地更新这一条评论
    <!-- assay:round-summary -->                  hidden, to find the comment again

The seed never showed a non-blocking round; its verdict here is ``PASS``. Votes are
``<votes>/<kpi.reps>``; a static-analysis finding needs no votes and shows ``static`` instead.
A local run (no PR number) is titled by its head branch. The KPI JSON is the round's ``Kpi``
pretty-printed with a 1-space indent in the model's key order: the seed's keys, then Assay's.
"""

from __future__ import annotations

import json
import re

from assay.model import FindingSource, RecheckStatus, ReportedFinding, RoundResult
from assay.render._common import (
    downgrade_note,
    escaped_line,
    location,
    short_sha,
    target,
    title,
)
from assay.render._locale import Locale, get_locale
from assay.render._markdown import escape_markdown, indent_continuation, one_line

__all__ = ["SUMMARY_MARKER", "render_kpi_json", "render_summary", "summary_verdict"]

SUMMARY_MARKER = "<!-- assay:round-summary -->"
"""Hidden marker by which the publisher finds the summary comment to edit in place."""

_BULLET_INDENT = "  "
_BACKTICK_RUN = re.compile(r"`+")


def summary_verdict(result: RoundResult) -> str:
    """``BLOCKED(<number of blocking findings>)``, or ``PASS`` when nothing blocks."""
    blocking = len(result.blocking)
    return f"BLOCKED({blocking})" if blocking else "PASS"


def render_kpi_json(result: RoundResult) -> str:
    """The round's KPI as JSON, 1-space indent, keys in the model's order (no trailing newline)."""
    return json.dumps(result.kpi.model_dump(mode="json"), indent=1, ensure_ascii=False)


def render_summary(
    result: RoundResult,
    *,
    lang: str = "en",
    platform: str = "assay",
    min_support: int = 3,
) -> str:
    """Render the round-summary comment.

    Args:
        result: The round.
        lang: ``"en"`` or ``"zh"``.
        platform: The name in the footer and the signature line.
        min_support: The gate's support threshold, printed in the blocking heading.

    Returns:
        The comment body as GitHub markdown, ending with a newline.

    Raises:
        ValueError: Unsupported ``lang``.
    """
    locale = get_locale(lang)
    verdict = summary_verdict(result)
    pr = result.pr
    kpi = result.kpi
    head = short_sha(pr.head_sha)
    platform_name = escaped_line(platform)
    blocks = [
        "## "
        + locale.summary_header.format(
            target=target(pr), round=result.round_index, verdict=verdict
        ),
        "\n".join(
            [
                "- " + _meta_title(result, locale),
                "- "
                + locale.meta_commits.format(
                    head=head,
                    base=short_sha(pr.base_sha),
                    delta=kpi.delta_files,
                    ok=kpi.discover_ok,
                    reps=kpi.reps,
                ),
            ]
        ),
    ]
    if result.blocking:
        blocks.append("### " + locale.summary_blocking_heading.format(min_support=min_support))
        for finding in result.blocking:
            blocks += _blocking_item(finding, result, locale)
    if result.non_blocking:
        blocks.append("### " + locale.summary_non_blocking_heading)
        blocks.append(
            "\n".join(
                _non_blocking_item(finding, result, locale) for finding in result.non_blocking
            )
        )
    blocks += _fixed_section(result, locale)
    kpi_json = render_kpi_json(result)
    fence = _fence_for(kpi_json)
    blocks += [
        "### " + locale.summary_kpi_heading,
        f"{fence}json\n{kpi_json}\n{fence}",
        locale.summary_footer.format(platform=platform_name),
        locale.summary_signature.format(
            platform=platform_name, round=result.round_index, head=head, verdict=verdict
        ),
        SUMMARY_MARKER,
    ]
    return "\n\n".join(blocks) + "\n"


def _meta_title(result: RoundResult, locale: Locale) -> str:
    pr = result.pr
    pr_title = escaped_line(pr.title or pr.head_ref)
    state = escaped_line(pr.state)
    if not pr.author.strip():
        return locale.meta_title_no_author.format(title=pr_title, state=state)
    return locale.meta_title.format(title=pr_title, author=escaped_line(pr.author), state=state)


def _votes(finding: ReportedFinding, result: RoundResult, locale: Locale) -> str:
    if finding.finding.source is FindingSource.STATIC:
        return locale.static_votes
    return f"{finding.votes}/{result.kpi.reps}"


def _blocking_item(finding: ReportedFinding, result: RoundResult, locale: Locale) -> list[str]:
    bullets = [
        locale.summary_item_meta.format(
            location=location(finding),
            category=escaped_line(finding.finding.category),
            votes=_votes(finding, result, locale),
            first_seen=finding.first_seen_round,
        )
    ]
    evidence = finding.finding.evidence.strip()
    if evidence:
        bullets.append(locale.summary_evidence.format(evidence=_bullet_text(evidence)))
    suggestion = finding.finding.suggestion.strip()
    if suggestion:
        bullets.append(locale.summary_suggestion.format(suggestion=_bullet_text(suggestion)))
    fact_check = _fact_check(finding, locale)
    if fact_check is not None:
        bullets.append(locale.summary_fact_check.format(fact_check=fact_check))
    heading = f"#### [{finding.severity.value}] {title(finding)}"
    return [heading, "\n".join(f"- {bullet}" for bullet in bullets)]


def _fact_check(finding: ReportedFinding, locale: Locale) -> str | None:
    """``hold — verified(<claim>)；verified(<claim>)…`` (seed §5.2); ``None`` when not checked.

    The verdict (``hold``, ``refuted``, ``unverified``, ``parse_fail``), `` — ``, then one
    ``<status>(<claim>)`` per claim, each claim cut to 40 characters exactly as the seed does
    (``str[:40]``, no ellipsis). Verdict and status words stay English in both locales, as in
    the seed; claims are separated by ``；`` in zh and ``; `` in en.
    """
    fact_check = finding.fact_check
    if fact_check is None:
        return None
    # The separator belongs in Locale; until it has a field, zh is told apart by identity.
    separator = "；" if locale is get_locale("zh") else "; "
    claims = separator.join(
        f"{check.status.value}({_claim_markdown(check.claim.text)})" for check in fact_check.checks
    )
    verdict = fact_check.verdict.value
    return f"{verdict} — {claims}" if claims else verdict


def _claim_markdown(text: str) -> str:
    """A claim cut to 40 characters, escaped; backticks too, so a code span cut in half by the
    cut cannot pair with a backtick of the next claim."""
    cut = one_line(text)[:40]
    # Each piece is escaped as if a punctuation mark followed it (the "!" appended and dropped),
    # so a trailing backslash is escaped before the "\`" or ")" that follows in the output.
    return "\\`".join(escape_markdown(piece + "!")[:-1] for piece in cut.split("`"))


def _non_blocking_item(finding: ReportedFinding, result: RoundResult, locale: Locale) -> str:
    item = locale.summary_non_blocking_item.format(
        severity=finding.severity.value,
        title=title(finding),
        location=location(finding),
        votes=_votes(finding, result, locale),
    )
    note = downgrade_note(
        finding,
        with_reason=locale.summary_downgrade_note,
        without_reason=locale.summary_downgrade_note_no_reason,
    )
    return f"- {item}{note}"


def _fixed_section(result: RoundResult, locale: Locale) -> list[str]:
    """``已确认修复（recheck）`` (seed §5.2): every earlier finding a recheck closed, cumulative.

    One bullet per ``result.closed`` entry, in its order (newest closure first; within a round,
    fixed before cannot-substantiate, as the seed lists them): ``[P<n>] <original title> —
    <proof>``. Findings closed as no longer substantiated are listed too, as the seed does; en
    marks them, zh keeps the seed's text. Omitted when nothing was ever closed.
    """
    if not result.closed:
        return []
    marker = _NOT_FIXED_MARKERS.get(locale, "")
    items = []
    for closed in result.closed:
        note = marker if closed.status is RecheckStatus.CANNOT_SUBSTANTIATE else ""
        items.append(
            f"- [{closed.severity.value}] {escaped_line(closed.title)} — "
            f"{note}{escaped_line(closed.proof)}"
        )
    return ["### " + locale.summary_fixed_heading, "\n".join(items)]


# The en note on closures that are not fixes. It belongs in the locale; until the locale has a
# field for it, it is keyed by the locale here (zh has none: the seed prints no note).
_NOT_FIXED_MARKERS: dict[Locale, str] = {get_locale("en"): "(no longer applies) "}


def _bullet_text(text: str) -> str:
    return indent_continuation(escape_markdown(text), _BULLET_INDENT)


def _fence_for(text: str) -> str:
    """A backtick fence longer than any backtick run in ``text`` (a model name could hold one)."""
    longest = max((len(run) for run in _BACKTICK_RUN.findall(text)), default=0)
    return "`" * max(3, longest + 1)
