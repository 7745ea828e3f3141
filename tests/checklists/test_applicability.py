"""Languages, test paths and globs; which items apply, and the deterministic ``M total``."""

from __future__ import annotations

import random

import pytest

from assay.checklists import (
    applicable_items,
    detect_language,
    is_test_path,
    languages_in,
    load_builtin_catalogs,
    parse_catalog,
)
from assay.checklists.languages import glob_matches
from assay.diff.types import FileDiff, FileStatus

from ._helpers import RTP_EXAMPLE, changed_file


@pytest.mark.parametrize(
    ("path", "language"),
    [
        ("rtp_llm/cpp/model_rpc/DecodeRpcServer.cc", "cpp"),
        ("rtp_llm/cpp/model_rpc/DecodeRpcServer.h", "cpp"),
        ("kernels/attention.cu", "cpp"),
        ("rtp_llm/access_logger/async_log_handler.py", "python"),
        ("stubs/api.pyi", "python"),
        ("cmd/server/main.go", "go"),
        ("web/src/App.tsx", "typescript"),
        ("web/src/index.mjs", "javascript"),
        ("src/main/java/a/B.java", "java"),
        ("src/lib.rs", "rust"),
        ("rtp_llm/BUILD", "starlark"),
        ("bazel/defs.bzl", "starlark"),
        ("proto/model_rpc_service.proto", "proto"),
        ("README.md", None),
        ("pom.xml", None),
        ("Makefile", None),
    ],
)
def test_language_of_a_path(path: str, language: str | None) -> None:
    assert detect_language(path) == language


@pytest.mark.parametrize(
    ("path", "is_test"),
    [
        ("tests/test_cache.py", True),
        ("pkg/test_cache.py", True),
        ("pkg/cache_test.py", True),
        ("pkg/conftest.py", True),
        ("pkg/cache.py", False),
        ("pkg/contest.py", False),
        ("cmd/server/main_test.go", True),
        ("cmd/server/main.go", False),
        ("rtp_llm/cpp/model_rpc/test/DecodeRpcServerTest.cc", True),
        ("src/cache_unittest.cc", True),
        ("src/latest.cc", False),
        ("web/src/App.test.tsx", True),
        ("web/src/__tests__/App.tsx", True),
        ("web/src/App.tsx", False),
        ("src/test/java/a/BTest.java", True),
        ("src/main/java/a/BTest.java", True),
        ("src/main/java/a/Split.java", False),
        ("src/main/java/a/OrderIT.java", True),
        ("tests/integration.rs", True),
        ("tests/fixtures/data.json", False),
        ("docs/testing.md", False),
    ],
)
def test_test_paths_by_language_convention(path: str, is_test: bool) -> None:
    assert is_test_path(path) is is_test


@pytest.mark.parametrize(
    ("pattern", "path", "matches"),
    [
        ("*.bzl", "bazel/defs.bzl", True),
        ("BUILD", "a/b/BUILD", True),
        ("src/*.py", "src/a.py", True),
        ("src/*.py", "src/a/b.py", False),
        ("src/**/*.py", "src/a/b.py", True),
        ("src/**/*.py", "src/b.py", True),
        ("**/migrations/**", "app/migrations/0001.py", True),
        ("docs/**", "src/docs.py", False),
        ("a?c.txt", "abc.txt", True),
        ("a.c", "abc", False),
    ],
)
def test_globs_are_gitignore_style(pattern: str, path: str, matches: bool) -> None:
    assert glob_matches(pattern, path) is matches


def _sizes() -> dict[str, int]:
    return {c.name: sum(1 for _ in c.entries()) for c in load_builtin_catalogs()}


def _total(files: list[FileDiff]) -> int:
    return len(applicable_items(load_builtin_catalogs(), files))


@pytest.mark.parametrize(
    ("paths", "catalogs"),
    [
        (["README.md"], ["general"]),
        (["app/cache.py", "tests/test_cache.py"], ["general", "python"]),
        (
            ["rtp_llm/cpp/Decode.cc", "rtp_llm/cpp/Decode.h", "rtp_llm/grammar.py"],
            ["general", "python", "cpp"],
        ),
        (["cmd/main.go", "go.mod"], ["general", "go"]),
        (
            ["web/src/App.tsx", "src/main/java/A.java", "src/lib.rs"],
            ["general", "typescript", "java", "rust"],
        ),
        (["web/index.js"], ["general", "typescript"]),
        (["rtp_llm/BUILD", "proto/rpc.proto", "pom.xml"], ["general"]),
    ],
)
def test_m_total_is_the_sum_of_the_applicable_catalogs(
    paths: list[str], catalogs: list[str]
) -> None:
    files = [changed_file(path) for path in paths]
    sizes = _sizes()
    expected = sum(sizes[name] for name in catalogs)
    # Item-level narrowing: TS.A.1 (no `any`) applies to TypeScript only.
    if "typescript" in catalogs and not any(p.endswith((".ts", ".tsx")) for p in paths):
        expected -= 1

    assert _total(files) == expected


def test_m_total_ignores_file_order_repetition_and_change_size() -> None:
    paths = ["app/a.py", "app/b.py", "src/x.cc", "cmd/m.go", "README.md"]
    files = [changed_file(path) for path in paths]
    expected = _total(files)
    shuffled = list(files)
    random.Random(7).shuffle(shuffled)

    assert _total(shuffled) == expected
    assert _total([changed_file(p, added=50, removed=20) for p in paths]) == expected
    assert _total([*files, changed_file("app/c.py")]) == expected


def test_deleted_and_renamed_files_count_by_their_paths() -> None:
    deleted = changed_file("old/tests/test_legacy.py", status=FileStatus.DELETED)
    renamed = FileDiff(path="notes/legacy.txt", old_path="old/legacy.py", status=FileStatus.RENAMED)

    assert languages_in(["old/tests/test_legacy.py"]) == {"python"}
    names = {item.catalog.name for item in applicable_items(load_builtin_catalogs(), [deleted])}
    assert names == {"general", "python"}
    names = {item.catalog.name for item in applicable_items(load_builtin_catalogs(), [renamed])}
    assert names == {"general", "python"}


def test_a_repository_catalog_with_path_globs_applies_only_to_matching_changes() -> None:
    text = RTP_EXAMPLE.read_text(encoding="utf-8").replace(
        'applies = "always"', 'applies = { paths = ["rtp_llm/**/*.cc", "*.bzl"] }'
    )
    rtp = parse_catalog(text, source="rtp.toml")

    assert applicable_items([rtp], [changed_file("docs/a.md")]) == ()
    assert len(applicable_items([rtp], [changed_file("rtp_llm/cpp/x/y.cc")])) == 2
    assert len(applicable_items([rtp], [changed_file("bazel/defs.bzl")])) == 2


def test_applicable_items_keep_catalog_then_item_order() -> None:
    files = [changed_file("app/a.py")]

    items = applicable_items(load_builtin_catalogs(), files)

    assert [i.item_id for i in items[:3]] == ["G.6.1.1", "G.6.1.2", "G.6.1.3"]
    assert items[-1].item_id == "P.G.6"
    assert items[-1].label == "P.G"
    assert items[-1].section_title("zh") == "测试规范"
