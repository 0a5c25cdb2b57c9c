"""The cases on which the leaderboard's open-weight handlers and pytest-bfcl's families are
compared (:mod:`pytest_bfcl.handlers`): for each family, a single-turn entry and a two-turn
conversation with canned answers (calls, think blocks, plain text, results fed back), and a
corpus of raw answers for the decoders (calls without newlines inside their tags, an unclosed
tag, a bad call among good ones, a call inside ``<think>``, string arguments). What pytest-bfcl
renders and decodes on them (:func:`ours`) is compared with what the release's own handlers
give (:mod:`.handler_script`, run in the conformance virtualenv)."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

from pytest_bfcl.conformance.handler_answers import ANSWERS, RAW_ANSWERS
from pytest_bfcl.dataset.load import Dataset
from pytest_bfcl.dataset.texts import ProtocolTexts
from pytest_bfcl.decode import DecodeError
from pytest_bfcl.handlers import family_for
from pytest_bfcl.handlers.base import Family
from pytest_bfcl.models.function_docs import (
    insert_system_prompt,
    system_prompt,
    with_language_hints,
)

SINGLE_TURN_ENTRY = "simple_python_0"
CONVERSATION_ENTRY = "multi_turn_base_0"

# (handler, leaderboard model name, function-calling) of each family compared
FAMILIES = (
    ("QwenHandler", "Qwen/Qwen3-8B", False),
    ("QwenFCHandler", "Qwen/Qwen3-8B", True),
    ("LlamaHandler", "meta-llama/Llama-3.1-8B-Instruct", False),
    ("LlamaHandler", "meta-llama/Llama-4-Scout-17B-16E-Instruct", False),
    ("LlamaHandler_3_1", "meta-llama/Llama-3.1-8B-Instruct", True),
    ("PhiHandler", "microsoft/phi-4", False),
    ("PhiHandler", "microsoft/Phi-4-mini-instruct", False),
    ("GemmaHandler", "google/gemma-3-12b-it", False),
    ("HammerHandler", "MadeAgents/Hammer2.1-7b", True),
    ("SalesforceLlamaHandler", "Salesforce/Llama-xLAM-2-8b-fc-r", True),
    ("SalesforceQwenHandler", "Salesforce/xLAM-2-32b-fc-r", True),
    ("ArchHandler", "katanemo/Arch-Agent-1.5B", True),
    ("Granite3FCHandler", "ibm-granite/granite-3.2-8b-instruct", True),
    # Falcon 3, Granite 4, Granite function calling, Phi FC and FunctionGemma
    ("Falcon3FCHandler", "tiiuae/Falcon3-7B-Instruct", True),
    ("Granite4FCHandler", "ibm-granite/granite-4.0-350m", True),
    ("GraniteFunctionCallingHandler", "ibm-granite/granite-20b-functioncalling", False),
    ("PhiFCHandler", "microsoft/Phi-4-mini-instruct", True),
    ("FunctionGemmaHandler", "google/functiongemma-270m-it", False),
    # GLM, ChatML, Mistral, DeepSeek-R1, BitAgent, ThinkAgent, Pelican-VL, Nanbeige
    ("GLMHandler", "THUDM/glm-4-9b-chat", True),
    ("MiniCPMHandler", "openbmb/MiniCPM3-4B", False),
    ("BielikHandler", "speakleash/Bielik-11B-v2.3-Instruct", False),
    ("MistralFCHandler", "mistralai/Ministral-8B-Instruct-2410", False),
    ("DeepseekReasoningHandler", "deepseek-ai/DeepSeek-R1", False),
    ("BitAgentHandler", "BitAgent/BitAgent-Bounty-8B", True),
    ("ThinkAgentHandler", "ThinkAgents/ThinkAgent-1B", True),
    ("PelicanVLFCHandler", "X-Humanoid/Pelican1.0-VL-30B-A3B-FC", True),
    ("NanbeigeFCHandler", "Nanbeige/Nanbeige4-3B-Thinking-2511", True),
)

# The checkpoint folder a handler that renders with the tokenizer's chat template reads: a
# tokenizer whose tokenizer_config.json holds Falcon3-7B-Instruct's chat template.
CHECKPOINTS = {
    "Falcon3FCHandler": Path(__file__).resolve().parents[2] / "tests/data/handlers/falcon3",
}


def _entry(dataset: Dataset, entry_id: str) -> Any:
    category = entry_id.rsplit("_", 1)[0]
    return next(e for e in dataset.entries(category) if e.id == entry_id)


def _key(handler: str, model: str, what: str) -> str:
    return f"{handler} {model} {what}"


def build_cases(dataset: Dataset, texts: ProtocolTexts) -> dict[str, dict[str, Any]]:
    """Every case, keyed, in the form :mod:`.handler_script` reads."""
    single = _entry(dataset, SINGLE_TURN_ENTRY)
    multi = _entry(dataset, CONVERSATION_ENTRY)
    cases: dict[str, dict[str, Any]] = {}
    for handler, model, fc in FAMILIES:
        common: dict[str, Any] = {"handler": handler, "model": model, "fc": fc}
        if handler in CHECKPOINTS:
            common["checkpoint"] = str(CHECKPOINTS[handler])
        single_entry = {
            "id": single.id,
            "question": [[m.model_dump() for m in single.question[0]]],
            "function": with_language_hints(single.function_sources(), single.language, texts),
        }
        first_answer = ANSWERS[handler][0][:1]
        cases[_key(handler, model, "single")] = {
            **common,
            "entry": single_entry,
            "answers": [first_answer],
        }
        multi_entry = {
            "id": multi.id,
            "question": [[m.model_dump() for m in turn] for turn in multi.question[:2]],
            # three of its functions keep the goldens small; every prompt still shows them
            "function": with_language_hints(multi.function_sources()[:3], "python", texts),
        }
        cases[_key(handler, model, "conversation")] = {
            **common,
            "entry": multi_entry,
            "answers": ANSWERS[handler],
        }
        if handler in RAW_ANSWERS:
            cases[_key(handler, model, "decoders")] = {**common, "raw": RAW_ANSWERS[handler]}
    return cases


def _conversation(family: Family, case: dict[str, Any], texts: ProtocolTexts, fmt: Any) -> Any:
    entry = copy.deepcopy(case["entry"])
    functions = entry["function"]
    history: list[dict[str, Any]] = []
    prompts: list[str] = []
    decoded_steps: list[Any] = []
    for turn, messages in enumerate(entry["question"]):
        if turn == 0 and family.system_prompt:
            messages = insert_system_prompt(messages, system_prompt(functions, fmt, texts))
        history.extend(family.prepare_turn(messages))
        for raw in case["answers"][turn]:
            prompts.append(family.render(history, functions))
            answer = family.read(raw)
            history.append(answer.echo)
            try:
                calls = family.decoder.decode_execute(answer.text)
            except DecodeError:
                decoded_steps.append(None)
                break
            decoded_steps.append(calls)
            if not calls or (len(calls) == 1 and not calls[0]):
                break
            results = [f"result {i} of {c}" for i, c in enumerate(calls)]
            history.extend(family.tool_results(calls, results))
    return {"prompts": prompts, "decoded": decoded_steps}


def _outcome(call: Any) -> Any:
    try:
        return {"ok": call()}
    except DecodeError:
        return {"error": True}


def _decoding(family: Family, case: dict[str, Any], fmt: Any) -> Any:
    out: list[dict[str, Any]] = []
    for raw in case["raw"]:
        try:
            answer = family.read(raw)
        except DecodeError:
            out.append({"read": {"error": True}})
            continue
        decoder = family.decoder
        out.append(
            {
                "text": answer.text,
                "reasoning": answer.reasoning,
                "ast": _outcome(lambda t=answer.text, d=decoder: d.decode_ast(t, "python", fmt)),
                "execute": _outcome(lambda t=answer.text, d=decoder: d.decode_execute(t)),
            }
        )
    return {"decoded": out}


def ours(
    cases: dict[str, dict[str, Any]], root: Path, texts: ProtocolTexts, dataset: Dataset
) -> dict[str, Any]:
    """What pytest-bfcl's families render and decode on the cases."""
    fmt = _entry(dataset, SINGLE_TURN_ENTRY).prompt_format
    out: dict[str, Any] = {}
    for key, case in cases.items():
        checkpoint = Path(case["checkpoint"]) if "checkpoint" in case else None
        family = family_for(case["handler"], root, case["model"], checkpoint)
        if "entry" in case:
            out[key] = _conversation(family, case, texts, fmt)
        else:
            out[key] = _decoding(family, case, fmt)
    return out


def normalised(outputs: dict[str, Any]) -> dict[str, Any]:
    """Outcomes compared as equal: a reference failure of any exception type is a failure."""
    out = copy.deepcopy(outputs)
    for value in out.values():
        for item in value.get("decoded", []):
            if isinstance(item, dict):
                for side in ("ast", "execute"):
                    if "error" in item.get(side, {}):
                        item[side] = {"error": True}
    return out
