"""Errors that decide how a run ends, shared by every package (no imports of the project).

Three kinds of trouble, three outcomes:

- the model's answer is wrong, malformed, huge or hostile: a verdict, never an exception here;
- the set-up is wrong (a missing extra, an endpoint that refuses us, a broken result file):
  :class:`SetupError`, found before generation starts, ends the session with one line;
- the infrastructure fails mid-run (a server that went down, web tools failing again and
  again): :class:`RunStopped` stops the session once instead of failing entry after entry.
"""

from __future__ import annotations


class SetupError(Exception):
    """A problem of the run's set-up, with what to do about it. Raised before generation
    starts; the session ends with this message alone (no traceback)."""


class InfrastructureError(RuntimeError):
    """Something outside the model failed for one entry (server, network, disk). The entry is
    an error (``E``) and leaves the score; the message is shown without a traceback."""


class RunStopped(InfrastructureError):
    """The infrastructure failed in a way that makes the remaining entries pointless; the
    session stops once with this message."""


class ToolUnavailable(InfrastructureError):
    """A tool cannot do its work because of the run, not the model's call (a web recording
    is missing, the embedding model cannot be loaded). It stops the entry with an error
    instead of being fed back to the model as a result."""
