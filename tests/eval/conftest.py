"""Small benchmark cases written into temp dirs, and the simulator's settings for tests."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

CALC_BASE = "def add(a, b):\n    return a + b\n"
CALC_HEAD = (
    "def add(a, b):\n"
    "    return a + b\n"
    "\n"
    "\n"
    "def total(values):\n"
    "    result = 0\n"
    "    for value in values:\n"
    "        result = add(result, value)\n"
    "    return summ(values)\n"
)
CALC_TRUTH = [
    {
        "path": "calc.py",
        "line_start": 9,
        "line_end": 9,
        "category": "correctness",
        "severity": "P0",
        "description": "summ is not defined: total() raises NameError on every call.",
        "needle": "summ",
    }
]

LEAK_BASE = "def size(path):\n    return len(path)\n"
LEAK_HEAD = (
    "def size(path):\n"
    "    return len(path)\n"
    "\n"
    "\n"
    "def read_all(paths):\n"
    "    contents = []\n"
    "    for path in paths:\n"
    "        handle = open(path)\n"
    "        contents.append(handle.read())\n"
    "    return contents\n"
    "\n"
    "\n"
    "def count_lines(text):\n"
    "    lines = text.splitlines()\n"
    "    return len(lines)\n"
)
LEAK_TRUTH = [
    {
        "path": "files.py",
        "line_start": 8,
        "line_end": 8,
        "category": "resource-leak",
        "severity": "P2",
        "description": "Each opened file is never closed: one descriptor leaks per path.",
        "needle": "open(path)",
    }
]

CLEAN_BASE = "def greet(name):\n    return 'hello ' + name\n"
CLEAN_HEAD = (
    "def greet(name):\n"
    "    return 'hello ' + name\n"
    "\n"
    "\n"
    "def shout(name):\n"
    "    return greet(name).upper()\n"
)

WriteCase = Callable[..., Path]


def write_case(
    root: Path,
    name: str,
    *,
    base: Mapping[str, str],
    head: Mapping[str, str],
    truth: Sequence[Mapping[str, Any]],
    title: str = "A change",
    description: str = "",
    language: str = "python",
    extra_toml: str = "",
) -> Path:
    """Write one recipe case under ``root/name`` and return its directory."""
    case_dir = root / name
    case_dir.mkdir(parents=True)
    (case_dir / "case.toml").write_text(
        f"title = {json.dumps(title)}\ndescription = {json.dumps(description)}\n"
        f'language = "{language}"\n{extra_toml}',
        encoding="utf-8",
    )
    for side, files in (("base", base), ("head", head)):
        for path, content in files.items():
            target = case_dir / side / path
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(content, encoding="utf-8")
    (case_dir / "truth.json").write_text(json.dumps(list(truth)), encoding="utf-8")
    return case_dir


@pytest.fixture
def three_cases(tmp_path: Path) -> Path:
    """A defect caught by ruff too, a defect only a reviewer sees, and a clean change."""
    root = tmp_path / "cases"
    write_case(
        root,
        "calc",
        base={"calc.py": CALC_BASE},
        head={"calc.py": CALC_HEAD},
        truth=CALC_TRUTH,
        title="Add total()",
        description="Sums values.",
    )
    write_case(
        root,
        "leak",
        base={"files.py": LEAK_BASE},
        head={"files.py": LEAK_HEAD},
        truth=LEAK_TRUTH,
        title="Read many files",
    )
    write_case(
        root,
        "clean",
        base={"greet.py": CLEAN_BASE},
        head={"greet.py": CLEAN_HEAD},
        truth=[],
        title="Add shout()",
    )
    return root
