"""The controller's lines about the selection and single entries: what a sampled run can
detect before it asks anything, ``--bfcl-explain`` ids the run cannot explain, and the
explanation of an entry that improved on the baseline."""

from __future__ import annotations

import difflib

from pytest_bfcl.gate import detection_summary, detections
from pytest_bfcl.redact import redact_text
from pytest_bfcl.report.answers import shown_answer
from pytest_bfcl.report.properties import ItemProperties
from pytest_bfcl.run.engine import BfclRun
from pytest_bfcl.servers.serving_inputs import identity_lines
from pytest_bfcl.settings import Settings


def improvement_text(props: ItemProperties) -> str:
    """``--bfcl-explain`` of an entry that failed in the baseline and passes now."""
    return "\n".join(
        [
            f"BFCL {props.id} [{props.category}] improved: fails in the baseline, passes now",
            f"  baseline: {shown_answer(props.baseline_answer)}",
            f"  now:      {shown_answer(props.answer)}",
        ]
    )


def sample_detection(expected: dict[str, set[str]], run: BfclRun, settings: Settings) -> str:
    """What a sampled run's gate detects, before it asks anything (the noise the baseline
    measured, else the assumed one)."""
    sizes = {category: len(ids) for category, ids in expected.items()}
    gate = settings.gate
    found = detections(sizes, run.selection.plan_noise, gate.alpha, gate.min_drop)
    return detection_summary(found, "this sample") + " (more: --bfcl-sequential, --bfcl-detect)"


def unknown_explain_ids(
    wanted: tuple[str, ...], expected: dict[str, set[str]], run: BfclRun
) -> str | None:
    """Why an id given to ``--bfcl-explain`` can have no failure to explain in this run (not an
    entry of the selection, or left out by the sample), said before anything is generated."""
    scored = set().union(*expected.values()) if expected else set()
    problems = []
    for entry_id in wanted:
        if entry_id in scored:
            continue
        selection = {e.id for c in run.settings.categories for e in run.dataset.entries(c)}
        if entry_id in selection:
            why = "this run leaves it out (the sample, or an option that excludes it)"
        else:
            close = difflib.get_close_matches(entry_id, sorted(selection), n=2)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
            why = f"no entry of the selected categories has this id{hint}"
        problems.append(f"--bfcl-explain={entry_id}: {why}")
    return "; ".join(problems) or None


def identity_header(run: BfclRun) -> list[str]:
    """The header's lines on what the response cache knows the model by (its inputs'
    digests, its revision, or that a remote model's answers are trusted by name)."""
    info, cached = run.model.metadata(), not run.settings.no_cache
    return [redact_text(line) for line in identity_lines(info, run.settings.model_revision, cached)]


def route_header(run: BfclRun) -> list[str]:
    """The header's line on the completions route (an open-weight leaderboard entry): whose
    prompts are asked, what counts their tokens, and, on a server the run starts, that it is
    started without tool calling (the prompt holds the tools)."""
    info = run.model.metadata()
    handler = info.get("handler")
    if not isinstance(handler, dict):
        return []
    tokens = str(handler.get("tokens"))
    line = (
        f"completions route: prompts rendered as the leaderboard's {handler.get('family')} "
        f"handler renders them, asked on /v1/completions; prompt tokens counted by {tokens}"
    )
    kind = info.get("kind")
    if kind == "vllm":
        line += (
            "; vLLM started without --enable-auto-tool-choice, a tool-call parser or a chat "
            "template of the plugin's"
        )
        if not tokens.startswith("tokenizer "):  # the server counts: a cached rerun needs it
            line += " (it starts to count tokens even when the cache answers: --bfcl-tokenizer "
            line += "spares it)"
    elif kind == "started-server":
        line += "; on the server --bfcl-server-cmd starts"
    return [redact_text(line)]
