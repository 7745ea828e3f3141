"""``python -m assay``."""

from assay.cli import main

main()
