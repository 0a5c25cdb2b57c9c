"""The command line of the local test server (:mod:`pytest_bfcl.testing.fake_openai`): an
OpenAI-compatible server, chat completions and the Responses API, that answers every BFCL
question of the chosen categories with its ground truth, for trying a setup (CI files, a
gateway, a hook) without a model::

    python -m pytest_bfcl.testing.fake_openai single_turn --port 8000

It prints its base URL on the first line and serves until stopped (Ctrl-C)."""

from __future__ import annotations

import argparse
import contextlib
import os
import sys
import threading
import time

from pytest_bfcl.dataset.categories import UnknownCategoryError, expand_categories
from pytest_bfcl.dataset.fetch import DatasetError, resolve_data_source
from pytest_bfcl.kinds import open_dataset
from pytest_bfcl.testing.fake_openai import FakeOpenAI
from pytest_bfcl.testing.prefix_cache import PrefixCache


def parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m pytest_bfcl.testing.fake_openai",
        allow_abbrev=False,  # "--mode prompt" would be taken as "--model prompt"
        description="An OpenAI-compatible server (POST /v1/chat/completions, POST "
        "/v1/responses, GET /v1/models) on 127.0.0.1 that answers BFCL questions with their "
        "ground truth. Prints its base URL, then serves until stopped.",
    )
    parser.add_argument(
        "categories",
        nargs="?",
        default="single_turn",
        help="comma-separated categories and groups it answers (default single_turn; memory "
        "and web search entries get an empty answer)",
    )
    parser.add_argument(
        "latency", nargs="?", type=_seconds, default=0.0, help="seconds before each answer (0)"
    )
    parser.add_argument(
        "mode", nargs="?", default="fc", choices=("fc", "prompt"), help="answer with tool "
        "calls (fc, default) or with calls written as text (prompt)",
    )  # fmt: skip
    parser.add_argument("--port", type=_port, default=0, help="port to listen on (a free one)")
    parser.add_argument(
        "--model",
        action="append",
        help="a model name it lists on GET /v1/models (repeatable; default test-model and "
        "bench-model)",
    )
    parser.add_argument("--data", help="a BFCL data directory (default: the pinned release)")
    parser.add_argument(
        "--capacity", type=_positive, help="requests answered at once; others queue"
    )
    parser.add_argument(
        "--die-after", type=_positive, help="exit after this many chat requests (1 or more)"
    )
    parser.add_argument(
        "--stall-after", type=_positive, help="stop answering after this many (1 or more)"
    )
    parser.add_argument(
        "--prefix-cache",
        action="store_true",
        help="a prefix cache: a request also pays the prefill of what this server has not seen",
    )
    return parser


def _seconds(text: str) -> float:
    value = float(text)
    if not 0 <= value < 3600:  # NaN and infinity too: the answer would never come
        raise argparse.ArgumentTypeError(f"{text} is not a number of seconds from 0 to 3600")
    return value


def _port(text: str) -> int:
    value = int(text)
    if not 0 <= value <= 65535:
        raise argparse.ArgumentTypeError(f"{text} is not a port (0 to 65535; 0: a free one)")
    return value


def _positive(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text} is not a count of 1 or more") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{text} is not a count of 1 or more")
    return value


def main(argv: list[str] | None = None) -> None:
    args = parser().parse_args(argv)
    try:
        categories = expand_categories(args.categories)
        dataset = open_dataset(resolve_data_source(args.data))
        fake = FakeOpenAI(dataset, categories, args.latency, args.mode, port=args.port)
    except (UnknownCategoryError, DatasetError) as exc:  # the answers are read at the start
        sys.exit(f"fake_openai: {exc}")
    except OSError as exc:  # the port is taken, or not ours to bind
        sys.exit(f"fake_openai: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}")
    fake.served_models = args.model or fake.served_models
    fake.capacity, fake.stall_after = args.capacity, args.stall_after
    fake.prefix_cache = PrefixCache() if args.prefix_cache else None
    if args.die_after is not None:

        def die() -> None:
            while fake.total_requests() < args.die_after:
                time.sleep(0.005)
            os._exit(3)

        threading.Thread(target=die, daemon=True).start()
    print(fake.base_url, flush=True)
    with contextlib.suppress(KeyboardInterrupt):
        fake.server.serve_forever()


if __name__ == "__main__":
    main()
