"""Every human-readable string the renderers print, per locale, in one place.

A string with ``{name}`` fields is filled with ``str.format``; the renderers pass already
escaped values. ``zh`` reproduces the seed system's text exactly (labels, full-width
punctuation, the ASCII colon in the inline ``建议: ``); ``en`` is the same structure in English.
Labels the seed printed in English in both channels (``Status:``, ``Blocking Issues`` …) are
English in both locales.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SUPPORTED_LANGS", "Locale", "get_locale"]


@dataclass(frozen=True)
class Locale:
    """The strings of one language. Field names say where each string is used."""

    # Main review (seed §1.1).
    review_title: str
    status_line: str
    summary_line: str
    reviewed_line: str
    lgtm_line: str
    blocking_heading: str
    non_blocking_heading: str
    not_reviewed_heading: str
    strengths_heading: str
    body_suggestion: str
    downgrade_note: str
    downgrade_note_no_reason: str
    # Follow-up review (seed §2).
    followup_title: str
    followup_body: str
    followup_body_one: str
    # Inline comments (seed §3).
    inline_suggestion: str
    checklist_line: str
    moved_preface: str
    file_level_preface: str
    # Round summary (seed §5).
    summary_header: str
    meta_title: str
    meta_title_no_author: str
    meta_commits: str
    summary_blocking_heading: str
    summary_item_meta: str
    summary_evidence: str
    summary_suggestion: str
    summary_fact_check: str
    summary_non_blocking_heading: str
    summary_non_blocking_item: str
    summary_downgrade_note: str
    summary_downgrade_note_no_reason: str
    summary_fixed_heading: str
    summary_kpi_heading: str
    summary_footer: str
    summary_signature: str
    static_votes: str


_ZH = Locale(
    review_title="AI Code Review - {target}",
    status_line="Status: {status}",
    summary_line="Summary: P0/{p0} · P1/{p1} · P2/{p2} · P3/{p3}",
    reviewed_line="Reviewed: commit {sha} · {timestamp}",
    lgtm_line="lgtm ready to ci",
    blocking_heading="Blocking Issues",
    non_blocking_heading="Non-blocking Suggestions",
    not_reviewed_heading="未评审",
    strengths_heading="Strengths",
    body_suggestion="建议：{suggestion}",
    downgrade_note="（由 {original} 降级：{reason}）",
    downgrade_note_no_reason="（由 {original} 降级）",
    followup_title="AI Code Review - {target} (non-blocking suggestions)",
    followup_body="{count} 条 P2/P3 建议，不阻塞合并。阻塞判定与完整摘要见上一条 review。",
    followup_body_one="{count} 条 P2/P3 建议，不阻塞合并。阻塞判定与完整摘要见上一条 review。",
    inline_suggestion="建议: {suggestion}",
    checklist_line="Checklist: {items}",
    moved_preface="📍 实际位置 {location}（不在 diff 展示范围内，就近挂载）",
    file_level_preface="📍 实际位置 {location}（该文件没有可评论的 diff 行，作为文件级评论）",
    summary_header="{target} 第 {round} 轮评审 — {verdict}",
    meta_title="标题：{title}（@{author}，{state}）",
    meta_title_no_author="标题：{title}（{state}）",
    meta_commits=("head {head} · base {base} · delta {delta} 文件 · discover {ok}/{reps} 成功"),
    summary_blocking_heading="阻塞项（P0/P1，support≥{min_support} 且过全部门）",
    summary_item_meta="{location} · 类别 {category} · 票数 {votes} · 首见 r{first_seen}",
    summary_evidence="依据：{evidence}",
    summary_suggestion="建议：{suggestion}",
    summary_fact_check="事实核验：{fact_check}",
    summary_non_blocking_heading="非阻塞发现（并集报告：单票也保留，降级不丢弃）",
    summary_non_blocking_item="[{severity}] {title} — {location} · 票数 {votes}",
    summary_downgrade_note=" · 由 {original} 降级：{reason}",
    summary_downgrade_note_no_reason=" · 由 {original} 降级",
    summary_fixed_heading="已确认修复（recheck）",
    summary_kpi_heading="本轮 KPI",
    summary_footer="本报告由 {platform} 自动生成，同一 PR 的后续轮次就地更新同一条评论。",
    summary_signature=(
        "{platform} review · 第 {round} 轮 · head {head} · {verdict}"
        " · 同一 PR 的结论就地更新这一条评论"
    ),
    static_votes="static",
)

_EN = Locale(
    review_title="AI Code Review - {target}",
    status_line="Status: {status}",
    summary_line="Summary: P0/{p0} · P1/{p1} · P2/{p2} · P3/{p3}",
    reviewed_line="Reviewed: commit {sha} · {timestamp}",
    lgtm_line="lgtm ready to ci",
    blocking_heading="Blocking Issues",
    non_blocking_heading="Non-blocking Suggestions",
    not_reviewed_heading="Not reviewed",
    strengths_heading="Strengths",
    body_suggestion="Suggestion: {suggestion}",
    downgrade_note=" (downgraded from {original}: {reason})",
    downgrade_note_no_reason=" (downgraded from {original})",
    followup_title="AI Code Review - {target} (non-blocking suggestions)",
    followup_body=(
        "{count} P2/P3 suggestions; they do not block merging."
        " The blocking verdict and the full summary are in the previous review."
    ),
    followup_body_one=(
        "{count} P2/P3 suggestion; it does not block merging."
        " The blocking verdict and the full summary are in the previous review."
    ),
    inline_suggestion="Suggestion: {suggestion}",
    checklist_line="Checklist: {items}",
    moved_preface="📍 Actual location {location} (outside the diff; attached to the nearest hunk)",
    file_level_preface=(
        "📍 Actual location {location} (no commentable diff line in this file;"
        " posted as a file-level comment)"
    ),
    summary_header="{target} review round {round} — {verdict}",
    meta_title="Title: {title} (@{author}, {state})",
    meta_title_no_author="Title: {title} ({state})",
    meta_commits=(
        "head {head} · base {base} · delta {delta} files · discover {ok}/{reps} succeeded"
    ),
    summary_blocking_heading=("Blocking (P0/P1, support ≥ {min_support} and passed every gate)"),
    summary_item_meta=(
        "{location} · category {category} · votes {votes} · first seen r{first_seen}"
    ),
    summary_evidence="Evidence: {evidence}",
    summary_suggestion="Suggestion: {suggestion}",
    summary_fact_check="Fact check: {fact_check}",
    summary_non_blocking_heading=(
        "Non-blocking findings (union report: single votes kept, downgrades never dropped)"
    ),
    summary_non_blocking_item="[{severity}] {title} — {location} · votes {votes}",
    summary_downgrade_note=" · downgraded from {original}: {reason}",
    summary_downgrade_note_no_reason=" · downgraded from {original}",
    summary_fixed_heading="Confirmed fixed (recheck)",
    summary_kpi_heading="Round KPI",
    summary_footer=(
        "This report is generated by {platform}; later rounds of the same PR update this"
        " comment in place."
    ),
    summary_signature=(
        "{platform} review · round {round} · head {head} · {verdict}"
        " · the verdict for this PR is updated in place in this comment"
    ),
    static_votes="static",
)

_LOCALES: dict[str, Locale] = {"en": _EN, "zh": _ZH}

SUPPORTED_LANGS: tuple[str, ...] = tuple(sorted(_LOCALES))
"""The ``lang`` values every renderer accepts."""


def get_locale(lang: str) -> Locale:
    """Return the strings of ``lang``.

    Args:
        lang: A supported language code (``"en"`` or ``"zh"``).

    Returns:
        The locale's strings.

    Raises:
        ValueError: ``lang`` is not supported; the message lists the supported ones.
    """
    try:
        return _LOCALES[lang]
    except KeyError:
        supported = ", ".join(SUPPORTED_LANGS)
        raise ValueError(f"unsupported lang {lang!r}; supported: {supported}") from None
