"""Untrusted diffs: whatever the input, the parser returns files or raises ``DiffError``."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from assay.diff import parse_unified_diff
from assay.errors import DiffError

GOLDEN_LINES = [
    line
    for path in sorted((Path(__file__).parent / "data").glob("*.diff"))
    for line in path.read_bytes().decode("utf-8", "replace").splitlines(keepends=True)
]


def parses_or_refuses(diff: str | bytes) -> None:
    try:
        files = parse_unified_diff(diff)
    except DiffError as error:
        assert str(error)
        return
    for file in files:
        assert file.path
        for hunk in file.hunks:
            for line in hunk.lines:
                assert "\n" not in line.text


@given(st.binary(max_size=400))
def test_random_bytes(data: bytes) -> None:
    parses_or_refuses(data)


@given(st.lists(st.sampled_from(GOLDEN_LINES), max_size=40))
def test_shuffled_lines_of_real_diffs(lines: list[str]) -> None:
    parses_or_refuses("".join(lines))


@given(st.lists(st.sampled_from(GOLDEN_LINES), max_size=30), st.text(max_size=40))
def test_real_lines_with_noise(lines: list[str], noise: str) -> None:
    parses_or_refuses(noise + "".join(lines) + noise)
