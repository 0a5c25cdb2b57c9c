"""A project's custom-category ids are checked as the benchmark's read: ``<name>_<number>``
in ASCII, of a sane length. An id with control characters, or 200 kB long, is refused in one
line before any request (it would be printed, and sent as every request's session header)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from pydantic import ValidationError

from pytest_bfcl.dataset.custom import CustomCategory

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "custom-hooks"


@pytest.mark.parametrize(
    "entry_id",
    [
        pytest.param("acme_tools:\x1b[2J\rcompare: passed_1", id="control-characters"),
        pytest.param("acme_tools:" + "x" * 200_000 + "_1", id="200-kB"),
        pytest.param("acme_tools_" + "1" * 200_000, id="200-kB-of-digits"),
        pytest.param("acme_tools_\u0661", id="a-digit-not-ascii"),
        pytest.param("acme_tools_1\u202e", id="bidi-control"),
    ],
)
def test_an_id_the_benchmark_would_not_spell_is_refused_in_one_line(
    pytester, data_source, tmp_path, entry_id
):
    questions = tmp_path / "q.json"
    line = json.loads((EXAMPLE / "acme_tools.json").read_text().splitlines()[0])
    line["id"] = entry_id
    questions.write_text(json.dumps(line) + "\n")
    (pytester.path / "conftest.py").write_text(
        "from pytest_bfcl.dataset.custom import CustomCategory\n\n"
        "def pytest_bfcl_add_categories():\n"
        f"    return [CustomCategory(name='acme_tools', questions=r'{questions}', "
        "kind='irrelevance')]\n"
    )
    result = pytester.runpytest_subprocess(
        "--bfcl-model=oracle",
        "--bfcl-category=acme_tools",
        f"--bfcl-data={data_source.data_dir}",
        "-p",
        "no:cacheprovider",
    )
    assert result.ret != 0
    output = result.stdout.str() + result.stderr.str()
    refusals = [line for line in output.splitlines() if "must read 'acme_tools_<number>'" in line]
    assert len(refusals) == 1 and len(refusals[0]) < 400
    assert "\x1b" not in output and "\u202e" not in output and len(output) < 20_000


@pytest.mark.parametrize("name", ["acme\x1b[2J", "a" * 300, "caf\u00e9", "acme\u202e"])
def test_a_category_name_of_other_characters_or_length_is_refused(name):
    with pytest.raises(ValidationError) as raised:
        CustomCategory(name=name, questions=Path("q.json"))
    message = str(raised.value)
    assert "use ASCII letters, digits and underscores" in message
    assert "\x1b" not in message and "\u202e" not in message and len(message) < 600
