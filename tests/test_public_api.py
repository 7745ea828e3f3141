"""The public surface: `assay.__all__` lists exactly the public names, sorted."""

from __future__ import annotations

import assay


def test_all_is_sorted_and_complete() -> None:
    public = sorted(
        name for name in vars(assay) if not name.startswith("_") and name not in {"annotations"}
    )
    modules = {name for name in public if type(getattr(assay, name)).__name__ == "module"}
    assert assay.__all__ == sorted(assay.__all__)
    assert sorted(set(public) - modules) == assay.__all__


def test_version() -> None:
    assert assay.__version__ == "0.1.0"
