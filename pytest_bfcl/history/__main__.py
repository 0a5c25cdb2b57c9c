import sys

from pytest_bfcl.history.cli import main

sys.exit(main())
