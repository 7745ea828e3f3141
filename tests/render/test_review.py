"""Main and follow-up review: sections, notes, time zones, untrusted text."""

from __future__ import annotations

from datetime import datetime
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pytest

from assay.model import Severity, Strength
from assay.render import render_followup, render_review

from ._commonmark import rendered_text
from ._factory import english_round, reported, round_result
from ._visible import visible_text


def _lines(markdown: str) -> list[str]:
    return visible_text(markdown).rstrip("\n").split("\n")


def test_a_local_run_is_titled_by_its_head_branch() -> None:
    result = round_result(
        [reported("a", Severity.P1, "t", "a.py", 1), reported("b", Severity.P2, "t", "a.py", 2)],
        number=None,
        head_ref="feature/pool_v2",
    )

    assert render_review(result).startswith("## AI Code Review - feature/pool_v2\n")
    followup = render_followup(result, lang="zh")
    assert followup is not None
    assert followup.startswith("## AI Code Review - feature/pool_v2 (non-blocking suggestions)\n")


def test_empty_sections_and_severities_are_left_out() -> None:
    result = round_result([reported("a", Severity.P1, "Title", "a.py", 3, suggestion="Fix.")])

    assert _lines(render_review(result, lang="zh")) == [
        "AI Code Review - PR #1344",
        "",
        "Status: BLOCKING",
        "",
        "Summary: P0/0 · P1/1 · P2/0 · P3/0",
        "",
        "Reviewed: commit 1f34a8aa9505 · 2026-08-28 07:52 UTC",
        "",
        "Blocking Issues",
        "",
        "P1",
        "",
        "  • Title @ a.py:3",
        "    • 建议：Fix.",
    ]


def test_a_round_without_findings_is_lgtm_with_header_only() -> None:
    assert _lines(render_review(round_result(), lang="en"))[-3:] == [
        "Reviewed: commit 1f34a8aa9505 · 2026-08-28 07:52 UTC",
        "",
        "lgtm ready to ci",
    ]


def test_a_downgraded_finding_carries_a_note_zh() -> None:
    downgraded = reported(
        "a",
        Severity.P2,
        "Retry sleeps under the lock",
        "app/db.py",
        120,
        original_severity=Severity.P1,
        gate_reason="support 1/5 < 3",
    )
    silent = reported(
        "b", Severity.P2, "Other", "app/db.py", 7, original_severity=Severity.P0, gate_reason=""
    )

    lines = _lines(render_review(round_result([downgraded, silent]), lang="zh"))

    assert "  • Retry sleeps under the lock @ app/db.py:120（由 P1 降级：support 1/5 < 3）" in lines
    assert "  • Other @ app/db.py:7（由 P0 降级）" in lines


def test_files_nobody_reviewed_are_listed_zh() -> None:
    result = round_result(not_reviewed=["vendor/a.min.js", "assets/logo.png"])

    assert _lines(render_review(result, lang="zh"))[-4:] == [
        "未评审",
        "",
        "  • vendor/a.min.js",
        "  • assets/logo.png",
    ]


def test_strengths_with_a_location_name_it() -> None:
    result = round_result(
        strengths=[Strength(text="Good", path="a.py", line=3), Strength(text="Fine", path="b.py")]
    )

    assert _lines(render_review(result))[-2:] == ["  • Good @ a.py:3", "  • Fine @ b.py"]


@pytest.mark.parametrize(
    ("tz", "label"),
    [
        ("UTC", "2026-08-28 07:52 UTC"),
        ("utc+8", "2026-08-28 15:52 UTC+8"),
        ("UTC+05:30", "2026-08-28 13:22 UTC+5:30"),
        ("-0330", "2026-08-28 04:22 UTC-3:30"),
        ("UTC+0", "2026-08-28 07:52 UTC"),
    ],
)
def test_reviewed_time_in_a_fixed_offset(tz: str, label: str) -> None:
    assert f"Reviewed: commit 1f34a8aa9505 · {label}" in _lines(
        render_review(round_result(), tz=tz)
    )


def test_reviewed_time_in_an_iana_zone_uses_the_offset_of_that_date() -> None:
    try:
        ZoneInfo("Europe/Berlin")
    except ZoneInfoNotFoundError:
        pytest.skip("no IANA time zone database on this machine")
    summer = round_result()
    winter = round_result(reviewed_at=datetime(2026, 1, 5, 7, 52))  # naive: taken as UTC

    assert "2026-08-28 09:52 UTC+2" in render_review(summer, tz="Europe/Berlin")
    assert "2026-01-05 08:52 UTC+1" in render_review(winter, tz="Europe/Berlin")


@pytest.mark.parametrize("tz", ["Mars/Olympus", "UTC+24", "UTC+8:75", "", "../etc/passwd"])
def test_an_unknown_time_zone_is_an_error(tz: str) -> None:
    with pytest.raises(ValueError, match="time zone"):
        render_review(round_result(), tz=tz)


def test_untrusted_text_cannot_hide_content_or_add_structure() -> None:
    hostile = reported(
        "a",
        Severity.P1,
        "close() via __del__ leaks <!-- everything below is hidden\n## Fake heading",
        "a.py",
        1,
        suggestion="Use *this* [link](http://x) <img src=x>\n- and a fake item",
    )

    markdown = render_review(round_result([hostile]))
    shown, tags = rendered_text(markdown)

    assert "<!--" not in tags and "img" not in tags and "a" not in tags and "em" not in tags
    assert tags.count("h2") == 1
    assert tags.count("li") == 2
    assert (
        "close() via __del__ leaks <!-- everything below is hidden ## Fake heading @ a.py:1"
        in shown
    )
    assert "Use *this* [link](http://x) <img src=x>\n- and a fake item" in shown


def test_a_multi_line_suggestion_stays_inside_its_item() -> None:
    finding = reported(
        "a",
        Severity.P2,
        "T",
        "a.py",
        1,
        suggestion="Do this:\n\n```python\nx = 1\n```\nthen rerun.",
    )

    markdown = render_review(round_result([finding]))

    assert (
        "- T @ a.py:1\n  - Suggestion: Do this:\n\n"
        "    ```python\n    x = 1\n    ```\n    then rerun."
    ) in markdown
    _, tags = rendered_text(markdown)
    assert tags.count("pre") == 1 and tags.count("li") == 2


def test_followup_only_for_a_blocking_round_with_suggestions() -> None:
    assert render_followup(english_round(blocking=False)) is None
    only_blocking = round_result([reported("a", Severity.P0, "t", "a.py", 1)])
    assert render_followup(only_blocking) is None
    one = round_result(
        [reported("a", Severity.P0, "t", "a.py", 1), reported("b", Severity.P3, "t", "a.py", 2)]
    )
    assert render_followup(one, lang="en") == (
        "## AI Code Review - PR #1344 (non-blocking suggestions)\n\n"
        "1 P2/P3 suggestion; it does not block merging. The blocking verdict and the full"
        " summary are in the previous review.\n"
    )
    assert render_followup(one, lang="zh") == (
        "## AI Code Review - PR #1344 (non-blocking suggestions)\n\n"
        "1 条 P2/P3 建议，不阻塞合并。阻塞判定与完整摘要见上一条 review。\n"
    )
