"""The messaging application."""

from __future__ import annotations

from backend_helpers import env_for, run


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
