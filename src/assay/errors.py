"""Exceptions raised by Assay.

The tree::

    AssayError                    anything Assay raises on purpose
    ├── ConfigError               the user's mistake; the message says the fix
    ├── GitError                  a git command failed, or a path is not a repository
    │   └── UnknownRefError       a ref that does not resolve to a commit
    ├── DiffError                 a diff that cannot be parsed
    ├── StoreError                the database cannot be opened or migrated
    └── LLMError                  the model endpoint misbehaved
        ├── LLMUnreachable        no connection to the endpoint at all (after retries)
        ├── LLMHTTPError          an HTTP error status that retries did not cure
        ├── LLMOutputInvalid      the reply did not validate (after re-asks)
        ├── LLMTruncated          ``finish_reason == "length"`` (after retries)
        └── LLMPending            batch mode: the reply is not in the cache yet

A retry loop catches exactly what it retries; everything else propagates.
"""

from __future__ import annotations

__all__ = [
    "AssayError",
    "ConfigError",
    "DiffError",
    "GitError",
    "LLMError",
    "LLMHTTPError",
    "LLMOutputInvalid",
    "LLMPending",
    "LLMTruncated",
    "LLMUnreachable",
    "StoreError",
    "UnknownRefError",
]


class AssayError(Exception):
    """Base class of every error Assay raises on purpose.

    Example::

        try:
            result = review_local(...)
        except AssayError as error:
            print(f"assay: {error}")
    """


class ConfigError(AssayError):
    """A usage or configuration mistake; the message names the fix."""


class GitError(AssayError):
    """A git command failed, or the path is not a git repository."""


class UnknownRefError(GitError):
    """A ref (branch, tag, SHA) does not resolve to a commit."""


class DiffError(AssayError):
    """A unified diff could not be parsed."""


class StoreError(AssayError):
    """The database could not be opened, migrated or written."""


class LLMError(AssayError):
    """The model endpoint failed or answered with something unusable."""

    def __init__(self, message: str, *, stage: str = "") -> None:
        super().__init__(message)
        self.stage = stage


class LLMUnreachable(LLMError):
    """No connection could be made to the model endpoint."""


class LLMHTTPError(LLMError):
    """The endpoint answered with an HTTP error that retries did not cure."""

    def __init__(self, message: str, *, stage: str = "", status_code: int, body: str = "") -> None:
        super().__init__(message, stage=stage)
        self.status_code = status_code
        self.body = body


class LLMOutputInvalid(LLMError):
    """The reply did not validate against the stage's schema, even after re-asking."""

    def __init__(self, message: str, *, stage: str = "", body: str = "", errors: str = "") -> None:
        super().__init__(message, stage=stage)
        self.body = body
        self.errors = errors


class LLMTruncated(LLMError):
    """The reply was cut by the token limit (``finish_reason == "length"``)."""


class LLMPending(LLMError):
    """Batch mode: the request is not answered in the replay cache yet.

    Raised instead of calling the endpoint; the orchestrator collects the pending
    requests of a round and exports them as a batch file.
    """

    def __init__(self, message: str, *, stage: str = "", key: str, body: dict[str, object]) -> None:
        super().__init__(message, stage=stage)
        self.key = key
        self.body = body
