"""Names shared across layers, kept at the bottom so every side imports them downward: the
session plugin's registered name (the pytest glue registers it, the session finds it) and the
markers of the plugin's hooks (the hook specifications use them, and so do the built-in models,
which sit below the specifications' types)."""

from __future__ import annotations

import pluggy

PLUGIN_NAME = "bfcl-session"

# pytest's own marker names, so that conftest.py files implement these like any pytest hook.
hookspec = pluggy.HookspecMarker("pytest")
hookimpl = pluggy.HookimplMarker("pytest")
