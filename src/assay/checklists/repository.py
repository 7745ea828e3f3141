"""The catalogs a review uses: the shipped ones plus the repository's, read from the BASE revision.

A pull request cannot edit the rules it is judged by: repository checklist files are read from the
base revision (as ``.assay.toml`` is), so a PR that changes them is still judged by the old ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import PurePosixPath
from typing import TYPE_CHECKING

from assay.checklists.catalog import (
    Catalog,
    CatalogSection,
    load_builtin_catalogs,
    ordered,
    parse_catalog,
)
from assay.config import ChecklistsConfig
from assay.errors import ConfigError

if TYPE_CHECKING:
    from assay.forge.base import RevisionReader

__all__ = ["load_repository_catalogs", "resolve_catalogs"]


def load_repository_catalogs(paths: Sequence[str], base: RevisionReader) -> tuple[Catalog, ...]:
    """Read and validate repository checklist files at the base revision.

    Args:
        paths: Paths from the repository root (``[checklists] files`` of ``.assay.toml``).
        base: The pull request's base revision.

    Returns:
        The catalogs, in the order given.

    Raises:
        ConfigError: A path is not a plain relative path, the file does not exist at the base
            revision, or it is not a valid catalog (the message names the file and the item).
    """
    catalogs = []
    for path in paths:
        _check_relative(path)
        content = base.read(path)
        if content is None:
            raise ConfigError(
                f"checklist file {path!r} (listed in .assay.toml [checklists] files) does not "
                "exist at the base revision; checklists are read from the base, so add the file "
                "in a pull request of its own first"
            )
        try:
            text = content.decode("utf-8")
        except UnicodeDecodeError:
            raise ConfigError(f"base:{path}: checklist file is not UTF-8") from None
        catalogs.append(parse_catalog(text, source=f"base:{path}"))
    return tuple(catalogs)


def resolve_catalogs(config: ChecklistsConfig, base: RevisionReader) -> tuple[Catalog, ...]:
    """The catalogs a review scores the change against, in group order.

    The shipped catalogs (all, or those ``config.builtin`` names) plus the repository's files
    read from ``base``. A repository catalog with the name of a shipped one replaces it. Items
    in ``config.skip_items`` are left out (a section left empty disappears).

    Args:
        config: The ``[checklists]`` table of the base revision's ``.assay.toml``.
        base: The pull request's base revision.

    Returns:
        The catalogs (empty when ``config.enabled`` is false).

    Raises:
        ConfigError: An unknown built-in name, an unreadable or invalid repository file, or an
            item id used by two catalogs (both named).
    """
    if not config.enabled:
        return ()
    builtin = load_builtin_catalogs()
    if config.builtin is not None:
        known = {catalog.name for catalog in builtin}
        unknown = sorted(set(config.builtin) - known)
        if unknown:
            raise ConfigError(
                f".assay.toml: [checklists] builtin names unknown catalog(s) "
                f"{', '.join(unknown)}; shipped: {', '.join(sorted(known))}"
            )
        builtin = tuple(catalog for catalog in builtin if catalog.name in config.builtin)
    repository = load_repository_catalogs(config.files, base)
    replaced = {catalog.name for catalog in repository}
    _check_unique_names(repository)
    catalogs = [c for c in builtin if c.name not in replaced] + list(repository)
    _check_unique_item_ids(catalogs)
    skipped = set(config.skip_items)
    kept = [_without_items(catalog, skipped) for catalog in catalogs]
    return ordered([catalog for catalog in kept if catalog is not None])


def _check_relative(path: str) -> None:
    pure = PurePosixPath(path)
    if not path.strip() or pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise ConfigError(
            f".assay.toml: [checklists] files: {path!r} must be a relative path inside the "
            "repository (no leading '/', no '..')"
        )


def _check_unique_names(catalogs: Sequence[Catalog]) -> None:
    seen: dict[str, str] = {}
    for catalog in catalogs:
        if catalog.name in seen:
            raise ConfigError(
                f"{catalog.source}: catalog name {catalog.name!r} is also used by "
                f"{seen[catalog.name]}"
            )
        seen[catalog.name] = catalog.source


def _check_unique_item_ids(catalogs: Sequence[Catalog]) -> None:
    owner: dict[str, str] = {}
    for catalog in catalogs:
        for _, item in catalog.entries():
            if item.id in owner:
                raise ConfigError(
                    f"{catalog.source}: item id {item.id!r} is also used by {owner[item.id]}; "
                    "item ids must be unique across all checklists in use"
                )
            owner[item.id] = catalog.source


def _without_items(catalog: Catalog, skipped: set[str]) -> Catalog | None:
    if not skipped:
        return catalog
    sections: list[CatalogSection] = []
    for section in catalog.sections:
        items = tuple(item for item in section.items if item.id not in skipped)
        if items:
            sections.append(section.model_copy(update={"items": items}))
    if not sections:
        return None
    return catalog.model_copy(update={"sections": tuple(sections)})
