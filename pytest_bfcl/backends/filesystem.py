"""A small in-memory file system with shell-like commands (``GorillaFileSystem``)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.backends.base import Backend
from pytest_bfcl.backends.long_context import LongContext

_INVALID_NAME_CHARS = set('|/\\?%*:"><')


class File:
    def __init__(self, name: str, content: str = "") -> None:
        self.name = name
        self.content = content

    def _write(self, content: str) -> None:
        self.content = content

    def __eq__(self, other: object) -> bool:
        return isinstance(other, File) and (self.name, self.content) == (other.name, other.content)

    def __repr__(self) -> str:
        return f"File({self.name!r}, {len(self.content)} chars)"


class Directory:
    def __init__(self, name: str, parent: Directory | None = None) -> None:
        self.name = name
        self.parent = parent
        self.contents: dict[str, File | Directory] = {}

    def _add_file(self, name: str, content: str = "") -> None:
        if name in self.contents:
            raise ValueError(f"File '{name}' already exists in directory '{self.name}'.")
        self.contents[name] = File(name, content)

    def _add_directory(self, name: str) -> None:
        if name in self.contents:
            raise ValueError(f"Directory '{name}' already exists in directory '{self.name}'.")
        self.contents[name] = Directory(name, self)

    def _get(self, name: str) -> File | Directory | None:
        return self if name == "." else self.contents.get(name)

    def _flatten(self, prefix: str = "") -> dict[str, str | None]:
        """Every path under this directory: file content, or ``None`` for a directory."""
        out: dict[str, str | None] = {}
        for name, item in self.contents.items():
            path = f"{prefix}/{name}"
            if isinstance(item, Directory):
                out[path + "/"] = None
                out.update(item._flatten(path))
            else:
                out[path] = item.content
        return out

    # Parent links are ignored: two trees are equal when names and contents are.
    def __eq__(self, other: object) -> bool:
        return (
            isinstance(other, Directory)
            and self.name == other.name
            and self.contents == other.contents
        )

    def __repr__(self) -> str:
        return f"Directory({self.name!r}, {list(self.contents)!r})"


def _invalid(name: str) -> bool:
    # each character looked for in the name, as the reference does: a name that is no text
    # fails as it does there ("argument of type 'int' is not iterable")
    return any(char in name for char in _INVALID_NAME_CHARS)


def _error(message: str) -> dict[str, str]:
    return {"error": message}


class GorillaFileSystem(Backend):
    DEFAULTS = {"long_context": False}

    def __init__(self) -> None:
        super().__init__()
        self.root = Directory("/", None)
        self._current_dir = self.root

    def _load_scenario(self, config: dict[str, Any], long_context: LongContext | None) -> None:
        self._long = long_context
        self.long_context = long_context is not None
        self.root = Directory("/", None)
        scenario_root = config.get("root")
        if scenario_root:
            name, node = next(iter(scenario_root.items()))
            self.root = self._load_directory(node["contents"], Directory(name, None))
        self._current_dir = self.root

    def _load_directory(self, contents: dict[str, Any], directory: Directory) -> Directory:
        has_subdirectory = False
        for name, node in contents.items():
            if node["type"] == "directory":
                has_subdirectory = True
                directory.contents[name] = self._load_directory(
                    node["contents"], Directory(name, directory)
                )
            elif node["type"] == "file":
                content = node["content"]
                if self._long is not None and name not in self._long["FILES_TAIL_USED"]:
                    content += self._long["FILE_CONTENT_EXTENSION"]
                directory.contents[name] = File(name, content)
        if self._long is not None and not has_subdirectory:
            for name in self._long["POPULATE_FILE_EXTENSION"]:
                directory._add_file(name)
        return directory

    # -- navigation -----------------------------------------------------------------------------

    def pwd(self) -> dict[str, str]:
        names = []
        node: Directory | None = self._current_dir
        while node is not None:
            names.append(node.name)
            node = node.parent
        return {"current_working_directory": "/" + "/".join(reversed(names))}

    def ls(self, a: bool = False) -> dict[str, list[str]]:
        names = [n for n in self._current_dir.contents if a or not n.startswith(".")]
        return {"current_directory_content": names}

    def cd(self, folder: str) -> dict[str, str]:
        folder = folder.rstrip("/") or "/"
        if folder not in (".", "..", "/") and "/" in folder:
            return _error(
                f"cd: {folder}: Unsupported path. Only one folder level at a time is supported."
            )
        if folder == "..":
            parent = self._current_dir.parent
            if parent is not None:
                self._current_dir = parent
                return {}
            if self._current_dir == self.root:
                return _error("Current directory is already the root. Cannot go back.")
            return _error("cd: ..: No such directory")
        target = self._navigate(folder)
        if isinstance(target, dict):
            return target
        self._current_dir = target
        return {"current_working_directory": target.name}

    def _navigate(self, path: str | None) -> Directory | dict[str, str]:
        if path is None or path == ".":
            return self._current_dir
        if path == "/":
            return self.root
        parts = path.strip("/").split("/")  # before startswith: the reference's order
        node = self.root if path.startswith("/") else self._current_dir
        for part in parts:
            child = node._get(part)
            if not isinstance(child, Directory):
                return _error(f"cd: '{path}': No such file or directory")
            node = child
        return node

    # -- creating and writing -----------------------------------------------------------------

    def mkdir(self, dir_name: str) -> dict[str, str] | None:
        if _invalid(dir_name):
            return _error(f"mkdir: cannot create directory '{dir_name}': Invalid character")
        if dir_name in self._current_dir.contents:
            return _error(f"mkdir: cannot create directory '{dir_name}': File exists")
        self._current_dir._add_directory(dir_name)
        return None

    def touch(self, file_name: str) -> dict[str, str] | None:
        if _invalid(file_name):
            return _error(f"touch: cannot touch '{file_name}': Invalid character")
        if file_name in self._current_dir.contents:
            return _error(f"touch: cannot touch '{file_name}': File exists")
        self._current_dir._add_file(file_name)
        return None

    def echo(self, content: str, file_name: str | None = None) -> dict[str, str] | None:
        if file_name is None:
            return {"terminal_output": content}
        if _invalid(file_name):
            return _error(f"echo: cannot write to '{file_name}': Invalid character")
        if file_name == "":
            return {"terminal_output": content}
        item = self._current_dir._get(file_name)
        if item is None:
            return _error(f"echo: cannot write to '{file_name}': No such file")
        if isinstance(item, Directory):
            # Like the benchmark's backend, writing to a directory fails with an exception.
            raise AttributeError("'Directory' object has no attribute '_write'")
        item._write(content)
        return None

    # -- reading --------------------------------------------------------------------------------

    def _file(self, name: str) -> File | None:
        item = self._current_dir._get(name)
        return item if isinstance(item, File) else None

    def cat(self, file_name: str) -> dict[str, str]:
        if _invalid(file_name):
            return _error(f"cat: '{file_name}': Invalid character")
        item = self._current_dir._get(file_name)
        if isinstance(item, File):
            return {"file_content": item.content}
        if isinstance(item, Directory):
            return _error(f"cat: '{file_name}': Is a directory")
        return _error(f"cat: '{file_name}': No such file or directory")

    def find(self, path: str = ".", name: str | None = None) -> dict[str, Any]:
        start = self._navigate(path)
        if isinstance(start, dict):
            message = start["error"]
            return (
                _error(message.replace("cd:", "find:", 1)) if message.startswith("cd:") else start
            )
        matches: list[str] = []

        def walk(directory: Directory, base: str) -> None:
            for item_name, item in directory.contents.items():
                item_path = f"{base}/{item_name}"
                if name is None or name in item_name:
                    matches.append(item_path)
                if isinstance(item, Directory):
                    walk(item, item_path)

        walk(start, path.rstrip("/"))
        return {"matches": matches}

    def wc(self, file_name: str, mode: str = "l") -> dict[str, Any]:
        if mode not in ("l", "w", "c"):
            return _error(f"wc: invalid mode '{mode}'")
        file = self._file(file_name)
        if file is None:
            return _error(f"wc: {file_name}: No such file or directory")
        if mode == "l":
            return {"count": len(file.content.splitlines()), "type": "lines"}
        if mode == "w":
            return {"count": len(file.content.split()), "type": "words"}
        return {"count": len(file.content), "type": "characters"}

    def sort(self, file_name: str) -> dict[str, str]:
        file = self._file(file_name)
        if file is None:
            return _error(f"sort: {file_name}: No such file or directory")
        return {"sorted_content": "\n".join(sorted(file.content.splitlines()))}

    def grep(self, file_name: str, pattern: str) -> dict[str, Any]:
        file = self._file(file_name)
        if file is None:
            return _error(f"grep: {file_name}: No such file or directory")
        return {"matching_lines": [line for line in file.content.splitlines() if pattern in line]}

    def du(self, human_readable: bool = False) -> dict[str, str]:
        def size(directory: Directory) -> int:
            total = 0
            for item in directory.contents.values():
                if isinstance(item, File):
                    total += len(item.content.encode("utf-8"))
                else:
                    total += size(item)
            return total

        total = size(self._current_dir)
        if not human_readable:
            return {"disk_usage": f"{total} bytes"}
        amount = float(total)
        for unit in ("B", "KB", "MB", "GB", "TB"):
            if amount < 1024:
                return {"disk_usage": f"{amount:.2f} {unit}"}
            amount /= 1024
        return {"disk_usage": f"{amount:.2f} PB"}

    def tail(self, file_name: str, lines: int = 10) -> dict[str, str]:
        file = self._file(file_name)
        if file is None:
            return _error(f"tail: {file_name}: No such file or directory")
        content = file.content.splitlines()
        if lines > len(content):  # not min(): a bad count fails with the reference's message
            lines = len(content)
        # Quirk kept: ``lines=0`` slices from -0 and returns the whole file.
        return {"last_lines": "\n".join(content[-lines:])}

    def diff(self, file_name1: str, file_name2: str) -> dict[str, str]:
        here = self._current_dir.contents
        first = second = None
        if file_name1 in here and file_name2 in here:  # the reference's order of checks
            first, second = self._file(file_name1), self._file(file_name2)
        if first is None or second is None:
            return _error(f"diff: {file_name1} or {file_name2}: No such file or directory")
        pairs = zip(first.content.splitlines(), second.content.splitlines(), strict=False)
        return {"diff_lines": "\n".join(f"- {a}\n+ {b}" for a, b in pairs if a != b)}

    # -- moving, copying, removing --------------------------------------------------------------

    def mv(self, source: str, destination: str) -> dict[str, str]:
        here = self._current_dir
        if source not in here.contents:
            return _error(f"mv: cannot move '{source}': No such file or directory")
        item = here.contents[source]
        if "/" in destination:
            return _error(
                "mv: path not allowed in destination. Provide only a file or directory name."
            )
        target = here.contents.get(destination)
        if isinstance(target, Directory):
            if source in target.contents:
                return _error(
                    f"mv: cannot move '{source}' to '{destination}/{source}': File exists"
                )
            del here.contents[source]
            if isinstance(item, File):
                target._add_file(source, item.content)
            else:
                target._add_directory(source)
                moved = target.contents[source]
                assert isinstance(moved, Directory)
                moved.contents = item.contents  # children keep their old parent link
            return {"result": f"'{source}' moved to '{destination}/{source}'"}
        if isinstance(target, File):
            return _error(f"mv: cannot move '{source}' to '{destination}': Not a directory")
        del here.contents[source]
        item.name = destination
        here.contents[destination] = item
        return {"result": f"'{source}' moved to '{destination}'"}

    def rm(self, file_name: str) -> dict[str, str]:
        if file_name not in self._current_dir.contents:
            return _error(f"rm: cannot remove '{file_name}': No such file or directory")
        del self._current_dir.contents[file_name]
        return {"result": f"'{file_name}' removed"}

    def rmdir(self, dir_name: str) -> dict[str, str]:
        item = self._current_dir.contents.get(dir_name)
        if item is None:
            return _error(f"rmdir: cannot remove '{dir_name}': No such file or directory")
        if not isinstance(item, Directory):
            return _error(f"rmdir: cannot remove '{dir_name}': Not a directory")
        if item.contents:
            return _error(f"rmdir: cannot remove '{dir_name}': Directory not empty")
        del self._current_dir.contents[dir_name]
        return {"result": f"'{dir_name}' removed"}

    def cp(self, source: str, destination: str) -> dict[str, str]:
        here = self._current_dir
        if source not in here.contents:
            return _error(f"cp: cannot copy '{source}': No such file or directory")
        item = here.contents[source]
        if "/" in destination:
            return _error(
                "cp: path not allowed in destination. Provide only a file or directory name."
            )
        target = here.contents.get(destination)
        if isinstance(target, Directory):
            # Quirk kept: a name already inside the destination is not checked first, so the
            # add raises ("File 'x' already exists in directory 'd'.").
            self._copy_into(item, target, source)
            return {"result": f"'{source}' copied to '{destination}/{source}'"}
        if isinstance(target, File):
            return _error(f"cp: cannot copy '{source}' to '{destination}': Not a directory")
        self._copy_into(item, here, destination)
        return {"result": f"'{source}' copied to '{destination}'"}

    @staticmethod
    def _copy_into(item: File | Directory, directory: Directory, name: str) -> None:
        if isinstance(item, File):
            directory._add_file(name, item.content)
        else:
            directory._add_directory(name)
            copied = directory.contents[name]
            assert isinstance(copied, Directory)
            copied.contents = dict(item.contents)  # shallow copy, like the benchmark
