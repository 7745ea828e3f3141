"""`assay review` with no model configured: the static-first pass alone."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from tests.integration.conftest import CALC_BASE, CALC_UNDEFINED, CliResult, commit_all, git, write


def test_undefined_name_blocks_without_a_model(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})
    out = tmp_path / "out"

    done = run_cli("review", "--repo", str(repo), "--base", "main", "--out", str(out))

    assert done.exit_code == 0
    assert "Status: BLOCKING" in done.stdout
    assert "Summary: P0/1 · P1/0 · P2/0 · P3/0" in done.stdout
    assert "@ calc.py:6" in done.stdout
    findings = json.loads((out / "findings.json").read_text(encoding="utf-8"))
    assert [(f["severity"], f["code"], f["line"], f["blocking"]) for f in findings] == [
        ("p0", "F821", 6, True)
    ]
    comments = json.loads((out / "comments.json").read_text(encoding="utf-8"))
    assert [(c["path"], c["line"], c["side"], c["moved"]) for c in comments] == [
        ("calc.py", 6, "RIGHT", False)
    ]
    assert comments[0]["body"].startswith("[P0] ")
    kpi = json.loads((out / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["blocking"] == 1 and kpi["static_findings"] == 1
    assert kpi["reps"] == 0 and "discover" in kpi["skipped"]
    for name in ("review.md", "summary.md", "result.json"):
        assert (out / name).is_file(), name
    assert not (out / "followup.md").exists()  # BLOCKING, but no P2/P3 to follow up
    assert "BLOCKED(1)" in (out / "summary.md").read_text(encoding="utf-8")


def test_fail_on_blocking_exits_3_and_followup_carries_p2(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    swallowing = CALC_UNDEFINED + "\n\ntry:\n    import os\nexcept:\n    os = None\n"
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": swallowing})
    out = tmp_path / "out"

    done = run_cli(
        "review", "--repo", str(repo), "--base", "main", "--fail-on", "blocking", "--out", str(out)
    )

    assert done.exit_code == 3
    followup = (out / "followup.md").read_text(encoding="utf-8")
    assert "1 P2/P3 suggestion" in followup
    comments = json.loads((out / "comments.json").read_text(encoding="utf-8"))
    assert {(c["severity"], c["review"]) for c in comments} == {("P0", "main"), ("P2", "followup")}


def test_lgtm_review_has_no_followup(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    clean = CALC_BASE + "\n\ndef total(values):\n    return sum(values)\n"
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": clean})
    out = tmp_path / "out"

    done = run_cli(
        "review", "--repo", str(repo), "--base", "main", "--out", str(out), "--fail-on", "blocking"
    )

    assert done.exit_code == 0
    assert "Status: LGTM" in done.stdout
    assert not (out / "followup.md").exists()


def test_zh_locale_reproduces_seed_labels(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult]
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})

    done = run_cli("review", "--repo", str(repo), "--base", "main", "--lang", "zh", "--tz", "UTC+8")

    assert "Status: BLOCKING" in done.stdout
    assert "UTC+8" in done.stdout
    assert "建议：" in done.stdout


def test_json_format_prints_findings(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult]
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})

    done = run_cli("review", "--repo", str(repo), "--base", "main", "--format", "json")

    findings = json.loads(done.stdout)
    assert findings[0]["code"] == "F821"


def test_default_base_is_previous_commit(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult]
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})

    done = run_cli("review", "--repo", str(repo))

    assert done.exit_code == 0
    assert "@ calc.py:6" in done.stdout


def test_rename_deletion_binary_and_mode_change(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    repo = make_repo(
        {
            "calc.py": CALC_BASE,
            "old_name.py": "VALUE = 1\n" * 20,
            "gone.py": "print('bye')\n",
            "tool.sh": "echo hi\n",
        },
        {
            "new_name.py": "VALUE = 1\n" * 19 + "VALUE = undefined_thing\n",
            "old_name.py": None,
            "gone.py": None,
            "logo.png": b"\x89PNG\r\n\x1a\n\x00\x00\xff\xfe",
        },
    )
    (repo / "tool.sh").chmod(0o755)
    commit_all(repo, "chmod")
    out = tmp_path / "out"

    done = run_cli("review", "--repo", str(repo), "--base", "main", "--out", str(out))

    assert done.exit_code == 0, done.stderr
    result = json.loads((out / "result.json").read_text(encoding="utf-8"))
    assert sorted(result["full_files"]) == ["gone.py", "logo.png", "new_name.py", "tool.sh"]
    not_reviewed = " ".join(result["coverage"]["not_reviewed"])
    assert "logo.png (binary file)" in not_reviewed
    assert "tool.sh (mode change only)" in not_reviewed
    assert "@ new_name.py:20" in done.stdout


def test_empty_diff_says_so(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult]
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})

    done = run_cli("review", "--repo", str(repo), "--base", "HEAD", "--head", "HEAD")

    assert done.exit_code == 0
    assert "empty" in done.stderr


def test_not_a_repository_is_a_one_line_error(
    run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    done = run_cli("review", "--repo", str(tmp_path))

    assert done.exit_code == 2
    assert done.stderr.startswith("assay: error: not a git repository")
    assert done.stderr.count("\n") == 1


def test_unknown_ref_is_a_one_line_error(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult]
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})

    done = run_cli("review", "--repo", str(repo), "--base", "no-such-branch")

    assert done.exit_code == 2
    assert done.stderr == f"assay: error: unknown ref 'no-such-branch' in {repo}\n"


def test_repo_config_is_read_from_base_not_from_the_pr(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult]
) -> None:
    repo = make_repo(
        {"calc.py": CALC_BASE, ".assay.toml": '[review]\nlang = "zh"\n'},
        {"calc.py": CALC_UNDEFINED, ".assay.toml": "[static]\nenabled = false\n"},
    )

    done = run_cli("review", "--repo", str(repo), "--base", "main")

    assert "建议：" in done.stdout  # lang from base
    assert "Status: BLOCKING" in done.stdout  # the PR could not switch the static pass off


def test_rerun_on_same_head_keeps_round_number(
    make_repo: Callable[..., Path], run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    repo = make_repo({"calc.py": CALC_BASE}, {"calc.py": CALC_UNDEFINED})
    out = tmp_path / "out"
    run_cli("review", "--repo", str(repo), "--base", "main", "--out", str(out))
    run_cli("review", "--repo", str(repo), "--base", "main", "--out", str(out))
    assert json.loads((out / "kpi.json").read_text())["round_index"] == 1

    write(repo, "calc.py", CALC_UNDEFINED + "\n# more\n")
    commit_all(repo, "more")
    run_cli("review", "--repo", str(repo), "--base", "main", "--out", str(out))
    assert json.loads((out / "kpi.json").read_text())["round_index"] == 2
    assert git(repo, "status", "--porcelain") == ""
