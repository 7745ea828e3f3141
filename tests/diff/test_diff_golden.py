"""Golden tests: ``data/<name>.diff`` (made by ``data/gen.sh`` with real git) → ``<name>.json``.

Run this file as a script to print a draft ``.json`` for a new ``.diff`` (then review it by
hand): ``PYTHONPATH=src python tests/diff/test_diff_golden.py tests/diff/data/new.diff``.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from assay.diff import FileDiff, parse_unified_diff

DATA = Path(__file__).parent / "data"
DIFFS = sorted(DATA.glob("*.diff"))
_KIND_SIGNS = {"added": "+", "removed": "-", "context": " "}


def as_json(file: FileDiff) -> dict[str, object]:
    """A reviewable form of a parsed file: each line as ``[sign, old, new, text]``."""
    return {
        "path": file.path,
        "old_path": file.old_path,
        "status": file.status.value,
        "is_binary": file.is_binary,
        "old_mode": file.old_mode,
        "new_mode": file.new_mode,
        "hunks": [
            {
                "header": hunk.header,
                "section": hunk.section,
                "lines": [
                    [_KIND_SIGNS[line.kind.value], line.old_line, line.new_line, line.text]
                    for line in hunk.lines
                ],
            }
            for hunk in file.hunks
        ],
    }


def test_there_are_golden_diffs() -> None:
    assert len(DIFFS) >= 15
    for diff_path in DIFFS:
        assert diff_path.with_suffix(".json").exists(), f"no expected JSON for {diff_path.name}"


@pytest.mark.parametrize("diff_path", DIFFS, ids=[path.stem for path in DIFFS])
def test_golden_diff(diff_path: Path) -> None:
    raw = diff_path.read_bytes()
    expected = json.loads(diff_path.with_suffix(".json").read_text(encoding="utf-8"))
    parsed = parse_unified_diff(raw)
    assert [as_json(file) for file in parsed] == expected
    # The patches cut the diff into pieces without losing or repeating a byte.
    assert "".join(file.patch for file in parsed) == raw.decode("utf-8", "replace")


def test_quoted_and_unquoted_names_parse_alike() -> None:
    plain = parse_unified_diff((DATA / "names.diff").read_bytes())
    quoted = parse_unified_diff((DATA / "names_quotepath.diff").read_bytes())
    assert [as_json(file) for file in quoted] == [as_json(file) for file in plain]


@pytest.mark.skipif(shutil.which("bash") is None, reason="gen.sh needs bash")
def test_gen_sh_reproduces_the_golden_diffs(tmp_path: Path) -> None:
    subprocess.run(["bash", str(DATA / "gen.sh"), str(tmp_path)], check=True, timeout=120)
    generated = sorted(path.name for path in tmp_path.glob("*.diff"))
    assert generated == [path.name for path in DIFFS]
    for name in generated:
        assert (tmp_path / name).read_bytes() == (DATA / name).read_bytes(), name


def draft_json(diff_path: Path) -> str:
    """The parser's current output for ``diff_path``, one diff line per JSON line."""
    files = [as_json(file) for file in parse_unified_diff(diff_path.read_bytes())]
    text = json.dumps(files, indent=2, ensure_ascii=False)
    # Put each [sign, old, new, text] line on one line so the file reads like the diff.
    return re.sub(
        r"\[\n\s+(\"[-+ ]\"),\n\s+(\S+),\n\s+(\S+),\n\s+(\".*\")\n\s+\]",
        r"[\1, \2, \3, \4]",
        text,
    )


if __name__ == "__main__":
    for argument in sys.argv[1:]:
        print(draft_json(Path(argument)))
