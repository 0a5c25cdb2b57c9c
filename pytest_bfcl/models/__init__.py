"""Model clients: OpenAI-compatible endpoints (chat, Responses, the completions route), stored
generations, the oracle, and the content-addressed response cache. Servers the run starts live
in :mod:`pytest_bfcl.servers`; the replicas' routing in :mod:`pytest_bfcl.routing`."""
