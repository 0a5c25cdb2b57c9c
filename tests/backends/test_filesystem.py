"""The file-system application: navigation, files, search, moves, long context."""

from __future__ import annotations

import pytest
from backend_helpers import env_for, run

from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.backends.long_context import load_long_context

FS = {
    "root": {
        "alex": {
            "type": "directory",
            "contents": {
                "docs": {
                    "type": "directory",
                    "contents": {
                        "a.txt": {"type": "file", "content": "beta line\nalpha line\nbeta"},
                        "b.txt": {"type": "file", "content": "beta line\nzeta line"},
                    },
                },
                ".hidden": {"type": "file", "content": "x"},
                "notes.md": {"type": "file", "content": "one two three"},
            },
        }
    }
}


@pytest.fixture
def fs() -> Environment:
    return env_for("GorillaFileSystem", FS)


def test_fs_navigation(fs):
    assert run(fs, "pwd()", "ls()", "ls(a=True)") == [
        {"current_working_directory": "/alex"},
        {"current_directory_content": ["docs", "notes.md"]},
        {"current_directory_content": ["docs", ".hidden", "notes.md"]},
    ]
    assert run(fs, "cd(folder='docs/')", "pwd()", "cd('..')", "cd('..')") == [
        {"current_working_directory": "docs"},
        {"current_working_directory": "/alex/docs"},
        {},
        {"error": "Current directory is already the root. Cannot go back."},
    ]
    assert run(fs, "cd('docs/x')", "cd('nope')", "cd('notes.md')") == [
        {"error": "cd: docs/x: Unsupported path. Only one folder level at a time is supported."},
        {"error": "cd: 'nope': No such file or directory"},
        {"error": "cd: 'notes.md': No such file or directory"},
    ]


def test_fs_default_root_is_slash_and_pwd_keeps_its_quirk():
    env = env_for("GorillaFileSystem")
    assert run(env, "pwd()", "ls()") == [
        {"current_working_directory": "//"},
        {"current_directory_content": []},
    ]


def test_fs_create_and_write(fs):
    assert run(fs, "mkdir('new')", "mkdir('new')", "mkdir('a/b')") == [
        None,
        {"error": "mkdir: cannot create directory 'new': File exists"},
        {"error": "mkdir: cannot create directory 'a/b': Invalid character"},
    ]
    assert run(fs, "touch('f.txt')", "touch('f.txt')", "touch('x?')") == [
        None,
        {"error": "touch: cannot touch 'f.txt': File exists"},
        {"error": "touch: cannot touch 'x?': Invalid character"},
    ]
    assert run(fs, "echo('hi')", "echo('hi', '')", "echo(content='hi', file_name='f.txt')") == [
        {"terminal_output": "hi"},
        {"terminal_output": "hi"},
        None,
    ]
    assert run(fs, "cat('f.txt')", "echo('x', 'missing')", "echo('x', 'a*')") == [
        {"file_content": "hi"},
        {"error": "echo: cannot write to 'missing': No such file"},
        {"error": "echo: cannot write to 'a*': Invalid character"},
    ]
    assert run(fs, "echo('x', 'docs')")[0].startswith("Error during execution:")


def test_fs_reading(fs):
    assert run(fs, "cat('docs')", "cat('nope')", "cat('a|b')") == [
        {"error": "cat: 'docs': Is a directory"},
        {"error": "cat: 'nope': No such file or directory"},
        {"error": "cat: 'a|b': Invalid character"},
    ]
    run(fs, "cd('docs')")
    assert run(fs, "wc('a.txt')", "wc('a.txt', 'w')", "wc('a.txt', 'c')", "wc('a.txt', 'x')") == [
        {"count": 3, "type": "lines"},
        {"count": 5, "type": "words"},
        {"count": 25, "type": "characters"},
        {"error": "wc: invalid mode 'x'"},
    ]
    assert run(fs, "sort('a.txt')", "grep('a.txt', 'beta')", "tail('a.txt', 2)") == [
        {"sorted_content": "alpha line\nbeta\nbeta line"},
        {"matching_lines": ["beta line", "beta"]},
        {"last_lines": "alpha line\nbeta"},
    ]
    assert run(fs, "tail('a.txt', 0)", "tail('a.txt', 99)") == [
        {"last_lines": "beta line\nalpha line\nbeta"},  # quirk kept: 0 means the whole file
        {"last_lines": "beta line\nalpha line\nbeta"},
    ]
    assert run(fs, "diff('a.txt', 'b.txt')", "diff('a.txt', 'zz')") == [
        {"diff_lines": "- alpha line\n+ zeta line"},
        {"error": "diff: a.txt or zz: No such file or directory"},
    ]
    for command in ("sort", "grep", "tail", "wc"):
        args = "'zz', 'p'" if command == "grep" else "'zz'"
        assert run(fs, f"{command}({args})") == [
            {"error": f"{command}: zz: No such file or directory"}
        ]


def test_fs_find_and_du(fs):
    assert run(fs, "find()", "find('/', 'a')", "find(path='docs', name='b')") == [
        {"matches": ["./docs", "./docs/a.txt", "./docs/b.txt", "./.hidden", "./notes.md"]},
        {"matches": ["/docs/a.txt"]},
        {"matches": ["docs/b.txt"]},
    ]
    assert run(fs, "find('nowhere')") == [{"error": "find: 'nowhere': No such file or directory"}]
    total = len("beta line\nalpha line\nbeta") + len("beta line\nzeta line") + 1 + 13
    assert run(fs, "du()", "du(human_readable=True)") == [
        {"disk_usage": f"{total} bytes"},
        {"disk_usage": f"{total:.2f} B"},
    ]


def test_fs_move_copy_remove(fs):
    assert run(fs, "mv('notes.md', 'docs')", "ls()") == [
        {"result": "'notes.md' moved to 'docs/notes.md'"},
        {"current_directory_content": ["docs"]},
    ]
    assert run(fs, "mv('zz', 'docs')", "mv('docs', 'a/b')", "touch('t')", "mv('t', 'docs')") == [
        {"error": "mv: cannot move 'zz': No such file or directory"},
        {"error": "mv: path not allowed in destination. Provide only a file or directory name."},
        None,
        {"result": "'t' moved to 'docs/t'"},
    ]
    assert run(fs, "touch('t')", "mv('t', 'docs')", "touch('u')", "mv('.hidden', 'u')") == [
        None,
        {"error": "mv: cannot move 't' to 'docs/t': File exists"},
        None,
        {"error": "mv: cannot move '.hidden' to 'u': Not a directory"},
    ]
    assert run(fs, "mv('u', 'v')", "ls()") == [
        {"result": "'u' moved to 'v'"},
        {"current_directory_content": ["docs", "t", "v"]},
    ]
    assert run(fs, "cp('v', 'w')", "cp('v', 'docs')", "cp('v', 't')", "cp('zz', 'w')") == [
        {"result": "'v' copied to 'w'"},
        {"result": "'v' copied to 'docs/v'"},
        {"error": "cp: cannot copy 'v' to 't': Not a directory"},
        {"error": "cp: cannot copy 'zz': No such file or directory"},
    ]
    # Quirk kept: copying onto an existing name inside a directory raises.
    assert run(fs, "cp('v', 'docs')") == [
        "Error during execution: File 'v' already exists in directory 'docs'."
    ]
    assert run(fs, "mkdir('e')", "rmdir('e')", "rmdir('docs')", "rmdir('t')", "rmdir('zz')") == [
        None,
        {"result": "'e' removed"},
        {"error": "rmdir: cannot remove 'docs': Directory not empty"},
        {"error": "rmdir: cannot remove 't': Not a directory"},
        {"error": "rmdir: cannot remove 'zz': No such file or directory"},
    ]
    assert run(fs, "rm('docs')", "rm('docs')") == [
        {"result": "'docs' removed"},
        {"error": "rm: cannot remove 'docs': No such file or directory"},
    ]


def test_fs_state_equality_ignores_parents_and_times(fs):
    other = env_for("GorillaFileSystem", FS)
    run(fs, "touch('n')")
    run(other, "touch('n')")
    assert fs.instances["GorillaFileSystem"].root == other.instances["GorillaFileSystem"].root
    run(other, "echo('changed', 'n')")
    assert fs.instances["GorillaFileSystem"].root != other.instances["GorillaFileSystem"].root


def test_fs_long_context_extends_files_and_leaf_directories(data_source):
    tables = load_long_context(data_source.unpacked_root)
    env = env_for("GorillaFileSystem", FS, tables)
    names = run(env, "cd('docs')", "ls()")[1]["current_directory_content"]
    assert names[:2] == ["a.txt", "b.txt"]
    assert names[2:] == tables["POPULATE_FILE_EXTENSION"]
    content = run(env, "cat('a.txt')")[0]["file_content"]
    assert content == "beta line\nalpha line\nbeta" + tables["FILE_CONTENT_EXTENSION"]
