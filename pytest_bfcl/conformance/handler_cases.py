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

_PY_CALL, _PY_LAST = "[cd(folder='document')]", "[ls(a=True), pwd()]"
_QWEN_CALL = '<tool_call>\n{"name": "cd", "arguments": {"folder": "document"}}\n</tool_call>'
_QWEN_TWO = (
    '<tool_call>\n{"name": "ls", "arguments": {"a": true}}\n</tool_call>\n'
    '<tool_call>\n{"name": "pwd", "arguments": {}}\n</tool_call>'
)
_JSON_CALL = '[{"name": "cd", "arguments": {"folder": "document"}}]'
_JSON_TWO = '[{"name": "ls", "arguments": {"a": true}}, {"name": "pwd", "arguments": {}}]'
_XLAM_TWO = '{"name": "ls", "arguments": {"a": true}}; {"name": "pwd", "arguments": {}}'
_GRANITE_TWO = (
    '<tool_call>{"name": "ls", "arguments": {"a": true}}, {"name": "pwd", "arguments": {}}'
)
_LLAMA_CALL = '{"name": "cd", "parameters": {"folder": "document"}}'
_LLAMA_TWO = '{"name": "ls", "parameters": {"a": true}}; {"name": "pwd", "parameters": {}}'
_GLM_CALL = 'cd\n{"folder": "document"}'

# Per handler: the answers of each turn, step by step (a turn ends at its text answer).
ANSWERS: dict[str, list[list[str]]] = {
    "QwenHandler": [
        [f"<think>\nI should move first.\n</think>\n\n{_PY_CALL}", "Moved."],
        [_PY_LAST, "<think>listed</think>All done."],
    ],
    "QwenFCHandler": [
        [f"<think>\nplan\n</think>\n\n{_QWEN_CALL}", "Moved."],
        [_QWEN_TWO, "<think>x</think>\n\nAll done."],
    ],
    "LlamaHandler": [[_PY_CALL, "Moved."], [_PY_LAST, "All done."]],
    "PhiHandler": [[f"```python\n{_PY_CALL}\n```", "Moved."], [_PY_LAST, "All done."]],
    "GemmaHandler": [[_PY_CALL, "Moved."], [_PY_LAST, "All done."]],
    "HammerHandler": [[f"```{_JSON_CALL}```", "[]"], [_JSON_TWO, "All done."]],
    "SalesforceLlamaHandler": [[_JSON_CALL, "Moved."], [_XLAM_TWO, "All done."]],
    "SalesforceQwenHandler": [[_JSON_CALL, "Moved."], [_XLAM_TWO, "All done."]],
    "ArchHandler": [[f"Sure.\n{_QWEN_CALL}", "Moved."], [_QWEN_TWO, "All done."]],
    "Granite3FCHandler": [[f"<|tool_call|>{_JSON_CALL}", "Moved."], [_GRANITE_TWO, "All done."]],
    "LlamaHandler_3_1": [[_LLAMA_CALL, "Moved."], [f"<|python_tag|>{_LLAMA_TWO}", "All done."]],
    # GLM, ChatML, Mistral, DeepSeek-R1, BitAgent, ThinkAgent, Pelican-VL, Nanbeige
    "GLMHandler": [[_GLM_CALL, "Moved."], ['ls\n{"a": true}\nextra', ""]],
    "MiniCPMHandler": [[_PY_CALL, "Moved."], [_PY_LAST, "All done."]],
    "BielikHandler": [[_PY_CALL, "Moved."], [_PY_LAST, "All done."]],
    "MistralFCHandler": [[_JSON_CALL, "Moved."], [_JSON_TWO, "All done."]],
    "DeepseekReasoningHandler": [
        [f"<think>\nI should move first.\n</think>\n\n{_PY_CALL}", "Moved."],
        [_PY_LAST, "<think>listed</think>All done."],
    ],
    "BitAgentHandler": [[_JSON_CALL, "Moved."], [_JSON_TWO, "All done."]],
    # its execute decoder reads no call: every turn ends at its first answer
    "ThinkAgentHandler": [[f"<think>plan</think>{_JSON_CALL}"], ["<think>none</think>[]"]],
    "PelicanVLFCHandler": [
        [f"<think>\nplan\n</think>\n\n{_QWEN_CALL}", "Moved."],
        [_QWEN_TWO, "<think>x</think>\n\nAll done."],
    ],
    "NanbeigeFCHandler": [
        [f"<think>\nplan\n</think>\n\n{_QWEN_CALL}", "Moved."],
        [_QWEN_TWO, "<think>x</think>\n\nAll done."],
    ],
}

# Raw answers for the decoders, each shape the handlers may meet.
_XLAM_RAW = [
    _JSON_CALL,
    '{"name": "cd", "arguments": {"folder": "x"}}',
    _XLAM_TWO,
    '{"name": "echo", "arguments": {"content": "a; b"}}',
    '[{"name": "cd"}]',
    '[{"name": "cd", "arguments": "folder=x"}]',
    "I need more information.",
    "[]",
]
_QWEN_FC_RAW = [
    _QWEN_CALL,
    _QWEN_TWO,
    '<tool_call>{"name": "cd", "arguments": {"folder": "x"}}</tool_call>',  # no newlines
    '<tool_call>\n{"name": "cd", "arguments": {"folder": "x"}}',  # unclosed
    f'{_QWEN_CALL}\n<tool_call>\n{{"name": "ls", "arguments": {{bad}}\n</tool_call>',
    f"<think>\n{_QWEN_CALL}\n</think>\n\nNo call after all.",  # a call inside <think>
    f"<think>\nfirst\n</think>\n\n{_QWEN_CALL}",
    '<tool_call>\n{"name": "echo", "arguments": {"content": "a \\"quoted\\" text"}}'
    "\n</tool_call>",  # string arguments
    '<tool_call>\n{"name": "cd", "arguments": "{\\"folder\\": \\"x\\"}"}\n</tool_call>',
    '<tool_call>\n["not", "a", "call"]\n</tool_call>',
    "I cannot help with that.",
    "",
]
RAW_ANSWERS: dict[str, list[str]] = {
    # GLM, ChatML, Mistral, DeepSeek-R1, BitAgent, ThinkAgent, Pelican-VL, Nanbeige
    "GLMHandler": [
        _GLM_CALL,
        f'{_GLM_CALL}\nls\n{{"a": true}}',  # a second call: not read
        'cd {"folder": "x"}',  # no newline between name and arguments
        "I cannot help with that.",
        "",
        "cd\nnot json",
        "cd\n[1, 2]",
        'echo\n{"content": "a \\"quoted\\" text"}',  # string arguments
        f"<think>\n{_GLM_CALL}\n</think>",  # a call inside <think>
        '\n{"folder": "x"}',
    ],
    "DeepseekReasoningHandler": [
        f"<think>\nplan\n</think>\n\n{_PY_CALL}",
        f"<think>a</think>b</think>{_PY_CALL}",
        _PY_CALL,
        f"<think>\nunclosed {_PY_CALL}",
    ],
    "BitAgentHandler": [
        *_XLAM_RAW,
        f"<think>\n{_JSON_CALL}\n</think>",  # a call inside <think>
        '[{"name": "echo", "arguments": {"content": "a \\"quoted\\" text"}}]',
        '[{"name": "cd", "arguments": {"folder": "x"}}, "bad"]',
    ],
    "ThinkAgentHandler": [
        f"<think>plan</think>{_JSON_CALL}",
        f"<think>plan</think>\n{_JSON_TWO}\n",
        _JSON_CALL,  # no </think>: no calls
        "<think>a</think>[{'name': 'cd', 'arguments': {'folder': \"it's\"}}]",  # quotes
        "<think>a</think>[]",
        "<think>a</think>{}",
        '<think>a</think>{"name": "cd", "arguments": {}}',
        '<think>a</think>[{"name": "cd"}]',
        "<think>a</think>not json",
        "<think>a</think>b</think>[]",
        f"<think>unclosed {_JSON_CALL}",
    ],
    "PelicanVLFCHandler": _QWEN_FC_RAW,
    "NanbeigeFCHandler": _QWEN_FC_RAW,
    "MistralFCHandler": [
        _JSON_CALL,
        _JSON_TWO,
        '{"name": "cd", "arguments": {"folder": "x"}}',  # an object, not a list
        "{}",
        "[]",
        '[{"name": "cd"}]',
        '[{"name": "cd", "arguments": "{\\"folder\\": \\"x\\"}"}]',  # arguments as text
        '[{"name": "cd", "arguments": {"folder": "x"}, "id": "abc"}]',
        '[{"name": "cd", "arguments": [1]}]',
        "[1, 2]",
        f"<think>\n{_JSON_CALL}\n</think>",  # a call inside <think>: not JSON
        "I cannot help with that.",
    ],
    "Granite3FCHandler": [
        f"<|tool_call|>{_JSON_CALL}",
        _GRANITE_TWO,
        f"ASSISTANT: <|tool_call|>{_JSON_CALL}",
        "<|tool_call|>" + "[\"{'name': 'cd', 'arguments': {'folder': 'x'}}\"]",
        '<|tool_call|>[{"name": "cd", "arguments": {}, "extra": 1}]',
        "<|tool_call|>not json",
        "No call here.",
    ],
    "ArchHandler": [
        _QWEN_CALL,
        _QWEN_TWO,
        "<tool_call>\n{'name': 'cd', 'arguments': {'folder': 'x'}}\n</tool_call>",
        '<tool_call>\n{"name": "cd", "arguments": "{\\"folder\\": \\"x\\"}"}\n</tool_call>',
        "No call here.",
    ],
    "SalesforceLlamaHandler": _XLAM_RAW,
    "SalesforceQwenHandler": _XLAM_RAW,
    "HammerHandler": [
        _JSON_CALL,
        _JSON_TWO,
        f"```json\n{_JSON_CALL}\n```",
        '{"tool_calls": [{"name": "cd", "arguments": {"folder": "x"}}]}',
        '{"name": "cd", "arguments": {"folder": "x"}}',
        '[{"name": "cd"}, "text", 3]',
        '[{"name": "cd", "arguments": "folder=x"}]',
        "42",
        "not JSON",
        "[]",
    ],
    "PhiHandler": [
        _PY_CALL,
        f"```json\n{_PY_CALL}\n```",
        f"```python\n{_PY_CALL}\n```",
        f"  ```python\n{_PY_CALL}```",  # leading spaces: stripped before the AST path only
        "```python```json[f(a=1)]",
        "no call",
    ],
    "QwenFCHandler": _QWEN_FC_RAW,
    "LlamaHandler_3_1": [
        _LLAMA_CALL,
        _LLAMA_TWO,
        f"<|python_tag|>{_LLAMA_CALL}",
        '[{"name": "cd", "parameters": {"folder": "x"}}, {"name": "ls", "parameters": {}}]',
        "[{'name': 'cd', 'parameters': {'folder': 'x'}}]",
        '{"name": "cd", "parameters": {"flag": true}}',  # JSON's true: not a Python literal
        '{"name": "echo", "parameters": {"content": "a; b"}}',  # a ';' inside a string
        "I cannot help with that.",
        '{"name": "cd"}',
    ],
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
        common = {"handler": handler, "model": model, "fc": fc}
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
        family = family_for(case["handler"], root, case["model"])
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
