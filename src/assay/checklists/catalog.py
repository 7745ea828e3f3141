"""Checklist catalogs: the TOML format, its validation, the built-in catalogs, repository ones.

A catalog is data (see ``docs/checklists.md``)::

    [catalog]
    name = "python"                                   # stable id, unique among catalogs in use
    title = { en = "Python Static-First Checklist", zh = "Python Static-First Checklist" }
    label = "P"                                       # bracket tag; sections may override it
    order = 30                                        # groups render in ascending order
    applies = { languages = ["python"] }              # or "always", or { paths = ["*.bzl"] }

    [[sections]]
    key = "typing"
    label = "P.A"
    title = { en = "Static structure and typing", zh = "静态结构与类型纪律" }

    [[sections.items]]
    id = "P.A.2"                                      # stable: findings and history cite it
    text.en = "No getattr/setattr with a literal attribute name"
    text.zh = "禁止 getattr/setattr literal 访问"
    static = { ruff = ["B009", "B010"], complete = true }

Validation is strict (unknown keys, missing languages, duplicate ids, unknown languages or
built-in checks are errors) and every error names the file and the item.
"""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from importlib import resources
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from assay.checklists.languages import KNOWN_LANGUAGES
from assay.errors import ConfigError

__all__ = [
    "BUILTIN_CHECKS",
    "Applicability",
    "Catalog",
    "CatalogItem",
    "CatalogSection",
    "Lang",
    "LocalizedText",
    "StaticCheck",
    "builtin_catalog_names",
    "load_builtin_catalogs",
    "parse_catalog",
]

Lang = Literal["en", "zh"]

BUILTIN_CHECKS: frozenset[str] = frozenset({"tests_changed", "deleted_tests", "pr_description"})
"""Named deterministic checks a catalog item may use (``static = { builtin = "…" }``):

- ``tests_changed``: source files changed (of the item's languages) but no test file did;
- ``deleted_tests``: test files deleted and no test file added or modified;
- ``pr_description``: the pull request has no description.
"""

_ITEM_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
_RULE_CODE = re.compile(r"^[A-Z][A-Z0-9-]{0,31}$")
_MAX_CATALOG_BYTES = 1_000_000


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class LocalizedText(_Strict):
    """A text in every language a review can be written in."""

    en: str = Field(min_length=1, max_length=2000)
    zh: str = Field(min_length=1, max_length=2000)

    @field_validator("en", "zh")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("must not be blank")
        return value

    def get(self, lang: Lang) -> str:
        """The text in ``lang``."""
        return self.zh if lang == "zh" else self.en


class Applicability(_Strict):
    """When a catalog or an item applies to a change; both lists empty means always.

    Otherwise it applies when at least one changed file is written in one of ``languages`` or
    matches one of ``paths`` (gitignore-style globs).
    """

    languages: tuple[str, ...] = ()
    paths: tuple[str, ...] = ()

    @model_validator(mode="before")
    @classmethod
    def _always(cls, data: Any) -> Any:
        if data == "always":
            return {}
        if isinstance(data, str):
            raise ValueError('must be "always" or a table with `languages` and/or `paths`')
        return data

    @field_validator("languages")
    @classmethod
    def _known_languages(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        unknown = sorted(set(value) - KNOWN_LANGUAGES)
        if unknown:
            known = ", ".join(sorted(KNOWN_LANGUAGES))
            raise ValueError(f"unknown language(s) {', '.join(unknown)}; known: {known}")
        return value

    @field_validator("paths")
    @classmethod
    def _non_empty_globs(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if any(not glob.strip() for glob in value):
            raise ValueError("path globs must not be empty")
        return value

    @property
    def always(self) -> bool:
        return not self.languages and not self.paths


class StaticCheck(_Strict):
    """A deterministic check for an item: analyzer rule codes or a named built-in check.

    A rule hit (or a built-in failure) fails the item without asking the model. ``complete``
    says the check alone also decides a pass: with no hit the item passes. Otherwise an item
    without a hit is left to the model (and is "not evaluated" when there is no model).
    """

    ruff: tuple[str, ...] = ()
    """Analyzer rule codes; a code also matches the codes it prefixes (``ASYNC``: ``ASYNC230``)."""
    builtin: str | None = None
    complete: bool = False

    @field_validator("ruff")
    @classmethod
    def _rule_codes(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        bad = [code for code in value if not _RULE_CODE.match(code)]
        if bad:
            raise ValueError(f"not a rule code: {', '.join(bad)} (e.g. E722, B009, ASYNC)")
        return value

    @field_validator("builtin")
    @classmethod
    def _known_builtin(cls, value: str | None) -> str | None:
        if value is not None and value not in BUILTIN_CHECKS:
            known = ", ".join(sorted(BUILTIN_CHECKS))
            raise ValueError(f"unknown built-in check {value!r}; known: {known}")
        return value

    @model_validator(mode="after")
    def _exactly_one_kind(self) -> StaticCheck:
        if bool(self.ruff) == (self.builtin is not None):
            raise ValueError("give either `ruff` rule codes or one `builtin` check")
        return self


class CatalogItem(_Strict):
    id: str
    """Stable id (``G.6.1.22``, ``P.A.1``): unique among all catalogs in use."""
    text: LocalizedText
    severity: Literal["P2", "P3"] = "P3"
    """Severity of the finding created when the item fails and no finding shows it."""
    applies: Applicability = Field(default_factory=Applicability)
    """Narrows the catalog's applicability (an item applies only where its catalog does)."""
    static: StaticCheck | None = None
    guidance: str | None = Field(default=None, max_length=2000)
    """Extra instructions for the model judging the item (English)."""

    @field_validator("id")
    @classmethod
    def _id_shape(cls, value: str) -> str:
        if not _ITEM_ID.match(value):
            raise ValueError(
                "must be 1-64 characters of letters, digits, '.', '_' or '-', starting with a "
                "letter or digit"
            )
        return value


class CatalogSection(_Strict):
    key: str = Field(min_length=1, max_length=64)
    title: LocalizedText
    label: str | None = Field(default=None, min_length=1, max_length=16)
    """The bracket tag of its items; defaults to the catalog's."""
    items: tuple[CatalogItem, ...] = Field(min_length=1)


class CatalogHeader(_Strict):
    name: str = Field(pattern=r"^[a-z0-9][a-z0-9_-]{0,63}$")
    title: LocalizedText
    label: str = Field(min_length=1, max_length=16)
    order: int = 20
    """Groups render in ascending order; shipped: General 10, languages 30 and up (so a
    repository catalog sits between them by default, as in the seed reviews)."""
    applies: Applicability = Field(default_factory=Applicability)
    description: str | None = Field(default=None, max_length=4000)


class Catalog(_Strict):
    """One checklist: a header and sections of items, in display order."""

    catalog: CatalogHeader
    sections: tuple[CatalogSection, ...] = Field(min_length=1)
    source: str = ""
    """Where it was read from (``builtin:general.toml``, ``base:.assay/checklist.toml``)."""

    @model_validator(mode="after")
    def _unique_keys_and_ids(self) -> Catalog:
        _first_duplicate("section key", (section.key for section in self.sections))
        _first_duplicate("item id", (item.id for _, item in self.entries()))
        return self

    @property
    def name(self) -> str:
        return self.catalog.name

    def entries(self) -> Iterable[tuple[CatalogSection, CatalogItem]]:
        """Every item with its section, in catalog order."""
        for section in self.sections:
            for item in section.items:
                yield section, item

    def label_of(self, section: CatalogSection) -> str:
        return section.label or self.catalog.label


def _first_duplicate(what: str, values: Iterable[str]) -> None:
    seen: set[str] = set()
    for value in values:
        if value in seen:
            raise ValueError(f"duplicate {what} {value!r}")
        seen.add(value)


def parse_catalog(text: str, *, source: str) -> Catalog:
    """Parse and validate one catalog.

    Args:
        text: The TOML text.
        source: Where it comes from, for error messages (a file name).

    Returns:
        The catalog, with ``source`` set.

    Raises:
        ConfigError: Invalid TOML or an invalid catalog; the message names ``source``, the
            item (by index and id) and the key.
    """
    if len(text.encode("utf-8", errors="replace")) > _MAX_CATALOG_BYTES:
        raise ConfigError(f"{source}: checklist file larger than {_MAX_CATALOG_BYTES} bytes")
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise ConfigError(f"{source}: invalid TOML: {error}") from None
    if "source" in data:
        raise ConfigError(f"{source}: unknown top-level key 'source'")
    try:
        return Catalog.model_validate({**data, "source": source})
    except ValidationError as error:
        raise ConfigError(f"{source}: {_describe_error(error, data)}") from None


def _describe_error(error: ValidationError, data: dict[str, Any]) -> str:
    """The first validation error, its location written with section keys and item ids."""
    first = error.errors()[0]
    location = list(first["loc"])
    parts: list[str] = []
    node: Any = data
    for index, part in enumerate(location):
        previous = location[index - 1] if index else None
        if isinstance(part, int) and isinstance(node, list) and 0 <= part < len(node):
            node = node[part]
            name = _entry_name(node, previous)
            parts[-1] = f"{parts[-1]}[{part}]{name}"
            continue
        parts.append(str(part))
        node = node.get(part) if isinstance(node, dict) else None
    where = ".".join(parts)
    message = str(first["msg"]).removeprefix("Value error, ")
    return f"{where}: {message}" if where else message


def _entry_name(node: Any, container: object) -> str:
    if not isinstance(node, dict):
        return ""
    if container == "items" and isinstance(node.get("id"), str):
        return f" (item {node['id']})"
    if container == "sections" and isinstance(node.get("key"), str):
        return f" (section {node['key']})"
    return ""


_BUILTIN_FILES: tuple[str, ...] = (
    "general.toml",
    "python.toml",
    "cpp.toml",
    "go.toml",
    "typescript.toml",
    "java.toml",
    "rust.toml",
)


def load_builtin_catalogs() -> tuple[Catalog, ...]:
    """The catalogs shipped with Assay, in group order.

    Raises:
        ConfigError: A shipped file is invalid (a packaging bug; tests guard against it).
    """
    return _builtin_catalogs()


def builtin_catalog_names() -> tuple[str, ...]:
    """Names of the shipped catalogs, in group order."""
    return tuple(catalog.name for catalog in _builtin_catalogs())


def _builtin_catalogs() -> tuple[Catalog, ...]:
    # Read on each call: the files are small and callers keep the result for a whole round.
    data = resources.files("assay.checklists").joinpath("data")
    catalogs = [
        parse_catalog(data.joinpath(name).read_text(encoding="utf-8"), source=f"builtin:{name}")
        for name in _BUILTIN_FILES
    ]
    return tuple(sorted(catalogs, key=lambda catalog: catalog.catalog.order))


def ordered(catalogs: Sequence[Catalog]) -> tuple[Catalog, ...]:
    """Catalogs in group order: ascending ``order``, ties in the given order."""
    return tuple(sorted(catalogs, key=lambda catalog: catalog.catalog.order))
