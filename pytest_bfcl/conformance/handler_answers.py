"""The canned answers the handler comparison feeds both sides (:mod:`.handler_cases`): per
handler, the answers of each turn of a two-turn conversation (calls in the handler's syntax,
think blocks, plain text), and a corpus of raw answers for each decoder with the shapes a
handler meets (calls without newlines inside their tags, an unclosed tag, a bad call among
good ones, a call inside ``<think>``, string arguments)."""

from __future__ import annotations

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
