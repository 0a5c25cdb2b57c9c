"""Extension hooks from a model repository's conftest.py, end to end (via pytester)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom-hooks"


def _data(data_source):
    return [f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider"]


def test_custom_category_and_observer_from_conftest(pytester, data_source):
    for name in ("conftest.py", "acme_tools.json", "acme_tools_answers.json"):
        shutil.copy(EXAMPLE / name, pytester.path / name)
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=acme_tools,simple_python", "-k", "acme or _1",
        *_data(data_source),
    )  # fmt: skip
    result.assert_outcomes(passed=2 + 111)
    out = result.stdout.str()
    assert "acme_tools" in out and "2      2   100.00%" in out
    feed = [json.loads(x) for x in (pytester.path / "bfcl-verdicts.jsonl").read_text().splitlines()]
    assert {"id": "acme_tools_0", "valid": True, "error_type": None} in feed
    assert len(feed) == 113


def test_a_project_model_handler_and_its_failures(pytester, data_source, tmp_path):
    (pytester.path / "conftest.py").write_text(
        f"""
from pytest_bfcl.dataset.custom import CustomCategory
from pytest_bfcl.models.base import Generation

class Echo:
    name = "echo"
    def __init__(self, scoring):
        self.scoring = scoring
    def metadata(self):
        return {{"kind": "echo"}}
    def generate(self, task):
        # always calls the first function with no arguments
        return Generation(id=task.entry.id, result=[{{task.entry.function[0].name: "{{}}"}}])

def pytest_bfcl_make_model(spec, settings, scoring, source, hook):
    return Echo(scoring) if spec == "echo" else None

def pytest_bfcl_add_categories():
    return [CustomCategory(name="acme_tools", questions=r"{EXAMPLE / "acme_tools.json"}",
                           answers=r"{EXAMPLE / "acme_tools_answers.json"}")]
"""
    )
    result = pytester.runpytest(
        "--bfcl-model=echo", "--bfcl-category=acme_tools", *_data(data_source)
    )
    result.assert_outcomes(failed=2)
    assert "simple_function_checker:missing_required" in result.stdout.str()


def test_custom_ids_must_name_their_category(pytester, data_source, tmp_path):
    questions = tmp_path / "q.json"
    line = json.loads((EXAMPLE / "acme_tools.json").read_text().splitlines()[0])
    line["id"] = "other_0"
    questions.write_text(json.dumps(line) + "\n")
    (pytester.path / "conftest.py").write_text(
        f"""
from pytest_bfcl.dataset.custom import CustomCategory

def pytest_bfcl_add_categories():
    return [CustomCategory(name="acme_tools", questions=r"{questions}", kind="irrelevance")]
"""
    )
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=acme_tools", *_data(data_source)
    )
    assert result.ret != 0
    assert (
        "entry id 'other_0' must read 'acme_tools_<number>'"
        in result.stdout.str() + result.stderr.str()
    )


def test_an_observer_gets_each_conversations_inference_log(pytester, data_source):
    # Without an observer or an HTML report nothing reads the logs, and pending generations
    # drop them; an observer must still get them whole.
    pytester.makeconftest(
        "SEEN = []\n"
        "def pytest_bfcl_result(verdict, generation):\n"
        "    SEEN.append(bool((generation.details or {}).get('inference_log')))\n"
        "def pytest_sessionfinish(session):\n"
        "    print(f'logs: {sum(SEEN)} of {len(SEEN)}')\n"
    )
    result = pytester.runpytest(
        "--bfcl-model=oracle", "--bfcl-category=multi_turn_base", "-k", "multi_turn_base_1",
        f"--bfcl-data={data_source.data_dir}", "-p", "no:cacheprovider", "-s",
    )  # fmt: skip
    seen = result.stdout.str().split("logs: ")[1].split()
    assert seen[0] == seen[2] and int(seen[0]) > 0


def test_without_a_reader_pending_generations_drop_their_inference_logs():
    from pytest_bfcl.run.engine import BfclRun
    from pytest_bfcl.settings import Settings

    run = BfclRun.create(Settings(model="oracle", categories=["multi_turn_base"]))
    entry_id = run.entries_for("multi_turn_base")[0].id
    kept = run.generation_for(entry_id)
    assert kept.details and kept.details.get("inference_log")
    run.keep_inference_logs = False
    dropped = run.generation_for(entry_id)
    assert dropped.details is not None and "inference_log" not in dropped.details
    assert dropped.result == kept.result and dropped.details["latency"] == kept.details["latency"]
