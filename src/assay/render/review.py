"""The main review body and the follow-up review body (seed §1 and §2).

Markdown is chosen so that GitHub's rendering, saved as text, reads exactly like the seed pages:
headings (``##``/``###``/``####``) and ``-`` list markers render away, every block is separated
by one blank line, lists are tight. Layout of the main review::

    ## AI Code Review - PR #1344          (a local run: AI Code Review - <head branch>)
    Status: BLOCKING | LGTM
    Summary: P0/a · P1/b · P2/c · P3/d
    Reviewed: commit <12 hex> · 2026-08-28 15:52 UTC+8
    lgtm ready to ci                      only when LGTM
    ### Blocking Issues                   P0 and P1, each a #### sub-heading, omitted when empty
    - <title> @ <path>:<line><downgrade note>
      - 建议：<suggestion>                 (en: Suggestion: …)
    ### Non-blocking Suggestions          P2 and P3, same item format
    ### 未评审 / Not reviewed              files no reviewer saw, when there are any
    ### Checklist Findings (N fail / M total)   when the round evaluated checklist items
    #### <checklist title>               only checklists with a failing item; entries sorted
    - [<label>] <section> — <item> → issue <title>
      <evidence of the linked finding, cut without "...">
    ### Strengths                         when there are any

Items keep ``result.findings`` order within each severity; ``path:line`` is always the finding's
actual location, also when its inline comment was moved or could not be posted (anchor mode
BODY: the body is then the only place the finding appears). A finding the gate downgraded shows
its effective severity plus a note on its item line: zh ``（由 P1 降级：<gate reason>）``, en
`` (downgraded from P1: <gate reason>)``.
"""

from __future__ import annotations

from collections.abc import Sequence

from assay.model import (
    ChecklistItemResult,
    ReportedFinding,
    RoundResult,
    Severity,
    Strength,
    Verdict,
)
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
from assay.render._time import format_timestamp
from assay.render.comments import truncate_evidence

__all__ = ["render_followup", "render_review"]

_SUGGESTION_INDENT = "    "
"""Content indent of the nested ``  - `` suggestion item: continuation lines stay inside it."""


def render_review(result: RoundResult, *, lang: str = "en", tz: str = "UTC") -> str:
    """Render the main review body.

    Args:
        result: The round.
        lang: ``"en"`` or ``"zh"``.
        tz: Time zone of the ``Reviewed:`` time: ``UTC`` (default), an offset such as
            ``UTC+8``, or an IANA name such as ``Asia/Shanghai``.

    Returns:
        The review body as GitHub markdown, ending with a newline.

    Raises:
        ValueError: Unsupported ``lang`` or unknown ``tz``.
    """
    locale = get_locale(lang)
    verdict = result.verdict
    blocks = [
        "## " + locale.review_title.format(target=target(result.pr)),
        locale.status_line.format(status=verdict.value),
        locale.summary_line.format(
            p0=result.count(Severity.P0),
            p1=result.count(Severity.P1),
            p2=result.count(Severity.P2),
            p3=result.count(Severity.P3),
        ),
        locale.reviewed_line.format(
            sha=short_sha(result.pr.head_sha),
            timestamp=format_timestamp(result.reviewed_at, tz),
        ),
    ]
    if verdict is Verdict.LGTM:
        blocks.append(locale.lgtm_line)
    blocks += _severity_section(
        locale.blocking_heading, (Severity.P0, Severity.P1), result.findings, locale
    )
    blocks += _severity_section(
        locale.non_blocking_heading, (Severity.P2, Severity.P3), result.findings, locale
    )
    blocks += _not_reviewed_section(result.coverage.not_reviewed, locale)
    blocks += _checklist_section(result, locale)
    blocks += _strengths_section(result.strengths, locale)
    return "\n\n".join(blocks) + "\n"


def render_followup(result: RoundResult, *, lang: str = "en") -> str | None:
    """Render the follow-up review that carries the P2/P3 inline comments of a BLOCKING round.

    Args:
        result: The round.
        lang: ``"en"`` or ``"zh"``.

    Returns:
        The body, or ``None`` when there is no follow-up: an LGTM round (its main review carries
        every comment) or a BLOCKING round without P2/P3 findings.

    Raises:
        ValueError: Unsupported ``lang``.
    """
    locale = get_locale(lang)
    if result.verdict is not Verdict.BLOCKING:
        return None
    count = result.count(Severity.P2) + result.count(Severity.P3)
    if count == 0:
        return None
    body = locale.followup_body_one if count == 1 else locale.followup_body
    heading = "## " + locale.followup_title.format(target=target(result.pr))
    return f"{heading}\n\n{body.format(count=count)}\n"


def _severity_section(
    heading: str,
    severities: tuple[Severity, ...],
    findings: Sequence[ReportedFinding],
    locale: Locale,
) -> list[str]:
    blocks: list[str] = []
    for severity in severities:
        items = [_item(finding, locale) for finding in findings if finding.severity is severity]
        if items:
            blocks += [f"#### {severity.value}", "\n".join(items)]
    return [f"### {heading}", *blocks] if blocks else []


def _item(finding: ReportedFinding, locale: Locale) -> str:
    note = downgrade_note(
        finding,
        with_reason=locale.downgrade_note,
        without_reason=locale.downgrade_note_no_reason,
    )
    line = f"- {title(finding)} @ {location(finding)}{note}"
    suggestion = finding.finding.suggestion.strip()
    if not suggestion:
        return line
    text = indent_continuation(escape_markdown(suggestion), _SUGGESTION_INDENT)
    return f"{line}\n  - {locale.body_suggestion.format(suggestion=text)}"


def _not_reviewed_section(paths: Sequence[str], locale: Locale) -> list[str]:
    if not paths:
        return []
    return [f"### {locale.not_reviewed_heading}", "\n".join(f"- {escaped_line(p)}" for p in paths)]


_CHECKLIST_HEADING = "Checklist Findings ({failed} fail / {total} total)"
"""The seed prints the block's labels in English in both locales (``→ issue`` too)."""
_CHECKLIST_ISSUE = " → issue {title}"
_CHECKLIST_EVIDENCE_INDENT = "  "


def _checklist_section(result: RoundResult, locale: Locale) -> list[str]:
    """Checklist Findings (seed §1.2), when the round evaluated any checklist item.

    ``### Checklist Findings (<N> fail / <M> total)``, then per checklist with at least one
    failing item (groups in the report's catalog order) a ``####`` heading with its title and
    one entry per failing item, sorted by code point of ``[<label>] <section> — <item>``::

        - [6.1] Architecture — 兼容性：… → issue <title of the linked finding>
          <the finding's evidence, cut by truncate_evidence(..., ellipsis=False), one line>
    """
    del locale  # the block's labels are English in both locales, as on the seed pages
    report = result.checklist
    if report is None or report.total == 0:
        return []
    failed = report.failed
    blocks = [f"### {_CHECKLIST_HEADING.format(failed=len(failed), total=report.total)}"]
    titles = dict(zip(report.checklists, report.checklist_titles, strict=False))
    # Groups in catalog order; an item naming a checklist the report does not list goes last.
    groups = list(dict.fromkeys([*report.checklists, *(item.checklist for item in failed)]))
    findings = {finding.id: finding for finding in result.findings}
    for group in groups:
        entries = sorted(
            (item for item in failed if item.checklist == group), key=_checklist_entry_text
        )
        if entries:
            blocks.append(f"#### {escaped_line(titles.get(group, group))}")
            blocks.append("\n".join(_checklist_entry(item, findings) for item in entries))
    return blocks


def _checklist_entry_text(item: ChecklistItemResult) -> str:
    return f"[{item.label}] {item.section} — {item.text}"


def _checklist_entry(item: ChecklistItemResult, findings: dict[str, ReportedFinding]) -> str:
    line = f"- {escaped_line(_checklist_entry_text(item))}"
    finding = findings.get(item.finding_id) if item.finding_id is not None else None
    if finding is None:
        return line
    line += _CHECKLIST_ISSUE.format(title=title(finding))
    evidence = finding.finding.evidence.strip()
    if not evidence:
        return line
    cut = escape_markdown(one_line(truncate_evidence(evidence, ellipsis=False)))
    return f"{line}\n{_CHECKLIST_EVIDENCE_INDENT}{cut}"


def _strengths_section(strengths: Sequence[Strength], locale: Locale) -> list[str]:
    items = [f"- {_strength(strength)}" for strength in strengths if strength.text.strip()]
    if not items:
        return []
    return [f"### {locale.strengths_heading}", "\n".join(items)]


def _strength(strength: Strength) -> str:
    """The strength's text, then `` @ path:line`` when it names a location of its own."""
    text = escaped_line(strength.text)
    if strength.path is None:
        return text
    where = escaped_line(strength.path)
    return f"{text} @ {where}" if strength.line is None else f"{text} @ {where}:{strength.line}"
