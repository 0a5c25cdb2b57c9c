"""Problems that only a combination of option values shows (a web mode without its cassette,
a server command for a model that sends no request, credentials inside a base URL), each
naming the ini keys involved that were set in the ini file."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_bfcl.dataset.categories import CATEGORIES, Kind, expand_categories
from pytest_bfcl.redact import url_credentials


def combination_problems(
    values: dict[str, Any], default_categories: str, names: dict[str, str] | None = None
) -> list[str]:
    """Problems that only a combination of options shows, each naming (after the flags) the
    ini keys of the options involved that were set in the ini file."""
    found: list[tuple[str, tuple[str, ...]]] = []  # (problem, the options involved)
    web = values.get("web", "live")
    try:
        categories = expand_categories(values.get("categories", default_categories))
    except ValueError:
        categories = []  # already reported
    searching = any(CATEGORIES[n].kind is Kind.WEB_SEARCH for n in categories if n in CATEGORIES)
    cassette = values.get("web_cassette")
    if searching and web in ("record", "replay") and cassette is None:
        found.append((f"--bfcl-web={web} needs --bfcl-web-cassette=DIR", ("web",)))
    if searching and web == "replay" and cassette is not None and not Path(cassette).is_dir():
        found.append(
            (
                f"--bfcl-web-cassette must be an existing directory with --bfcl-web=replay "
                f"(got {cassette})",
                ("web_cassette", "web"),
            )
        )
    model = str(values.get("model", ""))
    served = model not in ("oracle", "") and not model.startswith(("oracle:", "replay:", "vllm:"))
    if values.get("server_cmd") and not served:
        found.append(
            (
                "--bfcl-server-cmd starts the server of an endpoint model: give --bfcl-model the "
                "name the server serves the model under",
                ("server_cmd", "model"),
            )
        )
    answers_itself = model == "oracle" or model.startswith(("oracle:", "replay:"))
    if answers_itself and values.get("base_urls"):
        found.append(
            (
                f"--bfcl-base-url is the endpoint of a served model, but --bfcl-model={model} "
                "sends no request (it answers without a server): leave --bfcl-base-url out, or "
                "give --bfcl-model the name of the model the endpoint serves",
                ("base_urls", "model"),
            )
        )
    if values.get("server_cmd") and values.get("base_urls"):
        found.append(
            (
                "--bfcl-server-cmd and --bfcl-base-url exclude each other",
                ("server_cmd", "base_urls"),
            )
        )
    found += [
        (credentials_problem(masked, "--bfcl-base-url"), ("base_urls",))
        for url in values.get("base_urls", ())
        if (masked := url_credentials(url)) is not None
    ]
    return [problem + _set_in_ini(involved, names or {}) for problem, involved in found]


def _set_in_ini(involved: tuple[str, ...], names: dict[str, str]) -> str:
    """`` (set in the ini file: bfcl_web (in pyproject.toml))`` for the options involved that
    came from the ini file, so the line to fix is named; empty when all came from flags."""
    keys = [names[name] for name in involved if name in names]
    return f" (set in the ini file: {', '.join(keys)})" if keys else ""


def credentials_problem(masked_url: str, where: str) -> str:
    """Why a base URL with user information is refused, and where the key belongs."""
    return (
        f"{where} {masked_url} holds credentials (user:password@): they would go out as HTTP "
        "Basic authentication in place of the API key; put the key in $OPENAI_API_KEY, or "
        "name the variable that holds it with --bfcl-api-key-env"
    )
