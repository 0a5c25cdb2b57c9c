"""pytest-bfcl's handler families against the pinned release's own handlers: the goldens hold
what the release's handler of every family compared (``handler_cases.FAMILIES``) renders for
a single-turn entry and a two-turn conversation (every step's prompt, with think blocks, calls
and results fed back), and how their decoders read a corpus of raw answers; they are written by ``python -m pytest_bfcl.conformance handlers --write``,
run with the release installed."""

from __future__ import annotations

import json

import pytest

from pytest_bfcl.conformance.handler_cases import FAMILIES, build_cases, normalised, ours
from pytest_bfcl.conformance.handlers_cli import differences

GOLDENS = "tests/data/handlers/reference_outputs.json"


@pytest.fixture(scope="module")
def compared(dataset, texts, data_source, request):
    cases = build_cases(dataset, texts)
    mine = normalised(
        json.loads(json.dumps(ours(cases, data_source.unpacked_root, texts, dataset)))
    )
    reference = json.loads((request.config.rootpath / GOLDENS).read_text())
    return cases, mine, reference


def test_goldens_cover_every_family_single_turn_conversation_and_decoders(compared):
    cases, _, reference = compared
    assert set(reference) == set(cases)
    for handler, model, _fc in FAMILIES:
        assert len(reference[f"{handler} {model} single"]["prompts"]) == 1
        # ThinkAgent's execute decoder reads no call, so each turn ends at its first answer
        steps = 2 if handler == "ThinkAgentHandler" else 4
        assert len(reference[f"{handler} {model} conversation"]["prompts"]) == steps
    decoders = [key for key in reference if key.endswith("decoders")]
    # Qwen FC, Llama 3.1, Phi-4 x2, Hammer, xLAM x2, Arch, Granite 3; Falcon 3, Granite 4,
    # Granite function calling, Phi FC, FunctionGemma; GLM, Mistral FC, DeepSeek-R1, BitAgent,
    # ThinkAgent, Pelican-VL, Nanbeige
    assert len(decoders) == 21


@pytest.mark.parametrize("case", ["single", "conversation", "decoders"])
def test_prompts_and_decoding_are_the_releases(compared, case):
    _, mine, reference = compared
    keys = [key for key in reference if key.endswith(case)]
    assert keys
    found = differences({k: reference[k] for k in keys}, mine)
    assert not found, "\n".join(found)


def test_a_changed_prompt_is_reported_with_its_lines(compared):
    _, mine, reference = compared
    key = "QwenFCHandler Qwen/Qwen3-8B conversation"
    changed = json.loads(json.dumps(mine))
    changed[key]["prompts"][2] = changed[key]["prompts"][2].replace("<tool_response>", "<tr>")
    found = differences({key: reference[key]}, changed)
    assert len(found) == 1 and "prompt 2" in found[0] and "<tr>" in found[0]
