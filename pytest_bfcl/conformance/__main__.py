"""``python -m pytest_bfcl.conformance RESULTS_DIR ...``; see :mod:`pytest_bfcl.conformance.cli`."""

from __future__ import annotations

import sys

from pytest_bfcl.conformance.cli import main

if __name__ == "__main__":
    sys.exit(main())
