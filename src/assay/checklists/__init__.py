"""Checklists: data-driven catalogs, deterministic applicability, static-first evaluation.

- Catalogs are TOML files (``docs/checklists.md``): the shipped ones in ``checklists/data/``
  and the repository's own, listed in ``.assay.toml`` ``[checklists] files`` and read from the
  BASE revision (``resolve_catalogs``).
- ``applicable_items`` decides from the diff's paths alone which items count (``M total``).
- The stage itself is ``assay.pipeline.checklists.evaluate_checklists``; it returns a
  ``ChecklistOutcome`` whose links go onto the findings with ``link_findings``.
- ``dedupe_strengths`` merges the reps' strengths; ``render_catalog_listing`` prints catalogs.
"""

from __future__ import annotations

from assay.checklists.applicability import ApplicableItem, applicable_items, applies_to
from assay.checklists.catalog import (
    BUILTIN_CHECKS,
    Applicability,
    Catalog,
    CatalogItem,
    CatalogSection,
    LocalizedText,
    StaticCheck,
    builtin_catalog_names,
    load_builtin_catalogs,
    parse_catalog,
)
from assay.checklists.languages import detect_language, is_test_path, languages_in
from assay.checklists.listing import render_catalog_listing
from assay.checklists.outcome import (
    ChecklistOutcome,
    checklist_links,
    entry_text,
    link_findings,
    remap_finding_ids,
)
from assay.checklists.reply import STAGE, ChecklistReply
from assay.checklists.repository import load_repository_catalogs, resolve_catalogs
from assay.checklists.strengths import dedupe_strengths

__all__ = [
    "BUILTIN_CHECKS",
    "STAGE",
    "Applicability",
    "ApplicableItem",
    "Catalog",
    "CatalogItem",
    "CatalogSection",
    "ChecklistOutcome",
    "ChecklistReply",
    "LocalizedText",
    "StaticCheck",
    "applicable_items",
    "applies_to",
    "builtin_catalog_names",
    "checklist_links",
    "dedupe_strengths",
    "detect_language",
    "entry_text",
    "is_test_path",
    "languages_in",
    "link_findings",
    "load_builtin_catalogs",
    "load_repository_catalogs",
    "parse_catalog",
    "remap_finding_ids",
    "render_catalog_listing",
    "resolve_catalogs",
]
