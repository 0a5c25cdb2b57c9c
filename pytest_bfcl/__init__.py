"""pytest-bfcl: the Berkeley Function-Calling Leaderboard (BFCL V4) as pytest regression tests."""

__version__ = "0.2.0"
