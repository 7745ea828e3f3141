"""The public surface of assay.testing: one sorted __all__ that matches the namespace."""

from __future__ import annotations

import assay.testing


def test_all_is_sorted_and_complete() -> None:
    public_names = sorted(name for name in vars(assay.testing) if not name.startswith("_"))

    assert assay.testing.__all__ == sorted(assay.testing.__all__)
    assert set(public_names) - {"annotations"} == set(assay.testing.__all__)


def test_public_classes_name_the_public_module() -> None:
    assert repr(assay.testing.Reply) == "<class 'assay.testing.Reply'>"
    assert assay.testing.ScriptedLLMServer.__module__ == "assay.testing"
