"""Which checklist items apply to a change: a pure function of the paths in the diff.

``M total`` of a review is the number of applicable items, so it must not depend on anything a
model says. An item applies when its catalog applies and the item's own condition (if any) holds;
a condition holds when it is ``always`` or some changed file is written in one of its languages
or matches one of its globs. Every file of the diff counts, deleted ones included (their base
path): deleting Python tests is a Python change.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from assay.checklists.catalog import Applicability, Catalog, CatalogItem, CatalogSection, Lang
from assay.checklists.languages import detect_language, glob_matches
from assay.diff.types import FileDiff

__all__ = ["ApplicableItem", "applicable_items", "applies_to"]


@dataclass(frozen=True)
class ApplicableItem:
    """An item of a catalog that applies to the change, with what rendering needs."""

    catalog: Catalog
    section: CatalogSection
    item: CatalogItem

    @property
    def item_id(self) -> str:
        return self.item.id

    @property
    def label(self) -> str:
        return self.catalog.label_of(self.section)

    def text(self, lang: Lang) -> str:
        return self.item.text.get(lang)

    def section_title(self, lang: Lang) -> str:
        return self.section.title.get(lang)

    def languages(self) -> tuple[str, ...]:
        """The languages the item (else its catalog) is restricted to; ``()``: any."""
        return self.item.applies.languages or self.catalog.catalog.applies.languages


def applies_to(condition: Applicability, paths: Sequence[str]) -> bool:
    """Whether ``condition`` holds for a change touching ``paths``."""
    if condition.always:
        return True
    languages = set(condition.languages)
    return any(
        detect_language(path) in languages or any(glob_matches(g, path) for g in condition.paths)
        for path in paths
    )


def applicable_items(
    catalogs: Sequence[Catalog], files: Sequence[FileDiff]
) -> tuple[ApplicableItem, ...]:
    """The items that apply to the change, in catalog order then item order.

    Args:
        catalogs: The catalogs in use, in group order.
        files: The diff.

    Returns:
        One entry per applicable item; its length is the review's ``M total`` when every item
        is evaluated.
    """
    paths = _paths(files)
    applicable: list[ApplicableItem] = []
    for catalog in catalogs:
        if not applies_to(catalog.catalog.applies, paths):
            continue
        for section, item in catalog.entries():
            if applies_to(item.applies, paths):
                applicable.append(ApplicableItem(catalog, section, item))
    return tuple(applicable)


def _paths(files: Sequence[FileDiff]) -> tuple[str, ...]:
    paths: list[str] = []
    for file in files:
        paths.append(file.path)
        if file.old_path and file.old_path != file.path:
            paths.append(file.old_path)
    return tuple(paths)
