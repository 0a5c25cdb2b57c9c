"""One validated settings object, built from command-line options and ini values."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from pytest_bfcl.dataset.categories import expand_categories

DEFAULT_CATEGORIES = "all_scoring"


class Settings(BaseModel):
    model_config = ConfigDict(frozen=True)

    model: str
    mode: Literal["fc", "prompt"] = "fc"
    categories: tuple[str, ...] = tuple(expand_categories(DEFAULT_CATEGORIES))
    data_dir: Path | None = None
    report_path: Path | None = None
    # FC tool names: OpenAI-compatible APIs reject dots, so "a.b" is sent and expected as "a_b".
    underscore_to_dot: bool = True

    @field_validator("categories", mode="before")
    @classmethod
    def _expand(cls, value: Any) -> tuple[str, ...]:
        if isinstance(value, str | list | tuple):
            return tuple(expand_categories(value))
        raise TypeError("categories must be a comma-separated string or a list")


# (option, ini name, help) for every setting; the plugin registers both spellings.
OPTIONS: tuple[tuple[str, str, str], ...] = (
    (
        "--bfcl-model",
        "bfcl_model",
        "model to evaluate: 'oracle' (ground truth, no network), 'replay:DIR' (stored "
        "generations in the reference's result layout). Enables the BFCL items.",
    ),
    (
        "--bfcl-mode",
        "bfcl_mode",
        "how the model calls tools: 'fc' (native tool calls, default) or "
        "'prompt' (calls written as text)",
    ),
    (
        "--bfcl-category",
        "bfcl_category",
        "comma-separated categories or groups (all, all_scoring, single_turn, multi_turn, live, "
        "non_live, python, non_python, memory, web_search, agentic); default all_scoring",
    ),
    (
        "--bfcl-data",
        "bfcl_data",
        "use this data directory (official layout) instead of the pinned "
        "release; also $BFCL_DATA_DIR",
    ),
    ("--bfcl-report", "bfcl_report", "write the JSON score report to this path"),
)


def build_settings(values: dict[str, Any]) -> Settings:
    """Settings from option values (``None`` = not given); unknown keys are ignored."""
    clean = {k: v for k, v in values.items() if v not in (None, "")}
    if "mode" in clean and clean["mode"] == "prompt":
        clean.setdefault("underscore_to_dot", False)
    try:
        return Settings.model_validate(clean)
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'settings'}: {e['msg']} (got {e.get('input')!r})"
            for e in exc.errors()
        )
        raise ValueError(f"invalid BFCL settings: {problems}") from None
