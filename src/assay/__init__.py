"""Assay: an AI code reviewer for pull requests.

Example::

    from assay import LocalReviewRequest, Settings, Store, review_local

    store = Store.open("sqlite:///assay.db")
    done = review_local(LocalReviewRequest(repo=Path(".")), Settings(), store=store)
    print(done.outcome.result.verdict)
"""

from __future__ import annotations

from assay.config import RepoConfig, Settings
from assay.errors import AssayError, ConfigError, GitError, LLMError
from assay.model import Finding, ReportedFinding, RoundResult, Severity, Verdict
from assay.runner import LocalReview, LocalReviewRequest, review_local
from assay.store import Store

__all__ = [
    "AssayError",
    "ConfigError",
    "Finding",
    "GitError",
    "LLMError",
    "LocalReview",
    "LocalReviewRequest",
    "RepoConfig",
    "ReportedFinding",
    "RoundResult",
    "Settings",
    "Severity",
    "Store",
    "Verdict",
    "review_local",
]

__version__ = "0.1.0"
