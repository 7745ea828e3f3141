"""``assay checklists``: the catalogs and their items as plain text."""

from __future__ import annotations

from collections.abc import Sequence

from assay.checklists.catalog import Applicability, Catalog, CatalogItem, Lang

__all__ = ["render_catalog_listing"]


def render_catalog_listing(catalogs: Sequence[Catalog], *, lang: Lang) -> str:
    """List catalogs, sections and items with ids, applicability and deterministic checks.

    Args:
        catalogs: The catalogs, in group order.
        lang: ``en`` or ``zh`` (titles and item texts).

    Returns:
        The listing, ending with a newline. Example (abridged)::

            General Principles Checklist [general] · label 6.1 · applies: always · 25 items
              [6.1] Software Engineering
                G.6.1.1    SRP: each module, class and function has one reason to change
    """
    blocks = [_catalog_block(catalog, lang) for catalog in catalogs]
    if not blocks:
        return ("No checklists in use." if lang == "en" else "未启用任何清单。") + "\n"
    return "\n\n".join(blocks) + "\n"


def _catalog_block(catalog: Catalog, lang: Lang) -> str:
    header = catalog.catalog
    count = sum(1 for _ in catalog.entries())
    lines = [
        f"{header.title.get(lang)} [{header.name}] · label {header.label} · applies: "
        f"{_applies(header.applies)} · {count} items · {catalog.source}"
    ]
    width = max(len(item.id) for _, item in catalog.entries())
    for section in catalog.sections:
        lines.append(f"  [{catalog.label_of(section)}] {section.title.get(lang)}")
        for item in section.items:
            lines.append(f"    {item.id:<{width}}  {item.text.get(lang)}{_notes(item)}")
    return "\n".join(lines)


def _applies(condition: Applicability) -> str:
    if condition.always:
        return "always"
    parts = []
    if condition.languages:
        parts.append("languages " + ", ".join(condition.languages))
    if condition.paths:
        parts.append("paths " + ", ".join(condition.paths))
    return "; ".join(parts)


def _notes(item: CatalogItem) -> str:
    notes = []
    if not item.applies.always:
        notes.append(f"applies: {_applies(item.applies)}")
    check = item.static
    if check is not None:
        if check.builtin is not None:
            notes.append(f"check: {check.builtin}")
        else:
            notes.append(f"ruff: {', '.join(check.ruff)}{' (complete)' if check.complete else ''}")
    return f"  ({'; '.join(notes)})" if notes else ""
