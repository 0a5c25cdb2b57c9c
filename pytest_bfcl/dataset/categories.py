"""The BFCL V4 category registry: names, groups, collection names, id parsing and sort order."""

from __future__ import annotations

import dataclasses
import functools
from dataclasses import dataclass
from enum import Enum


class Kind(str, Enum):
    """How a category is run and scored."""

    AST = "ast"
    RELEVANCE = "relevance"
    IRRELEVANCE = "irrelevance"
    MULTI_TURN = "multi_turn"
    MEMORY = "memory"
    WEB_SEARCH = "web_search"
    FORMAT_SENSITIVITY = "format_sensitivity"
    EXECUTABLE = "executable"  # the first release's execution categories (outside V4)


@dataclass(frozen=True)
class Category:
    name: str
    group: str  # result/score directory: non_live, live, multi_turn, agentic, format_sensitivity
    kind: Kind
    question_file: str  # file name under the data directory
    answer_file: str | None  # file name under possible_answer/, None when there is no ground truth
    language: str = "python"  # python | java | javascript: selects the checker's value conversion
    # AST rules (simple | multiple | parallel | parallel_multiple) of an AST category; format
    # sensitivity takes each copy's from its source category
    checker: str | None = None
    custom: bool = False  # added by a project through the hooks, not part of the benchmark
    # What sets the category apart within its kind, declared here so that no code reads it from
    # the name: the memory store (kv | vector | rec_sum), web hits without snippets
    # (no_snippet), the executable family (exec | rest | sql).
    variant: str = ""


def _file(name: str) -> str:
    return f"BFCL_v4_{name}.json"


def _ast(name: str, group: str, checker: str, language: str = "python") -> Category:
    return Category(name, group, Kind.AST, _file(name), _file(name), language, checker)


NON_LIVE = (
    "simple_python",
    "simple_java",
    "simple_javascript",
    "multiple",
    "parallel",
    "parallel_multiple",
    "irrelevance",
)
LIVE = (
    "live_simple",
    "live_multiple",
    "live_parallel",
    "live_parallel_multiple",
    "live_irrelevance",
    "live_relevance",
)
MULTI_TURN = (
    "multi_turn_base",
    "multi_turn_miss_func",
    "multi_turn_miss_param",
    "multi_turn_long_context",
)
WEB_SEARCH = ("web_search_base", "web_search_no_snippet")
MEMORY = ("memory_kv", "memory_vector", "memory_rec_sum")
MEMORY_SCENARIOS = ("student", "customer", "finance", "healthcare", "notetaker")
FORMAT_SENSITIVITY = "format_sensitivity"

SINGLE_TURN = NON_LIVE + LIVE
AGENTIC = MEMORY + WEB_SEARCH
ALL_SCORING = SINGLE_TURN + MULTI_TURN + AGENTIC
ALL = (*ALL_SCORING, FORMAT_SENSITIVITY)
# The first release's executable categories, shipped unused in V4: outside the overall, out of
# `all` too (they need live APIs and keys), selected only by name or by `executable`.
EXEC = ("exec_simple", "exec_multiple", "exec_parallel", "exec_parallel_multiple")
EXECUTABLE = (*EXEC, "rest", "sql")


def _build_registry() -> dict[str, Category]:
    reg: dict[str, Category] = {}
    reg["simple_python"] = _ast("simple_python", "non_live", "simple")
    for name in ("multiple", "parallel", "parallel_multiple"):
        reg[name] = _ast(name, "non_live", name)
    reg["simple_java"] = _ast("simple_java", "non_live", "simple", "java")
    reg["simple_javascript"] = _ast("simple_javascript", "non_live", "simple", "javascript")
    reg["irrelevance"] = Category(
        "irrelevance", "non_live", Kind.IRRELEVANCE, _file("irrelevance"), None
    )
    for name in ("live_simple", "live_multiple", "live_parallel", "live_parallel_multiple"):
        reg[name] = _ast(name, "live", name.removeprefix("live_"))
    reg["live_irrelevance"] = Category(
        "live_irrelevance", "live", Kind.IRRELEVANCE, _file("live_irrelevance"), None
    )
    reg["live_relevance"] = Category(
        "live_relevance", "live", Kind.RELEVANCE, _file("live_relevance"), None
    )
    for name in MULTI_TURN:
        reg[name] = Category(name, "multi_turn", Kind.MULTI_TURN, _file(name), _file(name))
    for name in MEMORY:
        store = name.removeprefix("memory_")
        reg[name] = Category(
            name, "agentic", Kind.MEMORY, _file("memory"), _file("memory"), variant=store
        )
    for name, variant in zip(WEB_SEARCH, ("", "no_snippet"), strict=True):
        reg[name] = Category(
            name,
            "agentic",
            Kind.WEB_SEARCH,
            _file("web_search"),
            _file("web_search"),
            variant=variant,
        )
    reg[FORMAT_SENSITIVITY] = Category(
        FORMAT_SENSITIVITY,
        "format_sensitivity",
        Kind.FORMAT_SENSITIVITY,
        _file(FORMAT_SENSITIVITY),
        None,
    )
    for name in EXECUTABLE:
        unused = f"unused_datasets/{{}}/{_file(name)}"
        reg[name] = Category(
            name,
            "executable",
            Kind.EXECUTABLE,
            unused.format("question"),
            unused.format("possible_answer"),
            # sql is checked as the syntax tree of one sql.execute call
            checker={"rest": None, "sql": "simple"}.get(name, name.removeprefix("exec_")),
            variant="exec" if name.startswith("exec_") else name,
        )
    # Keep the registry in the canonical order of ALL.
    return {name: reg[name] for name in (*ALL, *EXECUTABLE)}


# Process-global because pytest makes it so: a project's own categories arrive through a hook
# at configure time and must be known to collection, xdist workers and every report of the
# session; they are added by register_category and removed at the session's end
# (unregister_custom_categories), so in-process test sessions do not see each other's.
CATEGORIES: dict[str, Category] = _build_registry()

COLLECTIONS: dict[str, tuple[str, ...]] = {
    "all": ALL,
    "all_scoring": ALL_SCORING,
    "single_turn": SINGLE_TURN,
    "multi_turn": MULTI_TURN,
    "live": LIVE,
    "non_live": NON_LIVE,
    "python": (
        "simple_python",
        "irrelevance",
        "parallel",
        "multiple",
        "parallel_multiple",
        *LIVE,
    ),
    "non_python": ("simple_java", "simple_javascript"),
    "memory": MEMORY,
    "web_search": WEB_SEARCH,
    "agentic": AGENTIC,
    "executable": EXECUTABLE,
}

# Expected entry counts of the pinned release (prerequisites excluded); used to spot a data
# directory that is incomplete and to size categories that were not run.
DATASET_SIZES: dict[str, int] = {
    "simple_python": 400,
    "simple_java": 100,
    "simple_javascript": 50,
    "multiple": 200,
    "parallel": 200,
    "parallel_multiple": 200,
    "irrelevance": 240,
    "live_simple": 258,
    "live_multiple": 1053,
    "live_parallel": 16,
    "live_parallel_multiple": 24,
    "live_irrelevance": 884,
    "live_relevance": 16,
    **{name: 200 for name in MULTI_TURN},
    **{name: 155 for name in MEMORY},
    **{name: 100 for name in WEB_SEARCH},
    FORMAT_SENSITIVITY: 5200,
    "exec_simple": 100,
    "exec_multiple": 50,
    "exec_parallel": 50,
    "exec_parallel_multiple": 40,
    "rest": 70,
    "sql": 100,
}


class UnknownCategoryError(ValueError):
    pass


def register_category(category: Category) -> None:
    """Add a project's own category (see ``dataset/custom.py``): selectable by name and by the
    ``custom`` collection, and run by default beside the benchmark."""
    category = dataclasses.replace(category, custom=True)
    CATEGORIES[category.name] = category
    custom = tuple(dict.fromkeys((*COLLECTIONS.get("custom", ()), category.name)))
    COLLECTIONS["custom"] = custom
    for collection in ("all", "all_scoring"):
        COLLECTIONS[collection] = tuple(dict.fromkeys((*COLLECTIONS[collection], category.name)))


def expand_categories(spec: str | list[str] | tuple[str, ...]) -> list[str]:
    """Expand a comma-separated list of category and collection names, like the reference's
    ``--test-category``. The result is de-duplicated and in canonical order."""
    parts = spec.split(",") if isinstance(spec, str) else list(spec)
    wanted: set[str] = set()
    for raw in parts:
        name = raw.strip()
        if not name:
            continue
        if name in COLLECTIONS:
            wanted.update(COLLECTIONS[name])
        elif name in CATEGORIES:
            wanted.add(name)
        else:
            raise UnknownCategoryError(unknown_category_message(name))
    return [name for name in CATEGORIES if name in wanted]


def unknown_category_message(name: str) -> str:
    """Why a category name is refused: the closest known names first (a typo is the usual
    cause), then every known name."""
    import difflib  # only on this error path

    names = [*COLLECTIONS, *CATEGORIES]
    close = difflib.get_close_matches(name.lower(), names, n=3, cutoff=0.6)
    hint = f" (did you mean {' or '.join(repr(c) for c in close)}?)" if close else ""
    return f"unknown BFCL category {name!r}{hint}; known names: {', '.join(names)}"


@functools.lru_cache(maxsize=1 << 16)  # asked for every entry at every step of a run
def category_of_id(entry_id: str) -> str:
    """Category of an entry id: drop everything from the first ':', then cut at the last '_'."""
    return entry_id.split(":", 1)[0].rsplit("_", 1)[0]


def index_of_id(entry_id: str) -> int:
    """Numeric index of an id (``live_simple_3-2-0`` -> 3)."""
    tail = entry_id.split(":", 1)[0].rsplit("_", 1)[1]
    if "-" in tail:
        if tail.count("-") != 2:
            raise ValueError(f"malformed BFCL id {entry_id!r}: expected two dashes in {tail!r}")
        tail = tail.split("-", 1)[0]
    return int(tail)


def natural_key(entry_id: str) -> tuple[str, int, str]:
    """Ids in the order a person expects (``x_2`` before ``x_10``), for any id, even one that
    does not follow the benchmark's spelling."""
    try:
        index = index_of_id(entry_id)
    except (ValueError, IndexError):
        index = -1
    return (category_of_id(entry_id), index, entry_id)


def unregister_custom_categories() -> None:
    """Forget every project category (the end of a session)."""
    for name in COLLECTIONS.pop("custom", ()):
        CATEGORIES.pop(name, None)
        for collection in ("all", "all_scoring"):
            COLLECTIONS[collection] = tuple(n for n in COLLECTIONS[collection] if n != name)


def is_agentic(entry_id: str) -> bool:
    """Memory (prerequisites included) and web-search entries, by their category's kind."""
    if is_memory_prerequisite(entry_id):
        return True
    category = CATEGORIES.get(category_of_id(entry_id))
    return category is not None and category.kind in (Kind.MEMORY, Kind.WEB_SEARCH)


def is_memory_prerequisite(entry_id: str) -> bool:
    """A memory scenario's prerequisite conversation: not a category's entry, recognised by the
    id the dataset gives it (``memory_<store>_prereq_...``)."""
    return entry_id.startswith("memory_") and "_prereq_" in entry_id
