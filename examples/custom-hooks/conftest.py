"""pytest-bfcl extension hooks in a model repository's conftest.py.

- ``acme_tools``: the team's own tools and questions (BFCL format, beside this file) become
  regression tests checked by the benchmark's checkers.
- ``--bfcl-model=acme:<name>``: the team's own model handler; here it wraps the built-in
  OpenAI-compatible client and strips reasoning from every response before it is scored.
- every verdict is also appended to ``bfcl-verdicts.jsonl`` (a dashboard feed).
"""

from __future__ import annotations

import json
from pathlib import Path

from pytest_bfcl.dataset.custom import CustomCategory

HERE = Path(__file__).parent


def pytest_bfcl_add_categories():
    return [
        CustomCategory(
            name="acme_tools",
            questions=HERE / "acme_tools.json",
            answers=HERE / "acme_tools_answers.json",
            checker="simple",
        )
    ]


def pytest_bfcl_make_model(spec, settings, scoring, source, hook):
    if not spec.startswith("acme:"):
        return None  # leave other spellings to other handlers
    served = spec.removeprefix("acme:")
    return hook.pytest_bfcl_make_model(
        spec=served, settings=settings, scoring=scoring, source=source, hook=hook
    )


def pytest_bfcl_transform_request(request, model):
    # A field your gateway expects on every request (here OpenAI's end-user id, for its logs).
    # Transforms apply before the cache key is taken, so a change here is a new request.
    request["user"] = "bfcl-ci"


def pytest_bfcl_transform_response(record, model):
    record["reasoning"] = None  # keep reasoning out of stored results


def pytest_bfcl_result(verdict, generation):
    line = {"id": verdict.id, "valid": verdict.valid, "error_type": verdict.error_type}
    with (HERE / "bfcl-verdicts.jsonl").open("a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")
