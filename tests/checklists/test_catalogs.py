"""The shipped catalogs and the catalog format's validation."""

from __future__ import annotations

from pathlib import Path

import pytest

from assay.checklists import (
    Catalog,
    builtin_catalog_names,
    load_builtin_catalogs,
    parse_catalog,
)
from assay.errors import ConfigError

from ._helpers import RTP_EXAMPLE

GOLDEN = Path(__file__).parent / "golden"


def _entries(catalogs: list[Catalog]) -> set[str]:
    """Every item as the zh review body writes it: ``[<label>] <section> — <text>``."""
    return {
        f"[{catalog.label_of(section)}] {section.title.zh} — {item.text.zh}"
        for catalog in catalogs
        for section, item in catalog.entries()
    }


def test_builtin_catalogs_are_general_python_and_five_languages_in_group_order() -> None:
    assert builtin_catalog_names() == (
        "general",
        "python",
        "cpp",
        "go",
        "typescript",
        "java",
        "rust",
    )
    catalogs = load_builtin_catalogs()
    assert [catalog.catalog.order for catalog in catalogs] == sorted(
        catalog.catalog.order for catalog in catalogs
    )
    ids = [item.id for catalog in catalogs for _, item in catalog.entries()]
    assert len(ids) == len(set(ids)), "item ids must be unique across the shipped catalogs"


def test_every_checklist_item_the_seed_shows_exists_with_its_exact_zh_text() -> None:
    seed = (GOLDEN / "seed_items.zh.txt").read_text(encoding="utf-8").splitlines()
    assert len(seed) == 34
    rtp = parse_catalog(RTP_EXAMPLE.read_text(encoding="utf-8"), source="docs example")

    entries = _entries([*load_builtin_catalogs(), rtp])

    missing = [line for line in seed if line not in entries]
    assert missing == []


def test_seed_ids_are_kept_where_the_seed_cites_them() -> None:
    catalogs = {catalog.name: catalog for catalog in load_builtin_catalogs()}
    rtp = parse_catalog(RTP_EXAMPLE.read_text(encoding="utf-8"), source="docs example")
    texts = {
        item.id: item.text.zh
        for catalog in [*catalogs.values(), rtp]
        for _, item in catalog.entries()
    }
    # The seed's suggestions cite (P.P.G.2), (P.P.G.3), (R.I.1) and (G.6.1.22).
    assert texts["P.G.2"] == "pytest.raises 带 match 参数"
    assert texts["P.G.3"] == "mock/fake/stub 不得替代本次声称覆盖的生产边界"
    assert texts["R.I.1"] == "同一功能用统一工具函数"
    assert texts["G.6.1.22"] == "无 per-forward 调试日志 / 噪声热路径输出"
    assert texts["G.6.1.1"].startswith("SRP：")


def test_python_catalog_fills_sections_p_a_to_p_g() -> None:
    python = next(c for c in load_builtin_catalogs() if c.name == "python")

    labels = [python.label_of(section) for section in python.sections]

    assert labels == ["P.A", "P.B", "P.C", "P.D", "P.E", "P.F", "P.G"]
    assert all(len(section.items) >= 4 for section in python.sections)
    assert python.catalog.applies.languages == ("python",)


def test_static_mappings_of_the_python_catalog() -> None:
    python = next(c for c in load_builtin_catalogs() if c.name == "python")
    checks = {item.id: item.static for _, item in python.entries() if item.static is not None}

    ruff = {item_id: check.ruff for item_id, check in checks.items()}
    assert ruff["P.A.2"] == ("B009", "B010")
    assert set(ruff["P.B.1"]) == {"E722", "BLE001", "S110", "S112"}
    assert ruff["P.C.1"] == ("ASYNC2",)
    assert ruff["P.F.2"] == ("B006",)
    assert checks["P.G.1"].builtin == "tests_changed"
    # A bare-except rule cannot prove that no exception is swallowed in another way.
    assert not checks["P.B.1"].complete
    assert checks["P.A.2"].complete


_MINIMAL = """
[catalog]
name = "team"
title = { en = "Team Checklist", zh = "团队清单" }
label = "T"

[[sections]]
key = "general"
title = { en = "General", zh = "通用" }

[[sections.items]]
id = "T.1"
text = { en = "Logs have a request id", zh = "日志带 request id" }
"""


def test_a_minimal_catalog_parses_with_defaults() -> None:
    catalog = parse_catalog(_MINIMAL, source="team.toml")

    assert catalog.name == "team"
    assert catalog.source == "team.toml"
    assert catalog.catalog.order == 20
    assert catalog.catalog.applies.always
    ((section, item),) = list(catalog.entries())
    assert catalog.label_of(section) == "T"
    assert item.severity == "P3"
    assert item.static is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            (
                'text = { en = "Logs have a request id", zh = "日志带 request id" }',
                'text = { en = "x" }',
            ),
            r"team\.toml: sections\[0\] \(section general\)\.items\[0\] \(item T\.1\)\.text\.zh: "
            r"Field required",
        ),
        (
            ('id = "T.1"', 'id = "T 1"'),
            r"items\[0\] \(item T 1\)\.id: must be 1-64 characters",
        ),
        (
            ('label = "T"', 'label = "T"\napplies = { languages = ["cobol"] }'),
            r"catalog\.applies\.languages: unknown language\(s\) cobol; known: ",
        ),
        (
            ('id = "T.1"', 'id = "T.1"\nstatic = { builtin = "lint_everything" }'),
            r"\(item T\.1\)\.static\.builtin: unknown built-in check 'lint_everything'",
        ),
        (
            ('id = "T.1"', 'id = "T.1"\nstatic = { builtin = "tests_changed", ruff = ["E722"] }'),
            r"\(item T\.1\)\.static: give either `ruff` rule codes or one `builtin` check",
        ),
        (
            ('id = "T.1"', 'id = "T.1"\nstatic = { ruff = ["e722"] }'),
            r"static\.ruff: not a rule code: e722",
        ),
        (
            ('id = "T.1"', 'id = "T.1"\nseverity = "P0"'),
            r"\(item T\.1\)\.severity: Input should be 'P2' or 'P3'",
        ),
        (
            ('id = "T.1"', 'id = "T.1"\ncolour = "red"'),
            r"\(item T\.1\)\.colour: Extra inputs are not permitted",
        ),
        (
            (
                'text = { en = "Logs have a request id", zh = "日志带 request id" }',
                'text = { en = "x", zh = "  " }',
            ),
            r"text\.zh: must not be blank",
        ),
    ],
)
def test_invalid_catalogs_are_rejected_naming_file_item_and_key(
    change: tuple[str, str], message: str
) -> None:
    old, new = change
    assert old in _MINIMAL

    with pytest.raises(ConfigError, match=message):
        parse_catalog(_MINIMAL.replace(old, new, 1), source="team.toml")


def test_duplicate_item_ids_in_one_catalog_are_rejected() -> None:
    text = _MINIMAL + '\n[[sections.items]]\nid = "T.1"\ntext = { en = "again", zh = "再次" }\n'

    with pytest.raises(ConfigError, match=r"team\.toml: duplicate item id 'T\.1'"):
        parse_catalog(text, source="team.toml")


def test_invalid_toml_names_the_file() -> None:
    with pytest.raises(ConfigError, match=r"^team\.toml: invalid TOML: "):
        parse_catalog("[catalog\nname=", source="team.toml")
