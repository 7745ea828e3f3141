"""Sharding: every changed line is in a shard, summarized or named as not reviewed."""

from __future__ import annotations

from assay.diff import parse_unified_diff
from assay.diff.types import FileDiff
from assay.llm.tokens import estimate_tokens
from assay.pipeline.prepare import generated_by_attributes, prepare_diff


def _file_diff(path: str, hunks: int, lines_per_hunk: int = 4) -> str:
    out = [f"diff --git a/{path} b/{path}", f"--- a/{path}", f"+++ b/{path}"]
    for h in range(hunks):
        start = 1 + h * 100
        out.append(f"@@ -{start},1 +{start},{1 + lines_per_hunk} @@")
        out.append(" context")
        out += [f"+added line {h}.{n} with some words in it" for n in range(lines_per_hunk)]
    return "\n".join(out) + "\n"


def _files(*sections: str) -> tuple[FileDiff, ...]:
    return parse_unified_diff("".join(sections))


def test_small_diff_is_one_shard_with_full_coverage() -> None:
    files = _files(_file_diff("a.py", 2), _file_diff("b.py", 1))

    prepared = prepare_diff(files, max_patch_tokens=10_000, estimate_tokens=estimate_tokens)

    assert [[f.path for f in s.files] for s in prepared.shards] == [["a.py", "b.py"]]
    assert prepared.coverage == 1.0 and not prepared.truncated
    assert prepared.changed_lines_total == prepared.changed_lines_reviewed == 12


def test_budget_splits_files_into_shards_and_big_files_at_hunks() -> None:
    files = _files(_file_diff("a.py", 1), _file_diff("big.py", 6, 10), _file_diff("c.py", 1))
    budget = estimate_tokens(files[1].patch) // 2

    prepared = prepare_diff(files, max_patch_tokens=budget, estimate_tokens=estimate_tokens)

    assert len(prepared.shards) >= 3
    assert all(s.tokens <= budget for s in prepared.shards)
    big_hunks = [h for s in prepared.shards for f in s.files if f.path == "big.py" for h in f.hunks]
    assert [h.new_start for h in big_hunks] == [1, 101, 201, 301, 401, 501]  # each hunk once
    assert prepared.coverage == 1.0 and not prepared.truncated
    for shard in prepared.shards:  # a partial file's patch holds exactly its own hunks
        for file in shard.files:
            assert file.patch.count("\n@@") == len(file.hunks)


def test_shard_cap_and_oversized_hunks_are_named_and_counted() -> None:
    files = _files(*(_file_diff(f"m{i}.py", 1, 20) for i in range(4)))
    budget = estimate_tokens(files[0].patch) + 5

    prepared = prepare_diff(
        files, max_patch_tokens=budget, estimate_tokens=estimate_tokens, max_shards=2
    )

    assert len(prepared.shards) == 2
    assert prepared.truncated
    assert prepared.coverage == 0.5
    assert [p for p, reason in prepared.not_reviewed] == ["m2.py", "m3.py"]
    tiny = prepare_diff(files[:1], max_patch_tokens=10, estimate_tokens=estimate_tokens)
    assert tiny.shards == () and tiny.truncated
    assert "over the token budget" in tiny.not_reviewed[0][1]


def test_generated_files_are_summarized_not_sent() -> None:
    files = _files(
        _file_diff("package-lock.json", 1),
        _file_diff("web/app.min.js", 1),
        _file_diff("api/service_pb2.py", 1),
        _file_diff("gen/schema.py", 1),
        _file_diff("src/app.py", 1),
    )
    generated = generated_by_attributes("gen/** linguist-generated\n*.py text\n")

    prepared = prepare_diff(
        files, max_patch_tokens=10_000, estimate_tokens=estimate_tokens, generated=generated
    )

    assert prepared.reviewed_paths == ("src/app.py",)
    assert [p for p, _ in prepared.summarized] == [
        "package-lock.json",
        "web/app.min.js",
        "api/service_pb2.py",
        "gen/schema.py",
    ]
    assert prepared.coverage == 1.0  # generated lines are named, not counted as unreviewed


def test_gitattributes_last_match_wins_and_unset() -> None:
    generated = generated_by_attributes(
        "*.pb.go linguist-generated=true\ndocs/ linguist-vendored\nkeep.pb.go -linguist-generated\n"
    )

    assert generated("x/y/api.pb.go")
    assert not generated("x/keep.pb.go")
    assert generated("docs/index.md")
    assert not generated("src/main.go")
