"""The pytest session of a run with ``--bfcl-model``: imported by :mod:`pytest_bfcl.plugin`
only when a model is given, so that a pytest run without one pays nothing for the engine.

- :mod:`.start`: the run, its baseline and this process's session plugin; the controller's
  handoff to xdist workers (:mod:`.handoff`, one typed object);
- :mod:`.items`: one collector per category, one item per entry;
- :mod:`.common`, :mod:`.controller`, :mod:`.worker`: the session plugin of every process, of
  a single process or an xdist controller, and of an xdist worker.
"""

from pytest_bfcl.session.start import start, worker_input

__all__ = ["start", "worker_input"]
