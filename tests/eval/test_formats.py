"""AACR-Bench and Martian golden-comment readers, on small samples in their published shapes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from assay.errors import ConfigError
from assay.eval import (
    MatchPolicy,
    Predicted,
    external_case,
    match_findings,
    read_aacr_samples,
    read_martian_golden,
)
from assay.eval.cases import RepositorySource
from assay.model import Severity, Side

AACR_SAMPLE: list[dict[str, Any]] = [
    {
        "change_line_count": 120,
        "project_main_language": "Python",
        "source_commit": "0c65673a6fd2421be8fbe613116077120adea068",
        "target_commit": "a050e422e23ce3eaee960b75ceff236b34f369b9",
        "githubPrUrl": "https://github.com/example/widgets/pull/42",
        "category": "Bug Fix",
        "comments": [
            {
                "is_ai_comment": False,
                "note": "The loop never closes the socket.\n",
                "path": "net/pool.py",
                "side": "right",
                "source_model": "",
                "from_line": 30,
                "to_line": 33,
                "category": "Code Defect",
                "context": "Diff Level",
            },
            {
                "is_ai_comment": True,
                "note": "Removed check was needed.",
                "path": "net/pool.py",
                "side": "left",
                "source_model": "m",
                "from_line": 12,
                "to_line": 9,
                "category": "Security Vulnerability",
                "context": "File Level",
            },
        ],
    }
]

MARTIAN_SAMPLE: list[dict[str, Any]] = [
    {
        "pr_title": "Paginate audit logs",
        "url": "https://github.com/example/sentry-copy/pull/7",
        "original_url": "https://github.com/example/sentry/pull/92393",
        "comments": [
            {"comment": "Querysets do not support negative slicing", "severity": "High"},
            {"comment": "Unused import", "severity": "Low"},
        ],
    }
]


def test_aacr_records_become_pull_requests_with_located_defects(tmp_path: Path) -> None:
    path = tmp_path / "positive_samples.json"
    path.write_text(json.dumps(AACR_SAMPLE), encoding="utf-8")

    (pull,) = read_aacr_samples(path)

    assert (pull.id, pull.repo, pull.number, pull.language) == (
        "example__widgets@a050e42",
        "example/widgets",
        42,
        "Python",
    )
    assert (pull.base, pull.head) == (
        "0c65673a6fd2421be8fbe613116077120adea068",
        "a050e422e23ce3eaee960b75ceff236b34f369b9",
    )
    first, second = pull.defects
    assert (first.path, first.line_start, first.line_end, first.side) == (
        "net/pool.py",
        30,
        33,
        Side.RIGHT,
    )
    assert (first.severity, first.description) == (None, "The loop never closes the socket.")
    # An inverted range is read as the lines between its two ends.
    assert (second.line_start, second.line_end, second.side) == (9, 12, Side.LEFT)
    # Its categories map onto Assay's: a correctness finding matches "Code Defect".
    result = match_findings(
        [Predicted(id="f", path="net/pool.py", line=31, category="correctness")],
        pull.defects,
        MatchPolicy(),
    )
    assert [(p.finding, p.truth) for p in result.pairs] == [(0, 0)]
    assert not first.may_block


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"githubPrUrl": "https://gitlab.com/a/b/merge_requests/1"}, "not a GitHub pull request"),
        ({"target_commit": "not-a-sha"}, "target_commit 'not-a-sha' is not a commit SHA"),
        ({"comments": [{"path": "a.py"}]}, "comments.0"),
        ({"comments": "none"}, "comments"),
        ({"source_commit": None}, "source_commit"),
    ],
)
def test_aacr_reader_is_strict(change: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError, match=message):
        read_aacr_samples(json.dumps([{**AACR_SAMPLE[0], **change}]))


def test_aacr_reader_wants_a_list() -> None:
    with pytest.raises(ConfigError, match="expected a JSON list"):
        read_aacr_samples("{}")


def test_martian_golden_comments_have_severity_but_no_location(tmp_path: Path) -> None:
    path = tmp_path / "sentry.json"
    path.write_text(json.dumps(MARTIAN_SAMPLE), encoding="utf-8")

    (pull,) = read_martian_golden(path)

    assert (pull.id, pull.title, pull.head, pull.base) == (
        "example__sentry-copy#7",
        "Paginate audit logs",
        "refs/pull/7/head",
        None,
    )
    assert [(d.severity, d.path, d.line_start) for d in pull.defects] == [
        (Severity.P1, None, None),
        (Severity.P3, None, None),
    ]
    # Without a location, only the judge can match them.
    everywhere = Predicted(id="f", path="x.py", line=1)
    assert not match_findings([everywhere], pull.defects, MatchPolicy(window=10_000)).pairs


def test_martian_reader_refuses_unknown_severities() -> None:
    record = {**MARTIAN_SAMPLE[0], "comments": [{"comment": "x", "severity": "Severe"}]}
    with pytest.raises(ConfigError, match="unknown severity 'Severe'"):
        read_martian_golden(json.dumps([record]))


def test_external_case_points_at_a_local_clone(tmp_path: Path) -> None:
    (pull,) = read_aacr_samples(json.dumps(AACR_SAMPLE))
    case = external_case(pull, tmp_path / "clones")
    assert case.name == "example__widgets@a050e42"
    assert case.source == RepositorySource(
        repo=tmp_path / "clones" / "example" / "widgets", base=pull.base, head=pull.head
    )
