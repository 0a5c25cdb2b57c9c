"""DeepSeek-R1's handler (``DeepseekReasoningHandler``, prompting): the benchmark's system
prompt made a user message and joined with the question (the model takes no system prompt),
every turn's system messages likewise; DeepSeek's ``User`` and ``Assistant`` tokens
(full-width bars) after the begin-of-sentence token, past answers shown without their
reasoning, the prompt ending in an opened ``<think>``. Tool results go back as one user
message holding the list of results (shown as Python writes the list). The answer is what
follows the last ``</think>``, decoded as the prompting decoders do; the history keeps the raw
answer."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.handlers.base import Family, RawAnswer, content_text, join_user_messages


def _token(name: str) -> str:
    """One of DeepSeek's special tokens: its name between full-width bars."""
    return f"<\uff5c{name.replace(' ', chr(0x2581))}\uff5c>"


BOS = _token("begin of sentence")
USER, ASSISTANT, END = _token("User"), _token("Assistant"), _token("end of sentence")
CALLS_BEGIN, CALLS_END = _token("tool calls begin"), _token("tool calls end")
CALL_BEGIN, CALL_END = _token("tool call begin"), _token("tool call end")
CALL_SEP = _token("tool sep")
OUTPUTS_BEGIN, OUTPUTS_END = _token("tool outputs begin"), _token("tool outputs end")
OUTPUT_BEGIN, OUTPUT_END = _token("tool output begin"), _token("tool output end")


def _call(tool: dict[str, Any]) -> str:
    function = tool.get("function", {})
    return (
        f"{tool.get('type')}{CALL_SEP}{function.get('name')}\n```json\n"
        f"{function.get('arguments')}\n```{CALL_END}"
    )


class DeepseekReasoningFamily(Family):
    handlers = ("DeepseekReasoningHandler",)
    name = "deepseek-r1"

    def prepare_turn(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        as_user = [
            {**m, "role": "user"} if m.get("role") == "system" else dict(m) for m in messages
        ]
        return join_user_messages(as_user)

    def render(self, messages: list[dict[str, Any]], functions: list[dict[str, Any]]) -> str:
        systems = [content_text(m) for m in messages if m.get("role") == "system"]
        out = [BOS, "\n\n".join(systems)]
        # Quirk: "first call" is never reset, so only the conversation's first assistant
        # message with calls opens an assistant turn.
        first_call_seen, after_tool, first_output = False, False, True
        for message in messages:
            role = message.get("role")
            if role == "user":
                after_tool = False
                out.append(f"{USER}{content_text(message)}")
            elif role == "assistant" and "tool_calls" in message:
                after_tool = False
                for tool in message["tool_calls"]:
                    if not first_call_seen:
                        content = message.get("content")
                        lead = "" if content is None else content
                        out.append(f"{ASSISTANT}{lead}{CALLS_BEGIN}{CALL_BEGIN}{_call(tool)}")
                        first_call_seen = True
                    else:
                        out.append(f"\n{CALL_BEGIN}{_call(tool)}")
                out.append(f"{CALLS_END}{END}")
            elif role == "assistant":
                content = content_text(message)
                if after_tool:
                    out.append(f"{OUTPUTS_END}{content}{END}")
                    after_tool = False
                else:
                    out.append(f"{ASSISTANT}{content.split('</think>')[-1]}{END}")
            elif role == "tool":
                after_tool = True
                out.append(f"{OUTPUTS_BEGIN if first_output else ''}{OUTPUT_BEGIN}")
                out.append(f"{content_text(message)}{OUTPUT_END}")
                first_output = False
        out.append(OUTPUTS_END if after_tool else f"{ASSISTANT}<think>\n")
        return "".join(out)

    def read(self, raw: str) -> RawAnswer:
        text = raw.split("</think>")[-1]
        # Quirk: the handler records as reasoning the answer after </think> (it splits the
        # answer, not the raw text, a second time); no </think>: none.
        reasoning = text if "</think>" in raw else ""
        return RawAnswer(text, reasoning, {"role": "assistant", "content": raw})

    def tool_results(self, calls: list[str], results: list[str]) -> list[dict[str, Any]]:
        content = [
            {"role": "tool", "name": call, "content": result}
            for call, result in zip(calls, results, strict=False)
        ]
        return [{"role": "user", "content": content}]
