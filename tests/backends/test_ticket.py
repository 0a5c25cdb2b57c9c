"""The ticketing application."""

from __future__ import annotations

from backend_helpers import env_for, run


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
