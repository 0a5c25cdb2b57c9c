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
    # Falcon 3, Granite 4, Granite function calling, Phi FC and FunctionGemma
    ("Falcon3FCHandler", "tiiuae/Falcon3-7B-Instruct", True),
    ("Granite4FCHandler", "ibm-granite/granite-4.0-350m", True),
    ("GraniteFunctionCallingHandler", "ibm-granite/granite-20b-functioncalling", False),
    ("PhiFCHandler", "microsoft/Phi-4-mini-instruct", True),
    ("FunctionGemmaHandler", "google/functiongemma-270m-it", False),
)

# The checkpoint folder a handler that renders with the tokenizer's chat template reads: a
# tokenizer whose tokenizer_config.json holds Falcon3-7B-Instruct's chat template.
CHECKPOINTS = {
    "Falcon3FCHandler": Path(__file__).resolve().parents[2] / "tests/data/handlers/falcon3",
}

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
_GRANITE_FC_TWO = (
    '<function_call> {"name": "ls", "arguments": {"a": true}} '
    '<function_call> {"name": "pwd", "arguments": {}}'
)
_GEMMA_CALL = "<start_function_call>call:cd{folder:<escape>document<escape>}<end_function_call>"
_GEMMA_TWO = (
    "<start_function_call>call:ls{a:true}<end_function_call>"
    "<start_function_call>call:pwd{}<end_function_call>"
)

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
    # Falcon 3, Granite 4, Granite function calling, Phi FC and FunctionGemma
    "Falcon3FCHandler": [
        [f"<tool_call>\n{_JSON_CALL}\n</tool_call>", "Moved."],
        [f"<tool_call>```json\n{_JSON_TWO}\n```</tool_call>", "All done."],
    ],
    "Granite4FCHandler": [[f"Sure.\n{_QWEN_CALL}", "Moved."], [_QWEN_TWO, "All done."]],
    "GraniteFunctionCallingHandler": [
        [f"<function_call> {_JSON_CALL[1:-1]}", "Moved."],
        [_GRANITE_FC_TWO, '<function_call> {"name": "no_function", "arguments": {}}'],
    ],
    "PhiFCHandler": [
        [f"<|tool_call|>{_JSON_CALL}<|/tool_call|>", "Moved."],
        [f"<|tool_call|>{_JSON_TWO[1:-1]}", "All done."],
    ],
    "FunctionGemmaHandler": [
        [_GEMMA_CALL, "Moved."],
        [_GEMMA_TWO, "All done."],
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
RAW_ANSWERS: dict[str, list[str]] = {
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
    "QwenFCHandler": [
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
    ],
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
    # Falcon 3, Granite 4, Granite function calling, Phi FC and FunctionGemma
    "Falcon3FCHandler": [
        f"<tool_call>\n{_JSON_CALL}\n</tool_call>",
        '<tool_call>{"name": "cd", "arguments": {"folder": "x"}}</tool_call>',  # no newlines
        f"<tool_call>\n{_JSON_CALL}",  # unclosed
        f"<tool_call>```json\n{_JSON_TWO}\n```</tool_call>",
        '<tool_call>[{"name": "cd", "arguments": {"folder": "x"}}, {"name": "ls"}]</tool_call>',
        f"<think>\n<tool_call>{_JSON_CALL}</tool_call>\n</think>\n\nNo call after all.",
        '<tool_call>[{"name": "echo", "arguments": {"content": "a \\"quoted\\" text"}}]'
        "</tool_call>",  # string arguments
        '<tool_call>[{"name": "cd", "arguments": "folder=x"}]</tool_call>',
        '<tool_call>["cd"]</tool_call>',
        "<tool_call>not json</tool_call>",
        "I cannot help with that.",
    ],
    "GraniteFunctionCallingHandler": [
        '<function_call> {"name": "cd", "arguments": {"folder": "x"}}',
        '<function_call>{"name": "ls", "arguments": {"a": true}}<function_call>{"name": "pwd"}',
        '<function_call> {"name": "no_function", "arguments": {}}',
        '<function_call> {"name": "cd", "arguments": {}} <function_call> {bad} '
        '<function_call> {"name": "pwd", "arguments": {}}',  # a bad call among good ones
        '<think>\n<function_call> {"name": "cd", "arguments": {}}\n</think>',
        '<function_call> {"name": "echo", "arguments": {"content": "a <function_call> b"}}',
        '<function_call> {"name": "echo", "arguments": {"content": "a \\"quoted\\" text"}}',
        '<function_call> {"name": "cd", "arguments": "folder=x"}',
        '<function_call> ["not", "a", "call"]',
        '<function_call> {"name": 3, "arguments": {}}',
        '<function_call> {"arguments": {"x": 1}}',
        "Plain answer.",
        "",
    ],
    "PhiFCHandler": [
        f"<|tool_call|>{_JSON_CALL}<|/tool_call|>",
        f"<|tool_call|>{_JSON_TWO[1:-1]}",  # unclosed, the calls not in a list
        f"<|tool_call|>{_JSON_CALL}\n",
        "<|tool_call|>" + "[\"{'name': 'cd', 'arguments': {'folder': 'x'}}\"]<|/tool_call|>",
        '<|tool_call|>[{"name": "cd", "arguments": {}, "extra": 1}]<|/tool_call|>',
        f"<|tool_call|>{_JSON_CALL}<|/tool_call|><|tool_call|>not json<|/tool_call|>",
        f"<think><|tool_call|>{_JSON_CALL}<|/tool_call|></think>Done.",
        '<|tool_call|>[{"name": "echo", "arguments": {"content": "a <|/tool_call|> b"}}]'
        "<|/tool_call|>",  # string arguments holding the closing tag
        '<|tool_call|>[{"name": "cd", "arguments": "{\\"folder\\": \\"x\\"}"}]<|/tool_call|>',
        "<|tool_call|>[1, 2]<|/tool_call|>",
        '<|/tool_call|>x<|tool_call|>{"name": "cd", "arguments": {}}',
        "No call here.",
    ],
    "FunctionGemmaHandler": [
        _GEMMA_CALL,
        _GEMMA_TWO,
        "<start_function_call>call:pwd<end_function_call>",
        "<start_function_call>call:cd{folder:<escape>x<escape>}",  # unclosed
        "<start_function_call>call:f{a:1,b:2.5,c:true,d:null,e:[1,<escape>x<escape>],"
        "g:{h:<escape>y<escape>},i:1e3,j:1_000,k:-3}<end_function_call>",
        "<start_function_call>call:f{1:<escape>one<escape>,true:2,null:3}<end_function_call>",
        "<start_function_call>call:echo{content:<escape>a, b: {c}<escape>}<end_function_call>",
        "<start_function_call>call:f{a:<escape>unclosed}<end_function_call>",
        "<start_function_call>call:f{a:[1,2}},b:3}<end_function_call>",
        "<start_function_call>cd{folder:x}<end_function_call>"
        "<start_function_call>call:ls{}<end_function_call>",  # a bad call among good ones
        f"<think>{_GEMMA_CALL}</think>No call after all.",
        "<start_function_call>call:f{a:bare words here, b : two}<end_function_call>",
        "<start_function_call> call:f{<escape>k<escape>:<escape>v<escape>}<end_function_call>",
        "Plain text.",
    ],
}

# Granite 4 reads answers as Qwen's function-calling handler does: the same corpus
RAW_ANSWERS["Granite4FCHandler"] = [*RAW_ANSWERS["QwenFCHandler"], f"Sure.\n{_QWEN_CALL}"]


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
    out = []
    for raw in case["raw"]:
        answer = family.read(raw)
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
