"""Run inside the conformance virtualenv (the pinned release installed): drive the release's
own open-weight handlers through canned conversations and a corpus of raw answers, and print
what they render and decode as JSON. Reads its cases as JSON on stdin. Kept free of
pytest-bfcl imports: it runs with the release's interpreter."""

from __future__ import annotations

import copy
import hashlib
import importlib
import json
import sys
from types import SimpleNamespace
from typing import Any

HANDLERS = {
    "QwenHandler": "qwen",
    "QwenFCHandler": "qwen_fc",
    "LlamaHandler": "llama",
    "LlamaHandler_3_1": "llama_3_1",
    "PhiHandler": "phi",
    "GemmaHandler": "gemma",
    "HammerHandler": "hammer",
    "ArchHandler": "arch",
    "Granite3FCHandler": "granite_3",
    "SalesforceLlamaHandler": "salesforce_llama",
    "SalesforceQwenHandler": "salesforce_qwen",
    # Falcon 3, Granite 4, Granite function calling, Phi FC and FunctionGemma
    "Falcon3FCHandler": "falcon_fc",
    "Granite4FCHandler": "granite_4",
    "GraniteFunctionCallingHandler": "granite",
    "PhiFCHandler": "phi_fc",
    "FunctionGemmaHandler": "functiongemma",
    # GLM, ChatML, Mistral, DeepSeek-R1, BitAgent, ThinkAgent, Pelican-VL, Nanbeige
    "GLMHandler": "glm",
    "MiniCPMHandler": "minicpm",
    "BielikHandler": "bielik",
    "MistralFCHandler": "mistral_fc",
    "DeepseekReasoningHandler": "deepseek_reasoning",
    "BitAgentHandler": "bitagent",
    "ThinkAgentHandler": "think_agent",
    "PelicanVLFCHandler": "pelican_vl_fc",
    "NanbeigeFCHandler": "nanbeige_fc",
}


def _handler(case: dict[str, Any]) -> Any:
    name, model = case["handler"], case["model"]
    module = importlib.import_module(f"bfcl_eval.model_handler.local_inference.{HANDLERS[name]}")
    handler = getattr(module, name)(model, 0.001, model, case["fc"])
    if "checkpoint" in case:  # a handler that renders with the tokenizer's chat template
        tokenizer = importlib.import_module("transformers").AutoTokenizer
        handler.tokenizer = tokenizer.from_pretrained(case["checkpoint"])
    return handler


def _call_ids(handler: Any, raw: str) -> None:
    """Mistral's handler draws its calls' ids at random; pytest-bfcl draws each from the call
    as the execute decoder writes it and its place. Give the handler those ids, so that the
    prompts compare (everything else of the ids' use is the handler's own)."""
    if not hasattr(handler, "generate_random_string"):
        return
    module = importlib.import_module("bfcl_eval.model_handler.utils")
    ids = []
    try:
        items = json.loads(raw)
        items = items if isinstance(items, list) else []
    except ValueError:
        items = []
    for index, item in enumerate(items):
        try:
            call = module.convert_to_function_call([{item["name"]: item["arguments"]}])[0]
        except Exception:
            call = ""
        ids.append(hashlib.sha256(f"{index}:{call}".encode()).hexdigest()[:9])
    handler.generate_random_string = iter(ids).__next__


def _response(text: str) -> Any:
    usage = SimpleNamespace(prompt_tokens=1, completion_tokens=1)
    return SimpleNamespace(choices=[SimpleNamespace(text=text)], usage=usage)


def _outcome(call: Any) -> Any:
    try:
        return {"ok": call()}
    except Exception as exc:  # the reference's failure, by type
        return {"error": type(exc).__name__}


def conversation(case: dict[str, Any]) -> dict[str, Any]:
    """The prompt of every step of a canned conversation, as the handler builds them."""
    handler = _handler(case)
    entry = copy.deepcopy(case["entry"])
    data = handler._pre_query_processing_prompting(entry)
    answers = [list(turn) for turn in case["answers"]]
    prompts: list[str] = []
    decoded_steps: list[Any] = []
    for turn, messages in enumerate(entry["question"]):
        if turn == 0:
            data = handler.add_first_turn_message_prompting(data, messages)
        else:
            data = handler._add_next_turn_user_message_prompting(data, messages)
        for raw in answers[turn]:
            prompts.append(handler._format_prompt(data["message"], data["function"]))
            _call_ids(handler, raw)
            parsed = handler._parse_query_response_prompting(_response(raw))
            data = handler._add_assistant_message_prompting(data, parsed)
            try:
                calls = handler.decode_execute(parsed["model_responses"], has_tool_call_tag=False)
            except Exception:
                decoded_steps.append(None)
                break
            decoded_steps.append(calls)
            if not calls or (len(calls) == 1 and not calls[0]):
                break
            results = [f"result {i} of {c}" for i, c in enumerate(calls)]
            parsed["model_responses_decoded"] = calls
            data = handler._add_execution_results_prompting(data, results, parsed)
    return {"prompts": prompts, "decoded": decoded_steps}


def decoding(case: dict[str, Any]) -> dict[str, Any]:
    handler = _handler(case)
    python = importlib.import_module("bfcl_eval.constants.enums").ReturnFormat.PYTHON
    out = []
    for raw in case["raw"]:
        _call_ids(handler, raw)
        try:
            parsed = handler._parse_query_response_prompting(_response(raw))
        except Exception:  # the handler cannot read the answer at all
            out.append({"read": {"error": True}})
            continue
        text = parsed["model_responses"]
        out.append(
            {
                "text": text,
                "reasoning": parsed.get("reasoning_content", ""),
                "ast": _outcome(lambda t=text: handler.decode_ast(t, python, False)),
                "execute": _outcome(lambda t=text: handler.decode_execute(t, False)),
            }
        )
    return {"decoded": out}


def main() -> None:
    cases = json.load(sys.stdin)
    out = {
        key: conversation(case) if "entry" in case else decoding(case)
        for key, case in cases.items()
    }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
