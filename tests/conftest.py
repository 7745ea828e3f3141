"""Suite-wide hermetic set-up: no user git config, no model endpoint, no store outside tmp."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import structlog

_GIT_IDENTITY = {
    "GIT_AUTHOR_NAME": "Assay Test",
    "GIT_AUTHOR_EMAIL": "test@assay.invalid",
    "GIT_COMMITTER_NAME": "Assay Test",
    "GIT_COMMITTER_EMAIL": "test@assay.invalid",
}


@pytest.fixture(autouse=True)
def clean_environ(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Strip ASSAY_*/OPENAI_* (no test may reach a real model) and isolate git and the store."""
    saved = dict(os.environ)
    for name in list(os.environ):
        if name.startswith(("ASSAY_", "OPENAI_")):
            del os.environ[name]
    home = tmp_path_factory.mktemp("home")
    empty_config = home / "gitconfig"
    empty_config.write_text("[init]\n\tdefaultBranch = main\n", encoding="utf-8")
    os.environ.update(_GIT_IDENTITY)
    os.environ["GIT_CONFIG_GLOBAL"] = str(empty_config)
    os.environ["GIT_CONFIG_NOSYSTEM"] = "1"
    os.environ["XDG_DATA_HOME"] = str(home / "data")
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


@pytest.fixture(autouse=True, scope="session")
def quiet_structlog() -> None:
    structlog.configure(
        wrapper_class=structlog.make_filtering_bound_logger(30),
        logger_factory=structlog.PrintLoggerFactory(),
    )


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "postgres: needs the PostgreSQL of the machine")
