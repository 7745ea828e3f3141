"""Benchmark: one review round of a 50-file change, static pass + one model rep (no LLM latency).

Builds a repository in a temp dir, serves the model from the scripted server on loopback with zero
latency, runs ``assay review`` in-process and prints JSON: wall time, peak memory (max RSS of
this process), findings and the KPI. Not a test: nothing here asserts a time.

    python bench/review_50_files.py [--files 50] [--lines 120]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from assay.cli import configure_logging
from assay.config import Settings
from assay.runner import LocalReviewRequest, review_local
from assay.store import Store
from assay.testing import ChatRequest, ScriptedLLMServer, json_reply


def _git(repo: Path, *args: str) -> None:
    subprocess.run(["git", *args], cwd=repo, check=True, capture_output=True)


def _module(index: int, lines: int, *, changed: bool) -> str:
    body = [f'"""Module {index}."""', "", "import os", ""]
    for n in range(lines // 4):
        body += [
            f"def f_{n}(x):",
            f"    return x + {n}" if not changed else f"    return x * {n}",
            "",
        ]
        if changed and n == 3:
            body += ["def broken():", "    return undefined_helper()", ""]
    return "\n".join(body) + "\n"


def build_repo(root: Path, files: int, lines: int) -> Path:
    repo = root / "repo"
    repo.mkdir()
    env_identity = ["-c", "user.name=Bench", "-c", "user.email=bench@assay.invalid"]
    _git(repo, "init", "-q", "-b", "main")
    for i in range(files):
        (repo / "pkg").mkdir(exist_ok=True)
        (repo / "pkg" / f"m{i:02}.py").write_text(_module(i, lines, changed=False))
    _git(repo, "add", "-A")
    _git(repo, *env_identity, "commit", "-q", "-m", "base")
    _git(repo, "checkout", "-q", "-b", "feature")
    for i in range(files):
        (repo / "pkg" / f"m{i:02}.py").write_text(_module(i, lines, changed=True))
    _git(repo, "add", "-A")
    _git(repo, *env_identity, "commit", "-q", "-m", "change everything")
    return repo


def discovery_reply(request: ChatRequest) -> Any:
    return json_reply(
        {
            "findings": [
                {
                    "severity": "P2",
                    "category": "correctness",
                    "title": "Multiplication replaces addition",
                    "path": "pkg/m00.py",
                    "line": 6,
                    "end_line": None,
                    "side": "RIGHT",
                    "evidence": "pkg/m00.py:6 now multiplies.",
                    "suggestion": "Confirm the intent.",
                    "claims": [],
                }
            ],
            "strengths": [],
        }
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--files", type=int, default=50)
    parser.add_argument("--lines", type=int, default=120)
    args = parser.parse_args()
    configure_logging(verbose=False)
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLMServer(discovery_reply) as server:
        root = Path(tmp)
        repo = build_repo(root, args.files, args.lines)
        os.environ.update(
            ASSAY_LLM_BASE_URL=server.base_url, ASSAY_MODEL="bench", ASSAY_LLM_API_KEY="x"
        )
        store = Store.open(f"sqlite:///{root / 'assay.db'}")
        rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        started = time.perf_counter()
        done = review_local(
            LocalReviewRequest(repo=repo, base="main", no_cache=True), Settings(), store=store
        )
        wall_s = time.perf_counter() - started
        store.close()
        result = done.outcome.result
        print(
            json.dumps(
                {
                    "benchmark": "review_50_files",
                    "changed_files": len(result.full_files),
                    "patch_bytes": result.kpi.patch_bytes,
                    "wall_s": round(wall_s, 3),
                    "peak_rss_mb": round(
                        resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1
                    ),
                    "rss_before_mb": round(rss_before / 1024, 1),
                    "findings": len(result.findings),
                    "static_findings": result.kpi.static_findings,
                    "blocking": result.kpi.blocking,
                    "model_requests": server.request_count,
                    "python": sys.version.split()[0],
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
