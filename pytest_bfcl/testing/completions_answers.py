"""Answers to ``/v1/completions`` requests from the prompt alone, in the syntax of the
handler family whose markup the prompt is written in, so that two harnesses asking the same
prompts get the same answers and hold the same conversations: after a user's query, a think
block and a call (``ls(a=True)``, which the file-system backend of the multi-turn entries
runs); after tool results, a plain answer that ends the turn."""

from __future__ import annotations

from typing import Any

_QWEN_CALL = '<tool_call>\n{"name": "ls", "arguments": {"a": true}}\n</tool_call>'
_JSON_CALL = '[{"name": "ls", "arguments": {"a": true}}]'
_LLAMA_31_CALL = '{"name": "ls", "parameters": {"a": true}}'
_PYTHON_CALL = "[ls(a=True)]"
# Falcon 3's template: a JSON list in a <tool_call> block; results come back as an
# assistant turn holding <tool_response> blocks
_FALCON_CALL = f"<tool_call>\n{_JSON_CALL}\n</tool_call>"
_FALCON_AFTER_RESULTS = "</tool_response>\n<|assistant|>\n"
# Granite 4, Phi FC, Granite function calling and FunctionGemma: a call in each one's syntax
_GRANITE_4_AFTER_RESULTS = (
    "</tool_response><|end_of_text|>\n<|start_of_role|>assistant<|end_of_role|>"
)
_PHI_FC_CALL = f"<|tool_call|>{_JSON_CALL}<|/tool_call|>"
_GRANITE_FC_CALL = '<function_call> {"name": "ls", "arguments": {"a": true}}'
_GEMMA_CALL = "<start_function_call>call:ls{a:true}<end_function_call>"
_GLM_CALL = 'ls\n{"a": true}'

DONE = "Done."

# How a prompt ends right after tool results, by markup.
_AFTER_RESULTS = (
    "</tool_response><|im_end|>\n<|im_start|>assistant\n",
    "<|eot_id|><|start_header_id|>assistant<|end_header_id|>\n\n",
    "<|eot|><|header_start|>assistant<|header_end|>\n\n",
)


def completion_text(prompt: str) -> str:
    """The answer to a prompt: a call after a query, text after tool results."""
    if _is_glm(prompt):
        return DONE if _glm_after_results(prompt) else _GLM_CALL
    if _ends_with_results(prompt):
        # Granite's function-calling handler reads any text as a call: only silence ends a turn
        return "" if "<|function_call_library|>" in prompt else DONE
    if "<|start_of_role|>" in prompt and "<tools>" in prompt:  # Granite 4
        return _QWEN_CALL
    if "<|start_of_role|>" in prompt:  # Granite 3: no assistant opening in its prompts
        return f"<|tool_call|>{_JSON_CALL}"
    if "<|/tool|><|end|>" in prompt:  # Phi FC: the functions in the system turn
        return _PHI_FC_CALL
    if "<|function_call_library|>" in prompt:
        return _GRANITE_FC_CALL
    if "<start_function_declaration>" in prompt:
        return _GEMMA_CALL
    if "[BEGIN OF AVAILABLE TOOLS]" in prompt or "You have access to a set of tools" in prompt:
        return _JSON_CALL
    if "<|im_start|>" in prompt:
        call = _QWEN_CALL if "<tools>" in prompt else _PYTHON_CALL
        return f"<think>\nLet me list the files.\n</think>\n\n{call}"
    if "Environment: ipython" in prompt:
        return _LLAMA_31_CALL
    if prompt.startswith("<|system|>") and "<tools>" in prompt:
        return _FALCON_CALL
    return _PYTHON_CALL


def _is_glm(prompt: str) -> bool:
    """GLM's markup: ``<|role|>\\n`` turns and an assistant opening with no newline (Phi-4-mini
    also opens with ``<|assistant|>``, but ends its turns with ``<|end|>``)."""
    return prompt.endswith("<|assistant|>") and "<|end|>" not in prompt


def _glm_after_results(prompt: str) -> bool:
    body = prompt[: -len("<|assistant|>")]
    last_tool = body.rfind("<|tool|>\n")
    return last_tool > max(body.rfind("<|user|>\n"), body.rfind("<|assistant|>\n"))


def _ends_with_results(prompt: str) -> bool:
    if prompt.endswith((_AFTER_RESULTS[0], _FALCON_AFTER_RESULTS, _GRANITE_4_AFTER_RESULTS)):
        return True
    if prompt.endswith("<end_function_response><start_of_turn>model\n"):  # FunctionGemma
        return True
    if "<|/tool|><|end|>" in prompt and prompt.endswith("<|end|><|assistant|>"):  # Phi FC
        body = prompt[: -len("<|end|><|assistant|>")]
        return body[body.rfind("<|end|>") :].startswith("<|end|><|tool|>")
    if prompt.endswith("\n\nASSISTANT: "):  # Granite function calling: the last turn a tool's
        return prompt.rfind("\n\nTOOL:\n") > max(
            prompt.rfind("\n\nUSER:\n"), prompt.rfind("\n\nASSISTANT:\n")
        )
    if prompt.endswith("<|end_of_text|>\n"):
        last = prompt.rfind("<|start_of_role|>")
        return prompt[last:].startswith("<|start_of_role|>tool<|end_of_role|>")
    if prompt.endswith("<|im_start|>assistant\n"):
        last = prompt[: -len("<|im_start|>assistant\n")].rfind("<|im_start|>")
        return prompt[last:].startswith("<|im_start|>tool\n")
    for ending in _AFTER_RESULTS[1:]:
        if prompt.endswith(ending):
            body = prompt[: -len(ending)]
            last_header = max(body.rfind("<|start_header_id|>"), body.rfind("<|header_start|>"))
            return body[last_header:].startswith(
                ("<|start_header_id|>ipython", "<|header_start|>ipython")
            )
    return False


# Where the assistant's first turn opens, by markup.
_ASSISTANT_OPENINGS = (
    "<|im_start|>assistant",
    "<|start_header_id|>assistant",
    "<|header_start|>assistant",
    "<start_of_turn>model",
    "<|assistant|>",
)


def conversation_prefix(prompt: str) -> str:
    """What every prompt of one conversation starts with: the text before the assistant's
    first turn (the system prompt and the first query)."""
    cut = [i for i in (prompt.find(o) for o in _ASSISTANT_OPENINGS) if i != -1]
    return prompt[: min(cut)] if cut else prompt


def completion(body: dict[str, Any]) -> dict[str, Any]:
    """The completions response to a request."""
    text = completion_text(str(body.get("prompt", "")))
    return {
        "id": "cmpl-recorded",
        "object": "text_completion",
        "model": body.get("model"),
        "choices": [{"index": 0, "text": text, "finish_reason": "stop", "logprobs": None}],
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, "total_tokens": 2},
    }
