"""Batch mode across every stage: export → answer offline → import → rerun, until the round
completes — discovery, an agentic rep's tool loop one step per cycle, synthesis, then confirm —
with no HTTP request at all (the configured endpoint is a closed port)."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from assay.testing import ChatRequest, Fault, Reply
from assay.testing._completion import completion_body, normalize_reply
from tests.integration.conftest import CliResult
from tests.integration.test_ensemble import SERVICE, SERVICE_CHANGED, model


def answer_offline(line: dict[str, Any]) -> dict[str, Any]:
    """A provider's batch output line for one request line, answered by the scripted model.

    A batch line carries no ``X-Assay-Stage`` header: the stage is the name of the requested
    JSON schema.
    """
    body = line["body"]
    stage = body["response_format"]["json_schema"]["name"]
    reply = normalize_reply(model(ChatRequest(body=body, headers={"x-assay-stage": stage})))
    assert isinstance(reply, Reply) and not isinstance(reply, Fault)
    completion = completion_body(
        reply,
        ChatRequest(body=body),
        completion_id=f"chatcmpl-{line['custom_id'][:8]}",
        created=1_700_000_000,
        default_model="offline",
    )
    return {
        "id": f"batch_req_{line['custom_id'][:8]}",
        "custom_id": line["custom_id"],
        "response": {"status_code": 200, "request_id": "req", "body": completion},
        "error": None,
    }


def test_a_whole_ensemble_round_through_batch_cycles(
    make_repo: Callable[..., Path],
    run_cli: Callable[..., CliResult],
    tmp_path: Path,
    unused_port: int,
) -> None:
    os.environ.update(ASSAY_LLM_BASE_URL=f"http://127.0.0.1:{unused_port}/v1", ASSAY_MODEL="m")
    repo = make_repo({"service.py": SERVICE}, {"service.py": SERVICE_CHANGED})
    requests_file, answers_file, out = tmp_path / "in.jsonl", tmp_path / "out.jsonl", tmp_path / "o"
    review = (
        "review", "--repo", str(repo), "--base", "main", "--reps", "3", "--agentic-reps", "1",
        "--llm", "batch-export", str(requests_file), "--out", str(out),
    )  # fmt: skip
    exported_per_cycle = []
    for _cycle in range(8):
        done = run_cli(*review)
        assert done.exit_code == 0, done.stderr
        if done.stdout:  # the round completed
            break
        lines = [json.loads(text) for text in requests_file.read_text().splitlines()]
        exported_per_cycle.append(len(lines))
        answers_file.write_text("".join(json.dumps(answer_offline(x)) + "\n" for x in lines))
        imported = run_cli("llm", "import", str(answers_file))
        assert imported.exit_code == 0, imported.stderr
    else:
        raise AssertionError(f"no completion after cycles {exported_per_cycle}")

    # Cycle 1: the three reps; 2: the agentic rep's answer after its tool call; 3: synthesis of
    # the three differently worded reports; 4: confirm of the P1 three reps support (its claim
    # is checked without a model). No cycle asks about inputs a pending answer could change.
    assert exported_per_cycle == [3, 1, 1, 1]
    assert "Status: BLOCKING" in done.stdout
    kpi = json.loads((out / "kpi.json").read_text(encoding="utf-8"))
    assert kpi["llm"]["calls"] == kpi["llm"]["cached_calls"]  # every answer came from a batch
    assert kpi["confirm"]["to_block"] == 1 and kpi["fact_check"]["hold"] == 1
    assert kpi["tool_calls"] == 1
