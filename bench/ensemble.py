"""Benchmark: one ensemble round — 65 files, ~50 KB of patch, 5 reps (2 agentic), 3 shards.

The model is the scripted server of ``assay.testing`` with a latency model (time to first
token + tokens per second), in a separate process so that this process's CPU time is Assay's
own. Prints JSON:

- ``wall_s`` and ``critical_path_s`` (the longest chain of dependent model calls, from the
  round's call records) and their ratio (goal ≤ 1.15);
- ``orchestration_cpu_s``: this process's CPU time during the round (waits excluded), and its
  share of the wall time (goal ≤ 5 %), measured on a warm process (a first round, reported as
  ``cold_process_cpu_s``, pays the one-time imports and schema generation);
- prompt and completion tokens, and ``shared_prefix_fraction``: the share of prompt characters
  that are a prefix shared with another request (what a provider's prefix cache can serve;
  goal ≥ 0.7);
- peak memory (max RSS of this process).

Not a test: nothing here asserts a time.

    python bench/ensemble.py [--ttft 0.4] [--tps 120] [--concurrency 16]
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import resource
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from assay.cli import configure_logging
from assay.config import Settings
from assay.runner import LocalReviewRequest, review_local
from assay.store import Store
from assay.store.schema import LLMExchangeRow
from assay.testing import (
    ChatRequest,
    LatencyModel,
    ReplyValue,
    ScriptedLLMServer,
    json_reply,
    tool_call_reply,
)

FILES = 65
SHARD_BUDGET_TOKENS = 5_500  # forces 3 shards for this change


def _module(index: int, *, changed: bool) -> str:
    lines = [f'"""Module {index}: request handlers."""', "", "import json", ""]
    for n in range(4):
        body = "payload.get('id')" if not changed else "payload['id']"
        lines += [
            f"def handler_{n}(payload):",
            f"    value = {body}",
            f"    return json.dumps({{'handler': {n}, 'value': value}})",
            "",
        ]
    return "\n".join(lines) + "\n"


def build_repo(root: Path) -> Path:
    repo = root / "repo"
    (repo / "app").mkdir(parents=True)
    identity = ["-c", "user.name=Bench", "-c", "user.email=bench@assay.invalid"]

    def git(*args: str) -> None:
        subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)

    git("init", "-q", "-b", "main")
    (repo / ".assay.toml").write_text(
        f"[review]\nreps = 5\nagentic_reps = 2\nmax_patch_tokens = {SHARD_BUDGET_TOKENS}\n"
        'agent_max_steps = 3\n[checklists]\nbuiltin = ["general", "python"]\n'
    )
    for i in range(FILES):
        (repo / "app" / f"handlers_{i:02}.py").write_text(_module(i, changed=False))
    git("add", "-A")
    git(*identity, "commit", "-q", "-m", "base")
    git("checkout", "-q", "-b", "feature")
    for i in range(FILES):
        (repo / "app" / f"handlers_{i:02}.py").write_text(_module(i, changed=True))
    git("add", "-A")
    git(*identity, "commit", "-q", "-m", "Index payloads directly")
    return repo


def _finding(rep: int, path: str) -> dict[str, Any]:
    titles = [
        "payload['id'] raises KeyError when the id is missing",
        "Direct indexing payload['id'] raises KeyError for payloads without an id",
        "handler_0 raises KeyError on a payload without 'id'",
    ]
    return {
        "severity": "P1",
        "category": "correctness",
        "title": titles[rep % 3],
        "path": path,
        "line": 6,
        "end_line": None,
        "side": "RIGHT",
        "evidence": f"{path}:6 replaced payload.get('id') with payload['id'].",
        "suggestion": "Keep payload.get('id') or validate the payload first.",
        "claims": [
            {
                "kind": "line_contains",
                "text": f"{path}:6 indexes payload['id']",
                "path": path,
                "line": 6,
                "needle": "payload['id']",
                "count": None,
            }
        ],
    }


def model(request: ChatRequest) -> ReplyValue:
    stage = request.stage
    if stage == "discover":
        if request.tools and not any(m.get("role") == "tool" for m in request.messages):
            return tool_call_reply("grep", {"pattern": "payload\\[", "path_glob": "app/*.py"})
        rep = request.seed or 0
        text = request.last_user_text
        first = text.split("=== FILE 1: ", 1)[1].split(" ", 1)[0] if "=== FILE 1: " in text else ""
        findings = [_finding(rep, first)] if rep < 3 and first.endswith("_00.py") else []
        return json_reply({"findings": findings, "strengths": [{"text": "Consistent handlers."}]})
    if stage == "synthesize":
        return json_reply({**_finding(0, "app/handlers_00.py"), "claims": None, "claim_ids": []})
    if stage == "confirm":
        return json_reply({"verdict": "confirmed", "reason": "app/handlers_00.py:6 indexes."})
    if stage == "checklist":
        ids = request.last_user_text.rsplit("item ids: ", 1)[1].rstrip(". \n").split(", ")
        return json_reply(
            {
                "results": [
                    {"item_id": i, "status": "pass", "finding_id": None, "new_finding": None,
                     "reason": "scripted"}
                    for i in ids
                ]
            }
        )  # fmt: skip
    return json_reply({"verdict": "confirmed", "reason": "scripted"})


def _serve(ttft: float, tps: float, address: Any, stop: Any) -> None:
    with ScriptedLLMServer(model, latency=LatencyModel(ttft_s=ttft, tokens_per_s=tps)) as server:
        address.put(server.base_url)
        stop.wait()


def shared_prefix_fraction(prompts: list[str]) -> float:
    """Share of prompt characters that are a prefix some other request shares."""
    total = sum(len(p) for p in prompts)
    shared = 0
    ordered = sorted(prompts)
    for i, prompt in enumerate(ordered):
        best = 0
        for j in (i - 1, i + 1):  # in sorted order the longest common prefix is a neighbour's
            if 0 <= j < len(ordered):
                other = ordered[j]
                n = 0
                limit = min(len(prompt), len(other))
                while n < limit and prompt[n] == other[n]:
                    n += 1
                best = max(best, n)
        shared += best
    return round(shared / total, 3) if total else 0.0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ttft", type=float, default=0.4)
    parser.add_argument("--tps", type=float, default=150.0)
    parser.add_argument("--concurrency", type=int, default=16)
    args = parser.parse_args()
    configure_logging(verbose=False)
    context = multiprocessing.get_context("fork")
    address, stop = context.Queue(), context.Event()
    server = context.Process(target=_serve, args=(args.ttft, args.tps, address, stop))
    server.start()
    try:
        base_url = address.get(timeout=30)
        with tempfile.TemporaryDirectory() as tmp:
            root = Path(tmp)
            repo = build_repo(root)
            os.environ.update(
                ASSAY_LLM_BASE_URL=base_url,
                ASSAY_MODEL="bench",
                ASSAY_LLM_CONCURRENCY=str(args.concurrency),
            )
            store = Store.open(f"sqlite:///{root / 'assay.db'}")
            request = LocalReviewRequest(repo=repo, base="main", no_cache=True)
            cold_before = time.process_time()
            review_local(request, Settings(), store=store)  # cold: imports, schema generation
            cold_cpu = time.process_time() - cold_before
            cpu_before, wall_before = time.process_time(), time.perf_counter()
            done = review_local(request, Settings(), store=store)  # measured: a warm process
            wall = time.perf_counter() - wall_before
            cpu = time.process_time() - cpu_before
            with Session(store.engine) as session:  # the measured round's exchanges
                requests = [row.request for row in session.scalars(select(LLMExchangeRow))]
            store.close()
    finally:
        stop.set()
        server.join(timeout=10)
    kpi = done.outcome.result.kpi
    prompts = [
        "".join(str(m.get("content") or "") for m in request.get("messages", []))
        for request in requests
    ]
    critical = kpi.critical_path_ms / 1000
    print(
        json.dumps(
            {
                "benchmark": "ensemble",
                "files": kpi.full_files,
                "patch_bytes": kpi.patch_bytes,
                "shards": kpi.shards,
                "reps": kpi.reps,
                "agentic_reps": kpi.agentic_reps,
                "latency_model": {"ttft_s": args.ttft, "tokens_per_s": args.tps},
                "concurrency": args.concurrency,
                "model_calls": kpi.llm.calls,
                "tool_calls": kpi.tool_calls,
                "wall_s": round(wall, 3),
                "critical_path_s": round(critical, 3),
                "wall_over_critical_path": round(wall / critical, 3) if critical else None,
                "orchestration_cpu_s": round(cpu, 3),
                "orchestration_cpu_share": round(cpu / wall, 4),
                "cold_process_cpu_s": round(cold_cpu, 3),
                "prompt_tokens": kpi.llm.prompt_tokens,
                "completion_tokens": kpi.llm.completion_tokens,
                "shared_prefix_fraction": shared_prefix_fraction(prompts),
                "peak_rss_mb": round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1),
                "verdict": done.outcome.result.verdict.value,
                "blocking": kpi.blocking,
                "failed_stages": kpi.failed_stages,
            },
            indent=1,
        )
    )


if __name__ == "__main__":
    main()
