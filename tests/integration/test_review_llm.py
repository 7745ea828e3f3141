"""`assay review` with a model: the real client over real HTTP to a scripted server on loopback."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from assay.testing import ChatRequest, Fault, ScriptedLLMServer, json_reply, script_by_stage
from tests.integration.conftest import CALC_BASE, CliResult

SERVICE = "def load(path):\n    return open(path).read()\n"
SERVICE_CHANGED = (
    "def load(path):\n    handle = open(path)\n    data = handle.read()\n    return data\n"
)


def discovery(lang: str = "en", severity: str = "P1") -> dict[str, Any]:
    title = "File handle is never closed" if lang == "en" else "文件句柄从未关闭"
    return {
        "findings": [
            {
                "severity": severity,
                "category": "resource-leak",
                "title": title,
                "path": "service.py",
                "line": 2,
                "end_line": None,
                "side": "RIGHT",
                "evidence": "service.py:2 opens the file; nothing closes it on any path.",
                "suggestion": "Use `with open(path) as handle:`.",
                "claims": [
                    {
                        "kind": "line_contains",
                        "text": "line 2 calls open()",
                        "path": "service.py",
                        "line": 2,
                        "needle": "open(path)",
                        "count": None,
                    }
                ],
            },
            {
                "severity": "P3",
                "category": "style",
                "title": "Comment refers to a function outside the diff",
                "path": "README.md",
                "line": 1,
                "end_line": None,
                "side": "RIGHT",
                "evidence": "README.md is not part of this change.",
                "suggestion": "None needed.",
                "claims": [],
            },
        ],
        "strengths": [{"text": "load() keeps its signature.", "path": "service.py", "line": 1}],
    }


@pytest.fixture
def server() -> Iterator[ScriptedLLMServer]:
    with ScriptedLLMServer(script_by_stage({"discover": json_reply(discovery())})) as running:
        yield running


@pytest.fixture
def model_env(server: ScriptedLLMServer) -> None:
    os.environ["ASSAY_LLM_BASE_URL"] = server.base_url
    os.environ["ASSAY_LLM_API_KEY"] = "test-key"
    os.environ["ASSAY_MODEL"] = "assay-test"
    os.environ["ASSAY_LLM_TRANSPORT_RETRIES"] = "2"


@pytest.fixture
def repo(make_repo: Callable[..., Path]) -> Path:
    return make_repo({"service.py": SERVICE, "calc.py": CALC_BASE}, {"service.py": SERVICE_CHANGED})


SINGLE_REP = ("--reps", "1", "--agentic-reps", "0")


def review(run_cli: Callable[..., CliResult], repo: Path, out: Path, *extra: str) -> CliResult:
    """One non-agentic rep unless ``extra`` says otherwise (later options win)."""
    done = run_cli(
        "review", "--repo", str(repo), "--base", "main", "--out", str(out), *SINGLE_REP, *extra
    )
    assert done.exit_code == 0, done.stderr
    return done


@pytest.mark.usefixtures("model_env")
def test_llm_findings_in_both_locales(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    en = review(run_cli, repo, tmp_path / "en")
    server.reply = script_by_stage({"discover": json_reply(discovery("zh"))})
    zh = review(run_cli, repo, tmp_path / "zh", "--lang", "zh")

    # One rep cannot reach block_support 3: the P1 is kept, downgraded to P2, with the reason.
    assert "Status: LGTM" in en.stdout
    assert "File handle is never closed @ service.py:2" in en.stdout
    assert "downgraded from P1" in en.stdout
    assert "文件句柄从未关闭 @ service.py:2" in zh.stdout
    assert "由 P1 降级" in zh.stdout
    assert "lgtm ready to ci" in zh.stdout
    # The finding on a file outside the diff stays in the body, with no inline comment.
    assert "@ README.md:1" in en.stdout
    comments = json.loads((tmp_path / "en" / "comments.json").read_text(encoding="utf-8"))
    assert [(c["path"], c["line"]) for c in comments] == [("service.py", 2)]
    kpi = json.loads((tmp_path / "en" / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["model"] == "assay-test"
    assert (kpi["reps"], kpi["discover_ok"], kpi["discover_fail"]) == (1, 1, 0)
    assert kpi["discover_attempts"] == 1 and kpi["shards"] == 1 and kpi["coverage"] == 1.0
    assert "discover" not in kpi["skipped"]
    assert kpi["llm"]["calls"] == 1 and kpi["llm"]["prompt_tokens"] > 0
    # The model was told to write in the review's language.
    assert "zh" in server.requests[-1].system_text or "中文" in server.requests[-1].system_text


@pytest.mark.usefixtures("model_env")
def test_every_request_names_its_stage_and_sets_max_tokens(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    review(run_cli, repo, tmp_path / "out")

    request: ChatRequest = server.requests[0]
    assert request.stage == "discover"
    assert request.max_tokens is not None and request.max_tokens > 0
    assert request.response_format is not None
    assert request.headers["authorization"] == "Bearer test-key"
    assert "service.py" in request.last_user_text


@pytest.mark.usefixtures("model_env")
def test_rerun_is_served_from_the_replay_cache(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    first = review(run_cli, repo, tmp_path / "first")
    sent = server.request_count

    second = review(run_cli, repo, tmp_path / "second")

    assert sent == 1
    assert server.request_count == sent  # zero HTTP requests on the rerun
    kpi = json.loads((tmp_path / "second" / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["llm"]["cached_calls"] == 1
    assert second.stdout.split("Reviewed:")[0] == first.stdout.split("Reviewed:")[0]

    review(run_cli, repo, tmp_path / "third", "--no-cache")
    assert server.request_count == sent + 1


@pytest.mark.usefixtures("model_env")
def test_block_support_one_lets_a_single_confirmed_rep_block(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    server.reply = script_by_stage(
        {
            "discover": json_reply(discovery()),
            "confirm": json_reply({"verdict": "confirmed", "reason": "service.py:2 leaks."}),
        }
    )

    done = review(run_cli, repo, tmp_path / "out", "--block-support", "1")

    assert "Status: BLOCKING" in done.stdout
    assert (tmp_path / "out" / "followup.md").exists()
    kpi = json.loads((tmp_path / "out" / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["confirm"] == {"candidates": 1, "to_block": 1, "confirm_fail": 0}
    assert kpi["fact_check"]["checked"] == 1 and kpi["fact_check"]["hold"] == 1
    assert [r.stage for r in server.requests] == ["discover", "confirm"]


@pytest.mark.usefixtures("model_env")
def test_transient_errors_are_retried_and_counted(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    server.enqueue_faults(Fault.status(429, retry_after=0.01), Fault.status(500))

    review(run_cli, repo, tmp_path / "out")

    kpi = json.loads((tmp_path / "out" / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["discover_ok"] == 1
    assert kpi["discover_attempts"] == 3


@pytest.mark.usefixtures("model_env")
def test_invalid_replies_fail_the_stage_honestly(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    server.reply = script_by_stage({"discover": "this is not JSON"})

    done = review(run_cli, repo, tmp_path / "out")

    kpi = json.loads((tmp_path / "out" / "kpi.json").read_text(encoding="utf-8"))
    assert (kpi["discover_ok"], kpi["discover_fail"]) == (0, 1)
    assert kpi["failed_stages"] == ["discover[0]"]
    assert server.request_count == 3  # the first ask and two re-asks quoting the errors
    assert "Status: LGTM" in done.stdout


@pytest.mark.usefixtures("model_env")
def test_truncated_replies_are_never_used(
    repo: Path, server: ScriptedLLMServer, run_cli: Callable[..., CliResult], tmp_path: Path
) -> None:
    server.enqueue_faults(Fault.truncated('{"findings": [{"severity": "P0"'))

    review(run_cli, repo, tmp_path / "out")

    kpi = json.loads((tmp_path / "out" / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["discover_ok"] == 1  # the re-ask got a complete answer
    assert server.request_count == 2


def test_unreachable_endpoint_is_a_one_line_error(
    repo: Path, run_cli: Callable[..., CliResult], unused_port: int
) -> None:
    os.environ["ASSAY_LLM_BASE_URL"] = f"http://127.0.0.1:{unused_port}/v1"
    os.environ["ASSAY_MODEL"] = "assay-test"
    os.environ["ASSAY_LLM_TRANSPORT_RETRIES"] = "0"

    done = run_cli("review", "--repo", str(repo), "--base", "main")

    assert done.exit_code == 2
    assert done.stderr.startswith("assay: error: cannot reach the model endpoint")
    assert done.stderr.count("\n") == 1


def test_batch_export_import_rerun_completes_without_http(
    repo: Path, run_cli: Callable[..., CliResult], tmp_path: Path, unused_port: int
) -> None:
    # The endpoint does not exist: every answer must come through the batch files.
    os.environ["ASSAY_LLM_BASE_URL"] = f"http://127.0.0.1:{unused_port}/v1"
    os.environ["ASSAY_MODEL"] = "assay-test"
    batch_in = tmp_path / "batch-in.jsonl"

    exported = run_cli(
        "review",
        "--repo",
        str(repo),
        "--base",
        "main",
        *SINGLE_REP,
        "--llm",
        "batch-export",
        str(batch_in),
    )

    assert exported.exit_code == 0, exported.stderr
    assert "1 model request(s) pending" in exported.stderr
    assert exported.stdout == ""
    lines = [json.loads(line) for line in batch_in.read_text(encoding="utf-8").splitlines()]
    assert [(line["method"], line["url"]) for line in lines] == [("POST", "/v1/chat/completions")]
    assert lines[0]["body"]["max_tokens"] > 0

    batch_out = tmp_path / "batch-out.jsonl"
    batch_out.write_text(
        "".join(json.dumps(answer_offline(line)) + "\n" for line in lines), encoding="utf-8"
    )
    imported = run_cli("llm", "import", str(batch_out))
    assert imported.exit_code == 0, imported.stderr
    assert "imported 1 answer(s)" in imported.stdout

    out = tmp_path / "out"
    done = run_cli(
        "review",
        "--repo",
        str(repo),
        "--base",
        "main",
        *SINGLE_REP,
        "--llm",
        "batch-export",
        str(batch_in),
        "--out",
        str(out),
    )
    assert done.exit_code == 0, done.stderr
    assert "File handle is never closed @ service.py:2" in done.stdout, done.stderr
    kpi = json.loads((out / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["discover_ok"] == 1 and kpi["llm"]["cached_calls"] == 1


def answer_offline(request_line: dict[str, Any]) -> dict[str, Any]:
    """What a provider's batch run writes for one request line (Batch API output format)."""
    return {
        "id": f"batch_req_{request_line['custom_id'][:8]}",
        "custom_id": request_line["custom_id"],
        "response": {
            "status_code": 200,
            "request_id": "req_1",
            "body": {
                "id": "chatcmpl-offline",
                "object": "chat.completion",
                "created": 1_700_000_000,
                "model": request_line["body"]["model"],
                "choices": [
                    {
                        "index": 0,
                        "message": {"role": "assistant", "content": json.dumps(discovery())},
                        "finish_reason": "stop",
                    }
                ],
                "usage": {"prompt_tokens": 900, "completion_tokens": 120, "total_tokens": 1020},
            },
        },
        "error": None,
    }
