"""A stand-in for the ``vllm`` executable: ``python -m pytest_bfcl.testing.stand_in_vllm serve
MODEL --host H --port P ...``
serves the test server's oracle answers on that port. Behaviour from the environment:

- ``STANDIN_CATEGORIES``: categories to answer (comma-separated); ``STANDIN_MODE``: fc or prompt
- ``STANDIN_STARTS``: a file that gets one line per start (to count servers)
- ``STANDIN_HEALTH_DELAY``: seconds before the port opens
- ``STANDIN_FAIL``: log an error and exit 1 instead of serving
- ``STANDIN_DIE_AFTER``: exit (status 3) after this many chat requests (with
  ``STANDIN_DIE_DEVICES``: only the server whose ``CUDA_VISIBLE_DEVICES`` is that)
- ``STANDIN_FAIL_DEVICES``: like ``STANDIN_FAIL``, for the server on these devices only
- ``STANDIN_LATENCY``: seconds before each answer
- ``STANDIN_ECHO``: a line to print at start (a server printing a token it was given)
- ``STANDIN_TEMP_FILE``: leave a ``vllm_dist_*`` file in the temporary folder, as vLLM does
- ``STANDIN_ROUTE=completions``: serve ``/v1/completions`` and ``/tokenize`` instead, answering
  from the prompt (:mod:`.completions_server`), each request appended to the file
  ``STANDIN_REQUESTS`` names when it is set
"""

from __future__ import annotations

import argparse
import os
import sys
import threading
import time
from pathlib import Path

from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.testing.fake_openai import FakeOpenAI, _Server


def starts_recorded(path: Path) -> int:
    """How many times the stand-in started, from its ``STANDIN_STARTS`` file (0: none yet)."""
    return len(path.read_text().split()) if path.exists() else 0


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("command")
    parser.add_argument("model")
    parser.add_argument("--host")
    parser.add_argument("--port", type=int)
    parser.add_argument("--served-model-name")
    args, passthrough = parser.parse_known_args()
    # vLLM prints its arguments at start, secrets included
    print(f"INFO stand-in vllm {args.command} {args.model} flags={passthrough}", flush=True)
    devices = os.environ.get("CUDA_VISIBLE_DEVICES", "")
    print(f"INFO devices={devices or '(all)'}", flush=True)
    if os.environ.get("STANDIN_ECHO"):
        print(f"INFO {os.environ['STANDIN_ECHO']}", flush=True)
    if os.environ.get("STANDIN_TEMP_FILE"):
        import tempfile

        handle, name = tempfile.mkstemp(prefix="vllm_dist_")
        os.close(handle)
        print(f"INFO temporary file {name}", flush=True)
    if os.environ.get("STANDIN_STARTS"):
        with open(os.environ["STANDIN_STARTS"], "a") as fh:
            fh.write(f"{os.getpid()}\n")
    if os.environ.get("STANDIN_FAIL") or os.environ.get("STANDIN_FAIL_DEVICES") == devices:
        print("ERROR torch.OutOfMemoryError: CUDA out of memory (stand-in)", flush=True)
        sys.exit(1)
    if os.environ.get("STANDIN_ROUTE") == "completions":
        from pathlib import Path

        from pytest_bfcl.testing.completions_server import serve

        record = os.environ.get("STANDIN_REQUESTS")
        served = args.served_model_name or args.model
        serve(args.port, served, 32768, Path(record) if record else None)
        return
    from pytest_bfcl.dataset.fetch import ensure_pinned_data

    categories = os.environ.get("STANDIN_CATEGORIES", "simple_python").split(",")
    fake = FakeOpenAI(
        open_dataset(ensure_pinned_data()), categories, mode=os.environ.get("STANDIN_MODE", "fc")
    )
    fake.server.server_close()
    fake.served_models = [args.served_model_name or args.model]  # as vLLM lists on /v1/models
    fake.latency = float(os.environ.get("STANDIN_LATENCY", "0"))
    time.sleep(float(os.environ.get("STANDIN_HEALTH_DELAY", "0")))
    fake.server = _Server((args.host, args.port), fake._handler())
    die_after = int(os.environ.get("STANDIN_DIE_AFTER", "0"))
    if die_after < 0:  # 0: never; fewer would die before serving
        sys.exit(f"stand_in_vllm: STANDIN_DIE_AFTER={die_after} is not a count (0: never)")
    if os.environ.get("STANDIN_DIE_DEVICES", devices) != devices:
        die_after = 0
    if die_after:

        def watch() -> None:
            while fake.total_requests() < die_after:
                time.sleep(0.01)
            print("ERROR RuntimeError: CUDA error: device lost (stand-in)", flush=True)
            os._exit(3)

        threading.Thread(target=watch, daemon=True).start()
    print(f"INFO serving on {args.host}:{args.port}", flush=True)
    fake.server.serve_forever()


if __name__ == "__main__":
    main()
