"""`python -m assay.testing`: a real process serving a reply file until interrupted."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import openai

from assay.testing import ChatRequest
from assay.testing.__main__ import load_reply_file

SRC = Path(__file__).resolve().parents[2] / "src"


def test_reply_file_maps_stages_and_a_default(tmp_path: Path) -> None:
    reply_file = tmp_path / "replies.json"
    reply_file.write_text(
        json.dumps({"discover": {"findings": []}, "confirm": ["a", "b"], "*": "other"})
    )

    reply = load_reply_file(reply_file)

    def stage(name: str) -> ChatRequest:
        return ChatRequest(body={}, headers={"x-assay-stage": name})

    assert reply(stage("discover")) == {"findings": []}
    assert [reply(stage("confirm")), reply(stage("confirm"))] == ["a", "b"]
    assert reply(stage("gate")) == "other"


def test_serves_by_hand_and_stops_on_interrupt(tmp_path: Path) -> None:
    reply_file = tmp_path / "replies.json"
    reply_file.write_text(json.dumps({"discover": {"findings": []}}))
    environment = {**os.environ, "PYTHONPATH": str(SRC)}
    command = [
        sys.executable,
        "-m",
        "assay.testing",
        "--port",
        "0",
        "--reply-file",
        str(reply_file),
    ]

    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=environment
    ) as process:
        assert process.stdout is not None
        banner = process.stdout.readline()
        base_url = banner.split()[2]
        with openai.OpenAI(base_url=base_url, api_key="x", max_retries=0) as client:
            completion = client.chat.completions.create(
                model="assay-test",
                messages=[{"role": "user", "content": "review"}],
                extra_headers={"X-Assay-Stage": "discover"},
            )
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=30)

    assert banner.startswith("serving on http://127.0.0.1:")
    assert completion.choices[0].message.content == '{"findings": []}'
    assert process.returncode == 0, stderr


def test_unreadable_reply_file_is_a_usage_error(tmp_path: Path) -> None:
    reply_file = tmp_path / "replies.json"
    reply_file.write_text('["not", "an object"]')
    environment = {**os.environ, "PYTHONPATH": str(SRC)}

    finished = subprocess.run(
        [sys.executable, "-m", "assay.testing", "--reply-file", str(reply_file)],
        capture_output=True,
        text=True,
        env=environment,
        timeout=30,
        check=False,
    )

    assert finished.returncode == 2
    assert "expected a JSON object" in finished.stderr
