"""Strength deduplication and the ``assay checklists`` listing."""

from __future__ import annotations

from assay.checklists import (
    dedupe_strengths,
    load_builtin_catalogs,
    parse_catalog,
    render_catalog_listing,
)
from assay.model import Strength

from ._helpers import RTP_EXAMPLE


def test_near_duplicates_from_several_reps_merge_and_the_best_supported_come_first() -> None:
    strengths = [
        Strength(text="The pool is closed in the shutdown hook.", path="app/db.py", line=40),
        Strength(text="Timeouts are configurable per query.", path="app/db.py", line=12),
        Strength(text="The pool is closed in the shutdown hook!", path="app/db.py", line=40),
        Strength(text="the pool is closed in the shutdown hook", path=None, line=None),
        Strength(text="Timeouts are configurable for each query", path="app/db.py", line=12),
        Strength(text="Messager.cpp:73-85 拆分了原先的短路判断，修掉空指针解引用的必然崩溃。"),
        Strength(text="Messager.cpp:73-85 拆分了原先的短路判断，修掉了空指针解引用的必然崩溃。"),
        Strength(text="   "),
    ]

    kept = dedupe_strengths(strengths)

    assert [s.text for s in kept] == [
        "The pool is closed in the shutdown hook.",
        "Timeouts are configurable per query.",
        "Messager.cpp:73-85 拆分了原先的短路判断，修掉空指针解引用的必然崩溃。",
    ]
    assert (kept[0].path, kept[0].line) == ("app/db.py", 40)


def test_different_remarks_stay_apart_and_the_limit_applies() -> None:
    strengths = [
        Strength(text="The pool is closed in the shutdown hook."),
        Strength(text="The cache is invalidated on every write."),
        Strength(text="Errors keep their original error code across the RPC boundary."),
    ]

    assert len(dedupe_strengths(strengths)) == 3
    assert [s.text for s in dedupe_strengths(strengths, limit=2)] == [
        "The pool is closed in the shutdown hook.",
        "The cache is invalidated on every write.",
    ]
    assert dedupe_strengths([]) == ()


def test_an_uncited_first_wording_takes_the_cluster_s_citation() -> None:
    kept = dedupe_strengths(
        [
            Strength(text="Retries are bounded by a deadline."),
            Strength(text="Retries are bounded by a deadline", path="app/retry.py", line=7),
        ]
    )

    assert kept == (
        Strength(text="Retries are bounded by a deadline.", path="app/retry.py", line=7),
    )


def test_listing_shows_catalogs_sections_items_and_checks() -> None:
    rtp = parse_catalog(RTP_EXAMPLE.read_text(encoding="utf-8"), source="base:rtp.toml")
    catalogs = [*load_builtin_catalogs()[:2], rtp]

    english = render_catalog_listing(catalogs, lang="en")
    chinese = render_catalog_listing(catalogs, lang="zh")

    lines = english.splitlines()
    assert lines[0] == (
        "General Principles Checklist [general] · label 6.1 · applies: always · 25 items"
        " · builtin:general.toml"
    )
    assert lines[1] == "  [6.1] Software Engineering"
    assert (
        "    G.6.1.15  New logic has focused unit tests plus the related integration/smoke tests"
        "  (check: tests_changed)"
    ) in lines
    assert any(line.startswith("Python Static-First Checklist [python]") for line in lines)
    assert "applies: languages python" in english
    assert (
        "    P.A.2  No getattr/setattr with a literal attribute name  (ruff: B009, B010 (complete))"
        in lines
    )
    assert "  [I] 代码质量" in chinese.splitlines()
    assert "    R.I.1  同一功能用统一工具函数" in chinese.splitlines()
    assert english.endswith("\n") and "\n\n\n" not in english
    assert render_catalog_listing([], lang="zh") == "未启用任何清单。\n"
