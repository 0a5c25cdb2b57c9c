"""The simulated applications: their tools match the dataset's function docs one to one, and
every method behaves as documented, error paths included."""

from __future__ import annotations

import ast
import inspect
import json
import random
from typing import Any

import pytest

from pytest_bfcl.backends import BACKENDS
from pytest_bfcl.backends.execute import Environment
from pytest_bfcl.backends.long_context import load_long_context
from pytest_bfcl.dataset.load import FUNC_DOC_FILES


def run(env: Environment, *calls: str) -> list[Any]:
    """Execute calls; results that are JSON or Python literals (lists, None) are parsed for easy
    comparison, other text is kept."""
    out = []
    for text in env.execute(list(calls)):
        try:
            out.append(json.loads(text))
        except ValueError:
            try:
                out.append(ast.literal_eval(text))
            except (ValueError, SyntaxError):
                out.append(text)
    return out


def env_for(name: str, config: dict[str, Any] | None = None, long_context=None) -> Environment:
    return Environment.create([name], {name: config or {}}, long_context)


# -- the tools match the function docs ---------------------------------------------------------


@pytest.mark.parametrize("class_name", sorted(BACKENDS))
def test_public_methods_match_function_docs(dataset, class_name):
    docs = {doc.name: doc for doc in dataset.function_docs(class_name)}
    cls = BACKENDS[class_name]
    assert set(cls.public_methods()) == set(docs), FUNC_DOC_FILES[class_name]
    for name, doc in docs.items():
        params = inspect.signature(getattr(cls, name)).parameters
        names = [p for p in params if p != "self"]
        assert set(names) == set(doc.parameters.properties), name
        required = {p for p in names if params[p].default is inspect.Parameter.empty}
        assert required == set(doc.parameters.required), name


def test_every_public_attribute_is_state_and_private_ones_are_not():
    env = env_for("VehicleControlAPI")
    state = env.instances["VehicleControlAPI"]._state()
    assert "fuelLevel" in state and "doorStatus" in state
    assert not any(name.startswith("_") for name in state)


# -- file system --------------------------------------------------------------------------------

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


# -- math ---------------------------------------------------------------------------------------


def test_math_results_and_errors():
    env = env_for("MathAPI")
    assert env.execute(["logarithm(value=36.0, base=6.0, precision=4)"]) == [
        "{'result': mpf('2.0')}"
    ]
    assert env.execute(["square_root(16, 5)", "square_root(-1, 5)"]) == [
        "{'result': Decimal('4')}",
        '{"error": "Cannot calculate square root of a negative number"}',
    ]
    assert run(
        env,
        "add(2, 3)",
        "subtract(2, 3.5)",
        "multiply(2, 'x')",
        "divide(1, 0)",
        "divide(9, 3)",
        "power(2, 10)",
        "add('a', 1)",
    ) == [
        {"result": 5},
        {"result": -1.5},
        {"error": "Both inputs must be numbers"},
        {"error": "Cannot divide by zero"},
        {"result": 3.0},
        {"result": 1024},
        {"error": "Both inputs must be numbers"},
    ]
    assert run(env, "mean([1, 2, 3])", "mean([])", "mean(['a'])") == [
        {"result": 2.0},
        {"error": "Cannot calculate mean of an empty list"},
        {"error": "All elements in the list must be numbers"},
    ]
    assert run(env, "standard_deviation([2, 4, 4, 4, 5, 5, 7, 9])", "standard_deviation([])") == [
        {"result": 2.0},
        {"error": "Cannot calculate standard deviation of an empty list"},
    ]
    assert run(
        env,
        "si_unit_conversion(1, 'km', 'm')",
        "si_unit_conversion('1', 'km', 'm')",
        "si_unit_conversion(1, 'km', 'mile')",
    ) == [
        {"result": 1000.0},
        {"error": "Value must be a number"},
        {"error": "Conversion from 'km' to 'mile' is not supported"},
    ]
    assert run(
        env,
        "imperial_si_conversion(100, 'celsius', 'fahrenheit')",
        "imperial_si_conversion(2, 'kg', 'kg')",
        "imperial_si_conversion(1, 'in', 'cm')",
        "imperial_si_conversion(1, 'kg', 'cm')",
    ) == [
        {"result": 212.0},
        {"result": 2},
        {"result": 2.54},
        {"error": "Conversion from 'kg' to 'cm' is not supported"},
    ]
    assert run(
        env,
        "absolute_value(-3)",
        "round_number(2.5)",
        "round_number(2.675, 2)",
        "round_number('x')",
        "percentage(1, 4)",
        "percentage(1, 0)",
    ) == [
        {"result": 3},
        {"result": 2},
        {"result": 2.67},
        {"error": "First input must be a number, second input must be an integer"},
        {"result": 25.0},
        {"error": "Whole value cannot be zero"},
    ]
    assert run(env, "min_value([3, 1])", "max_value([3, 1])", "sum_values([3, 1])") == [
        {"result": 1},
        {"result": 3},
        {"result": 4},
    ]
    assert run(env, "min_value([])", "max_value([])", "sum_values([1, 'a'])") == [
        {"error": "Cannot find minimum of an empty list"},
        {"error": "Cannot find maximum of an empty list"},
        {"error": "All elements in the list must be numbers"},
    ]


def test_math_refuses_unbounded_work():
    env = env_for("MathAPI")
    assert "error" in run(env, "logarithm(10, 2, 1000000000)")[0]
    assert "error" in run(env, "square_root(2, 1000000000)")[0]
    assert run(env, "power(10, 100000000)") == [{"error": "Result too large to compute"}]


# -- messages -----------------------------------------------------------------------------------


def test_messages():
    env = env_for("MessageAPI")
    no_user = {"error": "No user is currently logged in."}
    assert run(
        env, "send_message('USR002', 'x')", "view_messages_sent()", "get_message_stats()"
    ) == [
        no_user,
        no_user,
        no_user,
    ]
    assert run(env, "delete_message('USR002')", "search_messages('x')") == [no_user, no_user]
    assert run(env, "list_users()", "get_user_id('Bob')", "get_user_id('Zed')") == [
        {"user_list": ["Alice", "Bob", "Catherine", "Daniel"]},
        {"user_id": "USR002"},
        {"error": "User 'Zed' not found in the workspace."},
    ]
    assert run(env, "message_get_login_status()", "message_login('USR9')") == [
        {"login_status": False},
        {"login_status": False, "message": "User ID 'USR9' not found."},
    ]
    assert run(env, "message_login('USR001')", "send_message('USR002', 'hi')") == [
        {"login_status": True, "message": "User 'USR001' logged in successfully."},
        {
            "sent_status": True,
            "message_id": {"new_id": 67410},  # the documented first id for the default seed
            "message": "Message sent to 'USR002' successfully.",
        },
    ]
    assert run(env, "send_message('USR9', 'x')", "search_messages('UPLOAD')") == [
        {"error": "Receiver ID 'USR9' not found."},
        {
            "results": [
                {"receiver_id": "USR003", "message": "Could you upload the file?"},
                {"receiver_id": "USR004", "message": "Could you upload the file?"},
            ]
        },
    ]
    assert run(env, "view_messages_sent()", "get_message_stats()") == [
        {
            "messages": {
                "USR002": ["My name is Alice. I want to connect.", "hi"],
                "USR003": ["Could you upload the file?"],
                "USR004": ["Could you upload the file?"],
            }
        },
        {"stats": {"received_count": 4, "total_contacts": 3}},
    ]
    assert run(env, "delete_message('USR002')", "delete_message('USR9')") == [
        {
            "deleted_status": True,
            "receiver_id": "USR002",
            "message": "Receiver USR002's latest message deleted successfully.",
        },
        {"error": "Receiver ID USR9 not found."},
    ]
    api = env.instances["MessageAPI"]
    assert api.inbox[0] == {"USR002": "My name is Alice. I want to connect."}
    assert api.message_count == 4  # deleting does not decrement the count
    assert run(env, "add_contact('Eve')", "add_contact('Eve')") == [
        {"added_status": True, "user_id": "USR005", "message": "Contact 'Eve' added successfully."},
        {"error": "User name 'Eve' already exists."},
    ]
    taken = env_for("MessageAPI", {"user_map": {"A": "USR002"}, "user_count": 1})
    assert run(taken, "add_contact('B')") == [{"error": "User ID 'USR002' already exists."}]
    assert taken.instances["MessageAPI"].user_count == 2


# -- posting ------------------------------------------------------------------------------------


def test_posting():
    env = env_for(
        "TwitterAPI",
        {"tweets": {"0": {"id": 0, "username": "x", "content": "Hi All", "tags": ["#t"], "mentions": []}},
         "tweet_counter": 1, "comments": {"0": [{"username": "y", "content": "c"}]}},
    )  # fmt: skip
    for call, action in (
        ("post_tweet('x')", "posting"),
        ("retweet(0)", "retweeting"),
        ("comment(0, 'c')", "commenting"),
        ("follow_user('z')", "following"),
        ("list_all_following()", "listing following"),
        ("unfollow_user('z')", "unfollowing"),
    ):
        assert run(env, call) == [
            {"error": f"User not authenticated. Please authenticate before {action}."}
        ]
    assert run(env, "authenticate_twitter('john', 'bad')", "posting_get_login_status()") == [
        {"authentication_status": False},
        {"login_status": False},
    ]
    assert run(env, "authenticate_twitter('john', 'john123')") == [{"authentication_status": True}]
    assert run(env, "post_tweet('Hello', tags=['#a'])") == [
        {"id": 1, "username": "john", "content": "Hello", "tags": ["#a"], "mentions": []}
    ]
    assert run(env, "retweet(1)", "retweet(1)", "retweet(7)") == [
        {"retweet_status": "Successfully retweeted"},
        {"retweet_status": "Already retweeted"},
        {"error": "Tweet with ID 7 not found."},
    ]
    assert run(env, "comment(1, 'nice')", "get_tweet_comments(1)", "get_tweet_comments(0)") == [
        {"comment_status": "Comment added successfully"},
        [{"username": "john", "content": "nice"}],
        [],  # quirk kept: scenario comments keep string keys and are not found
    ]
    assert run(env, "mention(1, ['ann'])", "mention(9, ['ann'])", "get_tweet(1)") == [
        {"mention_status": "Users mentioned successfully"},
        {"error": "Tweet with ID 9 not found."},
        {"id": 1, "username": "john", "content": "Hello", "tags": ["#a"], "mentions": ["ann"]},
    ]
    # A tweet posted without mentions has its own list (the upstream default is shared).
    assert run(env, "post_tweet('Other')")[0]["mentions"] == []
    assert run(env, "follow_user('alice')", "follow_user('z')", "list_all_following()") == [
        {"follow_status": False},
        {"follow_status": True},
        {"following_list": ["alice", "bob", "z"]},
    ]
    assert run(env, "unfollow_user('z')", "unfollow_user('z')") == [
        {"unfollow_status": True},
        {"unfollow_status": False},
    ]
    assert [t["id"] for t in run(env, "get_user_tweets('john')")[0]] == [1, 2]
    assert [t["id"] for t in run(env, "search_tweets('hi')")[0]] == [0]
    assert [t["id"] for t in run(env, "search_tweets('#T')")[0]] == [0]
    assert run(env, "get_user_stats('john')", "get_user_stats('x')") == [
        {"tweet_count": 2, "following_count": 2, "retweet_count": 1},
        {"tweet_count": 1, "following_count": 0, "retweet_count": 0},
    ]
    assert run(env, "get_tweet(5)") == [{"error": "Tweet with ID 5 not found."}]


# -- tickets ------------------------------------------------------------------------------------


def test_tickets():
    env = env_for("TicketAPI")
    assert run(env, "create_ticket('t')", "get_user_tickets()", "logout()") == [
        {"error": "User not authenticated. Please log in to create a ticket."},
        [{"error": "User not authenticated. Please log in to view tickets."}],
        {"success": False},
    ]
    assert run(env, "ticket_login('', 'x')", "ticket_login('ann', 'pw')") == [
        {"success": False},
        {"success": True},
    ]
    assert run(env, "ticket_get_login_status()", "create_ticket('t', priority=9)") == [
        {"login_status": True},
        {"error": "Invalid priority. Priority must be between 1 and 5."},
    ]
    ticket = {
        "id": 1,
        "title": "t",
        "description": "d",
        "status": "Open",
        "priority": 2,
        "created_by": "ann",
    }
    assert run(env, "create_ticket('t', 'd', 2)", "get_ticket(1)", "get_ticket(5)") == [
        ticket,
        ticket,
        {"error": "Ticket with ID 5 not found."},
    ]
    assert run(env, "edit_ticket(1, {'title': 'T', 'priority': None})", "get_ticket(1)") == [
        {"status": "Ticket 1 has been updated successfully."},
        {**ticket, "title": "T"},
    ]
    assert run(env, "edit_ticket(1, {'owner': 'x'})", "edit_ticket(3, {})") == [
        {"error": "Invalid fields for update: owner"},
        {"error": "Ticket with ID 3 not found."},
    ]
    assert run(env, "resolve_ticket(1, 'fixed')", "resolve_ticket(1, 'again')") == [
        {"status": "Ticket 1 has been resolved successfully."},
        {"error": "Ticket with ID 1 is already resolved."},
    ]
    assert run(env, "close_ticket(1)", "close_ticket(1)", "close_ticket(4)") == [
        {"status": "Ticket 1 has been closed successfully."},
        {"error": "Ticket with ID 1 is already closed."},
        {"error": "Ticket with ID 4 not found."},
    ]
    assert [t["id"] for t in run(env, "get_user_tickets('closed')")[0]] == [1]
    assert run(env, "get_user_tickets('open')", "logout()") == [[], {"success": True}]


# -- trading ------------------------------------------------------------------------------------


def test_trading_public_information():
    env = env_for("TradingBot")
    assert run(env, "get_current_time()", "get_symbol_by_name('Apple')") == [
        {"current_time": "10:30 AM"},
        {"symbol": "AAPL"},
    ]
    assert run(env, "get_symbol_by_name('Foo')", "get_stock_info('XXX')") == [
        {"symbol": "Stock not found"},
        {"error": "Stock with symbol 'XXX' not found."},
    ]
    assert run(env, "get_stock_info('NVDA')") == [
        {
            "price": 220.34,
            "percent_change": 0.34,
            "volume": 1.234,
            "MA(5)": 220.45,
            "MA(20)": 220.67,
        }
    ]
    assert run(env, "get_order_details(1)") == [
        {"error": "Order with ID 1 not found.Here is the list of orders_id: [12345, 12446]"}
    ]
    assert run(env, "cancel_order(12345)", "cancel_order(12446)", "cancel_order(1)") == [
        {"error": "Can't cancel order 12345. Order is already completed."},
        {"order_id": 12446, "status": "Cancelled"},
        {"error": "Order with ID 1 not found."},
    ]
    assert run(env, "get_available_stocks('Automobile')", "get_available_stocks('Food')") == [
        {"stock_list": ["TSLA", "F", "GM"]},
        {"stock_list": []},
    ]
    assert run(env, "filter_stocks_by_price(['AAPL', 'ZETA', 'NOPE'], 0, 300)") == [
        {"filtered_stocks": ["AAPL", "ZETA", "NOPE"]}  # unknown symbols count as price 0
    ]
    assert run(env, "add_to_watchlist('AAPL')", "add_to_watchlist('NOPE')") == [
        {"watchlist": ["NVDA", "AAPL"]},
        {"watchlist": ["NVDA", "AAPL"]},
    ]
    assert run(env, "notify_price_change(['NVDA', 'MSFT'], 0.3)") == [
        {"notification": "Stocks NVDA have significant price changes."}
    ]
    assert run(env, "notify_price_change(['MSFT'], 0.3)") == [
        {"notification": "No significant price changes in the selected stocks."}
    ]


def test_trading_account():
    env = env_for("TradingBot", {"market_status": "Open"})
    for call, action in (
        ("place_order('Buy', 'AAPL', 1, 1)", "place an order"),
        ("withdraw_funds(1)", "make a transaction"),
        ("get_account_info()", "view account information"),
        ("fund_account(1)", "fund the account"),
        ("remove_stock_from_watchlist('NVDA')", "modify the watchlist"),
    ):
        assert run(env, call) == [{"error": f"User not authenticated. Please log in to {action}."}]
    assert run(env, "get_watchlist()", "get_order_history()", "trading_logout()") == [
        ["Error: User not authenticated. Please log in to view the watchlist."],
        [{"error": "User not authenticated. Please log in to view order history."}],
        {"status": "No user is currently logged in"},
    ]
    assert run(env, "trading_login('u', 'p')", "trading_login('u', 'p')") == [
        {"status": "Logged in successfully"},
        {"status": "Already logged in"},
    ]
    assert run(env, "trading_get_login_status()", "place_order('Buy', 'XX', 1, 1)") == [
        {"status": True},
        {"error": "Invalid stock symbol: XX"},
    ]
    assert run(env, "place_order('Buy', 'AAPL', 0, 1)", "place_order('buy', 'AAPL', 500, 100)") == [
        {"error": "Price and amount must be positive values."},
        {"error": "Insufficient funds: required $50000.00 but only $10000.00 available."},
    ]
    assert run(env, "place_order('Sell', 'AAPL', 200, 100)", "get_order_history()") == [
        {
            "order_id": 12446,
            "order_type": "Sell",
            "status": "Pending",
            "price": 200.0,
            "amount": 100,
        },
        {"history": [12345, 12446]},  # the default counter equals an existing id
    ]
    assert run(env, "fund_account(0)", "fund_account(500)") == [
        {"error": "Funding amount must be positive."},
        {"status": "Account funded successfully", "new_balance": 10500.0},
    ]
    assert run(env, "withdraw_funds(-1)", "withdraw_funds(1e9)", "withdraw_funds(100)") == [
        {"error": "Transaction amount must be positive."},
        {"error": "Insufficient funds for withdrawal."},
        {"status": "Withdrawal successful", "new_balance": 10400.0},
    ]
    history = run(env, "get_transaction_history()")[0]["transaction_history"]
    assert history[0] == {"type": "deposit", "amount": 500, "timestamp": "2024-09-02 05:40:15"}
    assert [t["type"] for t in history] == ["deposit", "withdrawal"]
    assert run(env, "get_transaction_history('2030-01-01')") == [{"transaction_history": []}]
    assert run(env, "get_account_info()")[0]["balance"] == 10400.0
    assert run(
        env, "remove_stock_from_watchlist('NVDA')", "remove_stock_from_watchlist('NVDA')"
    ) == [
        {"status": "Stock NVDA removed from watchlist successfully."},
        {"error": "Stock NVDA not found in watchlist."},
    ]
    assert run(env, "get_watchlist()", "trading_logout()") == [
        {"watchlist": []},
        {"status": "Logged out successfully"},
    ]
    closed = env_for("TradingBot", {"authenticated": True})
    assert run(closed, "withdraw_funds(1)") == [
        {"error": "Market is closed. Transactions are not allowed."}
    ]


def test_trading_long_context(data_source):
    tables = load_long_context(data_source.unpacked_root)
    env = env_for("TradingBot", {"authenticated": True}, tables)
    assert run(env, "get_stock_info('AAPL')")[0]["MA(5)"] == tables["MA_5_EXTENSION"]
    details = run(env, "get_order_details(12345)")[0]["metadata"]
    assert set(details) == set(tables["ORDER_DETAIL_EXTENSION"])
    # A plain list in long-context mode (the table holds an Ellipsis, rendered as upstream).
    assert env.execute(["get_watchlist()"]) == [str(["NVDA", *tables["WATCH_LIST_EXTENSION"]])]
    assert len(run(env, "get_transaction_history()")[0]["transaction_history"]) == 1000
    stocks = run(env, "get_available_stocks('Technology')")[0]["stock_list"]
    assert stocks == ["AAPL", "GOOG", "MSFT", "NVDA", *tables["TECHNOLOGY_EXTENSION"]]


# -- travel -------------------------------------------------------------------------------------


def test_travel_session_and_cards():
    env = env_for("TravelAPI")
    assert run(env, "travel_get_login_status()", "get_budget_fiscal_year()") == [
        {"status": False},
        {"budget_fiscal_year": "2018"},
    ]
    assert run(env, "register_credit_card('t', '4111', '12/30', 'A B', 123)") == [
        {"error": "Token not initialized"}
    ]
    assert run(env, "authenticate_travel('c', 's', 'r', 'read_write', 'Ann', 'Lee')") == [
        {"expires_in": 2, "access_token": "251675", "token_type": "Bearer", "scope": "read_write"}
    ]
    assert run(env, "register_credit_card('bad', '4111', '12/30', 'A B', 123)") == [
        {"error": "Invalid access token"}
    ]
    assert run(env, "register_credit_card('251675', '4111', '12/30', 'Ann Lee', 123)") == [
        {"card_id": "391310425148"}
    ]
    card = env.instances["TravelAPI"].credit_card_list["391310425148"]
    assert run(env, "get_credit_card_balance('251675', '391310425148')") == [
        {"card_balance": card["balance"]}
    ]
    assert run(env, "get_credit_card_balance('251675', 'x')") == [
        {"error": "Card not registered. Here are a list of card_id's: ['391310425148']"}
    ]
    assert run(env, "get_all_credit_cards()")[0]["credit_card_list"]["391310425148"] == card
    expired = env_for("TravelAPI", {"token_expires_in": 0, "access_token": "t"})
    assert run(expired, "get_booking_history('t')", "set_budget_limit('t', 5)") == [
        {"error": "Token expired"},
        {"error": "Token expired"},
    ]


CARDS = {
    "c1": {
        "card_number": "1",
        "expiration_date": "x",
        "cardholder_name": "Ann Lee",
        "card_verification_number": 1,
        "balance": 5000.0,
    }
}


def test_travel_flights_and_bookings():
    env = env_for(
        "TravelAPI",
        {"credit_card_list": CARDS, "access_token": "t", "token_expires_in": 2,
         "user_first_name": "Ann", "user_last_name": "Lee"},
    )  # fmt: skip
    # 2024-11-15: digit sum 14 (even) doubles the fare; business doubles it again.
    assert run(env, "get_flight_cost('SFO', 'LAX', '2024-11-15', 'business')") == [
        {"travel_cost_list": [800.0]}
    ]
    assert run(env, "get_flight_cost('LAX', 'XXX', '2024-11-15', 'economy')") == [
        "Error during execution: No available route for the given airports."
    ]
    assert run(env, "get_flight_cost('SFO', 'LAX', '2024-11-15', 'coach')") == [
        "Error during execution: Invalid travel class. Options are: economy, business, first."
    ]

    def booking_error(call: str) -> str:
        result = run(env, call)[0]
        assert result["booking_status"] is False
        return result["error"]

    assert booking_error("book_flight('bad', 'c1', '2024-11-15', 'SFO', 'LAX', 'economy')") == (
        "Invalid access token"
    )
    assert booking_error("book_flight('t', 'c9', '2024-11-15', 'SFO', 'LAX', 'economy')") == (
        "Card not registered"
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'XXX', 'LAX', 'economy')") == (
        "Invalid departure airport code: XXX"
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'XXX', 'economy')") == (
        "Invalid destination airport code: XXX"
    )
    assert booking_error("book_flight('t', 'c1', '15/11/2024', 'SFO', 'LAX', 'economy')") == (
        "Invalid date format. Use YYYY-MM-DD."
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'LAX', 'coach')").startswith(
        "Invalid travel class. Must be one of {"
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'LAX', 'CIA', 'economy')") == (
        "No available route for the given airports."
    )
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'CIA', 'first')") == (
        "Insufficient funds"
    )
    booked = run(env, "book_flight('t', 'c1', '2024-11-15', 'SFO', 'LAX', 'economy')")[0]
    assert booked["booking_status"] is True and booked["booking_history"] == {}
    booking_id = booked["booking_id"]
    api = env.instances["TravelAPI"]
    assert api.credit_card_list["c1"]["balance"] == 4600.0
    invoice = run(env, f"retrieve_invoice('t', '{booking_id}')")[0]["invoice"]
    assert invoice["travel_cost"] == 400.0 and invoice["booking_id"] == booking_id
    assert run(env, "retrieve_invoice('t', 'nope')") == [{"error": "Booking not found"}]
    assert list(run(env, "get_booking_history('t')")[0]["booking_history"]) == [booking_id]
    assert run(env, f"contact_customer_support('{booking_id}', 'hi')")[0][
        "customer_support_message"
    ].startswith("Thank you for contacting customer support.")
    assert run(env, "contact_customer_support('nope', 'hi')") == [{"error": "Booking not found"}]
    assert run(env, f"purchase_insurance('t', 'full', '{booking_id}', 100, 'c1')")[0][
        "insurance_status"
    ]
    assert api.credit_card_list["c1"]["balance"] == 4500.0
    assert run(env, "purchase_insurance('t', 'full', 'nope', 100, 'c1')") == [
        {"insurance_status": False, "error": "Booking not found"}
    ]
    assert run(env, f"purchase_insurance('t', 'full', '{booking_id}', 100, 'c9')") == [
        {"insurance_status": False, "error": "Credit card not registered"}
    ]
    assert run(env, "set_budget_limit('t', '50')") == [{"budget_limit": 50.0}]
    assert run(env, f"purchase_insurance('t', 'full', '{booking_id}', 100, 'c1')") == [
        {"insurance_status": False, "error": "Exceeded budget limit"}
    ]
    assert run(env, f"cancel_booking('t', '{booking_id}')", "cancel_booking('t', 'x')") == [
        {"cancel_status": True},
        {"cancel_status": False, "error": "Booking not found"},
    ]
    assert api.credit_card_list["c1"]["balance"] == 4900.0
    api.budget_limit = 10_000.0
    assert booking_error("book_flight('t', 'c1', '2024-11-15', 'SFO', 'LAX', 'economy')") == (
        "Balance is less than budget limit"
    )


def test_travel_reference_data_and_verification():
    env = env_for("TravelAPI", {"user_first_name": "Ann", "user_last_name": "Lee"})
    assert env.execute(["list_all_airports()"])[0].startswith("['RMS', 'SBK'")
    assert run(
        env, "get_nearest_airport_by_city('Rivermist')", "get_nearest_airport_by_city('X')"
    ) == [
        {"nearest_airport": "RMS"},
        {"nearest_airport": "Unknown"},
    ]
    assert run(
        env, "compute_exchange_rate('USD', 'EUR', 10)", "compute_exchange_rate('JPY', 'USD', 1000)"
    ) == [
        {"exchanged_value": 8.0},
        {"exchanged_value": 9.09},
    ]
    assert run(env, "compute_exchange_rate('USD', 'USD', 1)") == [
        "Error during execution: No available exchange rate for the given currencies."
    ]

    def verify(first: str, last: str, born: str, passport: str) -> dict[str, Any]:
        return run(
            env, f"verify_traveler_information('{first}', '{last}', '{born}', '{passport}')"
        )[0]

    assert verify("Ann", "Lee", "1990-01-01", "US123") == {"verification_status": True}
    assert verify("Bob", "Lee", "1990-01-01", "US123")["verification_failure"] == (
        "Cannot book flight information for another user.Expected Ann Lee, got Bob Lee"
    )
    assert verify("Ann", "Lee", "01/01/1990", "US123")["verification_failure"] == (
        "Invalid date of birth format. Please use YYYY-MM-DD."
    )
    assert verify("Ann", "Lee", "2099-01-01", "US123")["verification_failure"] == (
        "Traveler must be at least 18 years old."
    )
    assert verify("Ann", "Lee", "1990-01-01", "UK123")["verification_failure"] == (
        "Passport must be issued by the United States."
    )


def test_travel_long_context_cards_are_per_instance(data_source):
    tables = load_long_context(data_source.unpacked_root)
    first = env_for("TravelAPI", {}, tables).instances["TravelAPI"]
    second = env_for("TravelAPI", {}, tables).instances["TravelAPI"]
    assert set(first.credit_card_list) == set(tables["CREDIT_CARD_EXTENSION"])
    card_id = next(iter(first.credit_card_list))
    first.credit_card_list[card_id]["balance"] = -1
    assert second.credit_card_list[card_id]["balance"] != -1
    assert tables["CREDIT_CARD_EXTENSION"][card_id]["balance"] != -1


# -- vehicle ------------------------------------------------------------------------------------


def test_vehicle_engine_and_doors():
    env = env_for("VehicleControlAPI")
    assert run(env, "startEngine('START')") == [
        {
            "error": "All doors must be locked before starting the engine. Here are the unlocked "
            "doors: driver, passenger, rear_left, rear_right"
        }
    ]
    assert run(env, "lockDoors(False, ['driver', 'passenger', 'rear_left', 'rear_right'])") == [
        {"lockStatus": "locked", "remainingUnlockedDoors": 0}
    ]
    assert run(env, "lockDoors(unlock=False, door=['driver'])") == [
        {"lockStatus": "locked", "remainingUnlockedDoors": 0}
    ]
    assert run(env, "lockDoors(unlock=True, door=['trunk'])") == ["Error during execution: 'trunk'"]
    assert run(env, "startEngine('START')", "pressBrakePedal(0.5)", "startEngine('START')") == [
        {"error": "Brake pedal needs to be pressed when starting the engine."},
        {"brakePedalStatus": "pressed", "brakePedalForce": 500.0},
        {"error": "Must press the brake fully before starting the engine."},
    ]
    assert run(env, "pressBrakePedal(2)", "pressBrakePedal(1)", "startEngine('GO')") == [
        {"error": "Pedal position must be between 0 and 1."},
        {"brakePedalStatus": "pressed", "brakePedalForce": 1000.0},
        {"error": "Invalid ignition mode."},
    ]
    assert run(env, "startEngine('START')") == [
        {"engineState": "running", "fuelLevel": 0.0, "batteryVoltage": 12.6}
    ]
    assert run(env, "displayCarStatus('engine')", "displayCarStatus('x')") == [
        {"engineState": "running"},
        {"error": "Invalid option"},
    ]
    assert run(env, "releaseBrakePedal()", "pressBrakePedal(0)") == [
        {"brakePedalStatus": "released", "brakePedalForce": 0.0},
        {"brakePedalStatus": "released", "brakePedalForce": 0.0},
    ]
    assert run(env, "lockDoors(True, ['driver'])") == [
        {"lockStatus": "unlocked", "remainingUnlockedDoors": 1}
    ]


def test_vehicle_scenario_recomputes_unlocked_doors():
    doors = {
        "driver": "locked",
        "passenger": "locked",
        "rear_left": "unlocked",
        "rear_right": "locked",
    }
    env = env_for("VehicleControlAPI", {"doorStatus": doors, "remainingUnlockedDoors": 4,
                                        "engineState": "running", "brakePedalForce": 1000.0})  # fmt: skip
    api = env.instances["VehicleControlAPI"]
    assert api.remainingUnlockedDoors == 1 and api.engine_state == "running"
    assert run(env, "displayCarStatus('brakePedal')") == [
        {"brakePedalStatus": "released", "brakePedalForce": 1000.0}
    ]


def test_vehicle_fuel_climate_lights_brakes():
    env = env_for("VehicleControlAPI", {"fuelLevel": 10.0})
    assert run(env, "fillFuelTank(-1)", "fillFuelTank(45)", "fillFuelTank(5)") == [
        {"error": "Fuel amount cannot be negative."},
        {"error": "Cannot fill gas above the tank capacity."},
        {"fuelLevel": 15.0},
    ]
    assert run(env, "adjustClimateControl(68, 'fahrenheit', 30, 'cool')") == [
        {"currentACTemperature": 68, "climateMode": "cool", "humidityLevel": 50.0}
    ]
    assert env.instances["VehicleControlAPI"].acTemperature == 20.0
    assert run(env, "adjustClimateControl(20, fanSpeed=101)", "displayCarStatus('climate')") == [
        {"error": "Fan speed must be between 0 and 100."},
        {
            "currentACTemperature": 20.0,
            "fanSpeed": 30,
            "climateMode": "cool",
            "humidityLevel": 50.0,
        },
    ]
    assert run(env, "setHeadlights('auto')", "setHeadlights('on')", "setHeadlights('x')") == [
        {"headlightStatus": "off"},
        {"headlightStatus": "on"},
        {"error": "Invalid headlight mode."},
    ]
    assert run(env, "activateParkingBrake('engage')", "activateParkingBrake('x')") == [
        {"parkingBrakeStatus": "engaged", "_parkingBrakeForce": 500.0, "_slopeAngle": 10.0},
        {"error": "Invalid mode"},
    ]
    assert run(env, "displayCarStatus('parkingBrake')", "activateParkingBrake('release')") == [
        {"parkingBrakeStatus": "engaged", "parkingBrakeForce": 500.0, "slopeAngle": 10.0},
        {"parkingBrakeStatus": "released", "_parkingBrakeForce": 0.0, "_slopeAngle": 10.0},
    ]
    assert run(env, "displayCarStatus('fuel')", "displayCarStatus('battery')") == [
        {"fuelLevel": 15.0},
        {"batteryVoltage": 12.6},
    ]
    assert run(env, "displayCarStatus('doors')")[0]["doorStatus"]["driver"] == "unlocked"
    assert run(env, "displayCarStatus('headlights')") == [{"headlightStatus": "on"}]


def test_vehicle_cruise_navigation_and_info():
    env = env_for("VehicleControlAPI", {"fuelLevel": 10.0})
    assert run(env, "setCruiseControl(60, True, 100)") == [
        {"error": "Start the engine before activating the cruise control."}
    ]
    env.instances["VehicleControlAPI"].engine_state = "running"
    assert run(env, "setCruiseControl(62, True, 80)") == [{"error": "Invalid speed"}]
    assert env.instances["VehicleControlAPI"].distanceToNextVehicle == 80.0  # stored first
    assert run(env, "setCruiseControl(60, True, 100)", "setCruiseControl(0, False, 20)") == [
        {"cruiseStatus": "active", "currentSpeed": 60.0, "distanceToNextVehicle": 100.0},
        {"cruiseStatus": "inactive", "currentSpeed": 0.0, "distanceToNextVehicle": 20.0},
    ]
    assert run(env, "get_current_speed()", "get_outside_temperature_from_google()") == [
        {"currentSpeed": 111.92365689097284},  # documented draws for the default seed
        {"outsideTemperature": 31.29968928699752},
    ]
    assert run(env, "get_outside_temperature_from_weather_com()", "display_log(['a'])") == [
        {"error": 404},
        {"log": ["a"]},
    ]
    assert run(
        env,
        "estimate_drive_feasibility_by_mileage(200)",
        "estimate_drive_feasibility_by_mileage(201)",
    ) == [{"canDrive": True}, {"canDrive": False}]
    assert run(env, "liter_to_gallon(10)", "gallon_to_liter(2)") == [
        {"gallon": 10 * 0.264172},
        {"liter": 2 * 3.78541},
    ]
    assert run(env, "estimate_distance('74532', '83214')", "estimate_distance('1', '2')") == [
        {"distance": 750.0},
        {"error": "distance not found in database."},
    ]
    assert run(env, "get_zipcode_based_on_city('Rivermist')", "get_zipcode_based_on_city('X')") == [
        {"zipcode": "83214"},
        {"zipcode": "00000"},
    ]
    assert run(env, "set_navigation('Home')") == [{"status": "Navigating to Home"}]
    assert env.instances["VehicleControlAPI"].destination == "Home"
    assert run(env, "check_tire_pressure()") == [
        {
            "frontLeftTirePressure": 32.0,
            "frontRightTirePressure": 32.0,
            "rearLeftTirePressure": 30.0,
            "rearRightTirePressure": 30.0,
            "healthy_tire_pressure": True,
            "car_info": {},
        }
    ]
    assert run(env, "find_nearest_tire_shop()") == [
        {"shopLocation": "456 Oakwood Avenue, Rivermist, 83214"}
    ]


def test_vehicle_long_context(data_source):
    tables = load_long_context(data_source.unpacked_root)
    env = env_for("VehicleControlAPI", {}, tables)
    status = run(env, "displayCarStatus('fuel')")[0]
    assert list(status) == ["metadata", "fuelLevel"]
    assert (
        run(env, "activateParkingBrake('engage')")[0]["parkingBrakeInstruction"]
        == (tables["PARKING_BRAKE_INSTRUCTION"])
    )
    weather = run(env, "get_outside_temperature_from_google()")[0]
    assert weather["outsideTemperature"] == random.Random(141053).uniform(-10.0, 40.0)
    assert "outsideTemperature" not in tables["LONG_WEATHER_EXTENSION"]  # the table is not mutated
    assert (
        run(env, "estimate_distance('1', '2')")[0]["intermediaryCities"]
        == tables["INTERMEDIARY_CITIES"]
    )
