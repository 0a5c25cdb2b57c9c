"""What a started server is given besides its flags' text: the files and folders its command
names (a checkpoint, a chat template, a tool parser plugin, a LoRA adapter, a generation
config, a script), identified by their content as :mod:`checkpoint_identity` identifies a
checkpoint, and the model's revision. They make the response cache's identity, so an input
edited in place under the same path is asked again, and the reports list them, so a reviewer
sees which changed.

A word names an input when it is the path of an existing file or folder, or is ``--flag=PATH``
with one; the first word (the program) counts too when it is a path (``./serve.sh``). A folder
of more than :data:`MAX_FOLDER_FILES` files (a download cache, the working directory) is
identified by its path alone, and the reports say so.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from pytest_bfcl.option_rules import SERVER_PORT_FIELD
from pytest_bfcl.servers.checkpoint_identity import checkpoint_files, file_identity
from pytest_bfcl.settings import REVISION_ENV

MAX_FOLDER_FILES = 2000  # a checkpoint or an adapter holds tens; more is not one
DIGEST_CHARS = 16
TOO_LARGE = "not read (more than 2000 files)"


def named_paths(words: list[str]) -> list[str]:
    """The words (or ``--flag=`` values) that are paths of existing files or folders, each
    once, in the command's order."""
    found: list[str] = []
    for word in words:
        if SERVER_PORT_FIELD in word:
            continue
        value = word.partition("=")[2] if word.startswith("-") and "=" in word else word
        if value and value not in found and _exists(value):
            found.append(value)
    return found


def _exists(value: str) -> bool:
    try:
        return Path(value).expanduser().exists()
    except (OSError, ValueError):  # a name too long, a NUL: not a path
        return False


def input_digests(words: list[str]) -> dict[str, str]:
    """Each named path (as written) and its content digest."""
    return {word: content_digest(Path(word).expanduser()) for word in named_paths(words)}


def content_digest(path: Path) -> str:
    """A file's or a folder's content identity: the checkpoint rule applied to it (a folder's
    files by name, size and content; a large file sampled)."""
    digest = hashlib.sha256()
    if path.is_dir():
        files = _folder_files(path)
        if files is None:
            return TOO_LARGE
        for file in files:
            digest.update(file_identity(file, file.relative_to(path).as_posix()))
    else:
        digest.update(file_identity(path, path.name))
    return digest.hexdigest()[:DIGEST_CHARS]


def _folder_files(folder: Path) -> list[Path] | None:
    """The files that count in a folder, or None when it holds too many to be a model input."""
    count = 0
    for _root, dirs, files in os.walk(folder):
        dirs[:] = [d for d in dirs if not d.startswith(".")]
        count += len(files)
        if count > MAX_FOLDER_FILES:
            return None
    return checkpoint_files(folder)


def inputs_identity(inputs: dict[str, str]) -> str:
    """The inputs in the cache identity's text: ``path@digest`` each."""
    return " ".join(f"{path}@{digest}" for path, digest in inputs.items())


def served_identity(base: str, inputs: dict[str, str], revision: str, extra: str) -> str:
    """A started or remote model's cache identity: what names it (its command, its checkpoint),
    its inputs' contents, its revision and the project's extra identity."""
    parts = [base]
    if inputs:
        parts.append(f"inputs: {inputs_identity(inputs)}")
    if revision:
        parts.append(f"revision: {revision}")
    if extra:
        parts.append(extra)
    return " ".join(p for p in parts if p)


def inputs_line(inputs: dict[str, str]) -> str:
    """The header's line listing a started server's inputs."""
    return "model inputs: " + ", ".join(f"{path} ({digest})" for path, digest in inputs.items())


def identity_lines(info: dict[str, object], revision: str, cached: bool) -> list[str]:
    """The header's lines on what the response cache knows the model by: a started server's
    inputs with their digests, the revision, or, for a remote endpoint named by nothing but
    its name, that its cached answers are trusted by that name."""
    lines = []
    inputs = info.get("inputs")
    if isinstance(inputs, dict) and inputs:
        lines.append(inputs_line({str(k): str(v) for k, v in inputs.items()}))
    if revision:
        lines.append(f"model revision: {revision} (part of the response cache's identity)")
    elif cached and info.get("kind") == "openai-compatible":
        lines.append(
            f"response cache: answers of {info.get('served_model')!r} are trusted by its name; "
            "when the model behind it changes, name its revision with --bfcl-model-revision "
            f"or ${REVISION_ENV}"
        )
    return lines
