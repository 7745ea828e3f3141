"""Cases on disk: loading, strict truth, archives, and the real git repository they build."""

from __future__ import annotations

import io
import json
import re
import subprocess
import tarfile
from pathlib import Path

import pytest

from assay.errors import ConfigError
from assay.eval import TruthDefect, build_case_repo, load_case, load_cases, parse_truth
from assay.model import Severity, Side
from tests.eval.conftest import CALC_BASE, CALC_HEAD, CALC_TRUTH, write_case


def git(repo: Path, *args: str) -> str:
    done = subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def test_load_case_reads_metadata_and_truth(tmp_path: Path) -> None:
    case_dir = write_case(
        tmp_path,
        "calc",
        base={"calc.py": CALC_BASE},
        head={"calc.py": CALC_HEAD},
        truth=CALC_TRUTH,
        title="Add total()",
        description="Sums values.",
    )

    case = load_case(case_dir)

    assert (case.name, case.title, case.description, case.language) == (
        "calc",
        "Add total()",
        "Sums values.",
        "python",
    )
    assert case.defects == (
        TruthDefect(
            path="calc.py",
            line_start=9,
            line_end=9,
            category="correctness",
            severity=Severity.P0,
            description="summ is not defined: total() raises NameError on every call.",
            needle="summ",
        ),
    )
    assert not case.is_clean


def test_build_commits_base_and_head_deterministically(tmp_path: Path) -> None:
    case = load_case(
        write_case(
            tmp_path / "cases",
            "calc",
            base={"calc.py": CALC_BASE, "README.md": "calc\n"},
            head={"calc.py": CALC_HEAD},
            truth=CALC_TRUTH,
            title="Add total()",
            description="Sums values.",
            extra_toml='delete = ["README.md"]\n',
        )
    )

    first = build_case_repo(case, tmp_path / "one")
    second = build_case_repo(case, tmp_path / "two")

    assert (first.base, first.head) == ("main", "pr")
    assert git(first.path, "rev-parse", "pr") == git(second.path, "rev-parse", "pr")
    assert git(first.path, "log", "-1", "--format=%s%n%b", "pr") == "Add total()\nSums values."
    assert git(first.path, "show", "pr:calc.py") == CALC_HEAD.rstrip("\n")
    assert git(first.path, "ls-tree", "--name-only", "pr") == "calc.py"
    assert git(first.path, "ls-tree", "--name-only", "main") == "README.md\ncalc.py"


def test_build_writes_repo_config_into_the_base(tmp_path: Path) -> None:
    case = load_case(
        write_case(
            tmp_path, "calc", base={"calc.py": CALC_BASE}, head={"calc.py": CALC_HEAD}, truth=[]
        )
    )

    repo = build_case_repo(case, tmp_path / "work", repo_config="[review]\nreps = 2\n")

    assert git(repo.path, "show", "main:.assay.toml") == "[review]\nreps = 2"
    assert git(repo.path, "diff", "--name-only", "main", "pr") == "calc.py"


@pytest.mark.parametrize(
    ("truth", "message"),
    [
        ({"path": "calc.py", "line_start": 9}, "path, line_start and severity are required"),
        (
            {"path": "calc.py", "line_start": 9, "line_end": 3, "severity": "P1"},
            "line_end 3 is before line_start 9",
        ),
        ({"path": "../etc/passwd", "line_start": 1, "severity": "P1"}, "not a relative path"),
        ({"path": "calc.py", "line_start": 0, "severity": "P1"}, "line_start"),
        ({"path": "calc.py", "line_start": 1, "severity": "P9"}, "severity"),
        ({"path": "calc.py", "line_start": 1, "severity": "P1", "colour": "red"}, "colour"),
    ],
)
def test_truth_is_strict(truth: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        parse_truth(json.dumps([truth]))


def test_truth_must_be_a_list() -> None:
    with pytest.raises(ConfigError, match="expected a JSON list"):
        parse_truth('{"path": "a.py"}')


def test_truth_line_end_defaults_to_line_start_and_side_is_kept() -> None:
    (defect,) = parse_truth(
        '[{"path": "./a.py", "line_start": 4, "severity": "P2", "side": "LEFT"}]'
    )
    assert (defect.path, defect.line_end, defect.side) == ("a.py", 4, Side.LEFT)


def test_build_refuses_a_truth_that_drifted_from_its_file(tmp_path: Path) -> None:
    drifted = [{**CALC_TRUTH[0], "line_start": 8, "line_end": 8}]
    case = load_case(
        write_case(
            tmp_path,
            "calc",
            base={"calc.py": CALC_BASE},
            head={"calc.py": CALC_HEAD},
            truth=drifted,
        )
    )
    with pytest.raises(ConfigError, match=re.escape("line 8 of calc.py does not contain 'summ'")):
        build_case_repo(case, tmp_path / "work")


def test_build_refuses_a_truth_past_the_end_of_its_file(tmp_path: Path) -> None:
    past = [{**CALC_TRUTH[0], "line_start": 90, "line_end": 90, "needle": None}]
    case = load_case(
        write_case(
            tmp_path, "calc", base={"calc.py": CALC_BASE}, head={"calc.py": CALC_HEAD}, truth=past
        )
    )
    with pytest.raises(ConfigError, match=re.escape("past the end of calc.py")):
        build_case_repo(case, tmp_path / "work")


def test_load_cases_sorts_and_refuses_an_empty_directory(three_cases: Path, tmp_path: Path) -> None:
    names = [case.name for case in load_cases(three_cases, extract_to=tmp_path / "x")]
    assert names == ["calc", "clean", "leak"]
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no cases"):
        load_cases(tmp_path / "empty", extract_to=tmp_path / "x")


def test_a_case_archive_loads_like_its_directory(three_cases: Path, tmp_path: Path) -> None:
    archive = tmp_path / "calc.tar.gz"
    with tarfile.open(archive, "w:gz") as bundle:
        bundle.add(three_cases / "calc", arcname="calc")

    (case,) = load_cases(archive, extract_to=tmp_path / "extracted")

    assert case.name == "calc"
    repo = build_case_repo(case, tmp_path / "work")
    assert git(repo.path, "show", "pr:calc.py") == CALC_HEAD.rstrip("\n")


def test_an_archive_with_a_link_is_refused(tmp_path: Path) -> None:
    archive = tmp_path / "evil.tar.gz"
    with tarfile.open(archive, "w:gz") as bundle:
        link = tarfile.TarInfo("evil/head/secret")
        link.type = tarfile.SYMTYPE
        link.linkname = "/etc/passwd"
        bundle.addfile(link)
        data = b'title = "x"\n'
        info = tarfile.TarInfo("evil/case.toml")
        info.size = len(data)
        bundle.addfile(info, io.BytesIO(data))

    with pytest.raises(ConfigError, match="not a file or directory"):
        load_cases(archive, extract_to=tmp_path / "extracted")


def test_a_link_in_a_recipe_is_refused(tmp_path: Path) -> None:
    case_dir = write_case(
        tmp_path, "calc", base={"calc.py": CALC_BASE}, head={"calc.py": CALC_HEAD}, truth=[]
    )
    (case_dir / "head" / "passwd").symlink_to("/etc/passwd")
    with pytest.raises(ConfigError, match="regular files, not links"):
        build_case_repo(load_case(case_dir), tmp_path / "work")


def test_a_case_can_name_an_existing_repository_bundle(tmp_path: Path) -> None:
    source = tmp_path / "source"
    source.mkdir()
    git(source, "init", "-q", "-b", "main")
    (source / "a.py").write_text("x = 1\n", encoding="utf-8")
    git(source, "add", "-A")
    git(source, "commit", "-q", "-m", "one")
    (source / "a.py").write_text("x = 2\n", encoding="utf-8")
    git(source, "commit", "-q", "-am", "two")
    case_dir = tmp_path / "cases" / "bundled"
    case_dir.mkdir(parents=True)
    git(source, "bundle", "create", str(case_dir / "repo.bundle"), "--all")
    (case_dir / "case.toml").write_text(
        'title = "Two"\nrepo = "repo.bundle"\nbase = "main~1"\nhead = "main"\n', encoding="utf-8"
    )
    (case_dir / "truth.json").write_text("[]", encoding="utf-8")

    repo = build_case_repo(load_case(case_dir), tmp_path / "work")

    assert (repo.base, repo.head) == ("main~1", "main")
    assert git(repo.path, "show", "main:a.py") == "x = 2"
