"""Servers the run starts (vLLM replicas, ``--bfcl-server-cmd``): their commands, processes,
pid files and logs, what they are given, and the client of a started server that xdist workers
share. The clients that talk to them live in :mod:`pytest_bfcl.models`."""
