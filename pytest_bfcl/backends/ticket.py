"""A support-ticket queue (``TicketAPI``)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.backends.base import Backend

_EDITABLE = ("title", "description", "status", "priority")


def _not_found(ticket_id: Any) -> dict[str, str]:
    return {"error": f"Ticket with ID {ticket_id} not found."}


class TicketAPI(Backend):
    DEFAULTS = {"ticket_queue": [], "ticket_counter": 1, "current_user": None}

    # The state fields of DEFAULTS, set on every instance by Backend.
    ticket_queue: list[dict[str, Any]]
    ticket_counter: int
    current_user: str | None

    def _find(self, ticket_id: Any) -> dict[str, Any] | None:
        return next((t for t in self.ticket_queue if t["id"] == ticket_id), None)

    def create_ticket(self, title: str, description: str = "", priority: int = 1) -> dict[str, Any]:
        if not self.current_user:
            return {"error": "User not authenticated. Please log in to create a ticket."}
        if priority < 1 or priority > 5:
            return {"error": "Invalid priority. Priority must be between 1 and 5."}
        ticket = {
            "id": self.ticket_counter,
            "title": title,
            "description": description,
            "status": "Open",
            "priority": priority,
            "created_by": self.current_user,
        }
        self.ticket_queue.append(ticket)
        self.ticket_counter += 1
        return ticket

    def get_ticket(self, ticket_id: int) -> dict[str, Any]:
        return self._find(ticket_id) or _not_found(ticket_id)

    def close_ticket(self, ticket_id: int) -> dict[str, str]:
        ticket = self._find(ticket_id)
        if not ticket:
            return _not_found(ticket_id)
        if ticket["status"] == "Closed":
            return {"error": f"Ticket with ID {ticket_id} is already closed."}
        ticket["status"] = "Closed"
        return {"status": f"Ticket {ticket_id} has been closed successfully."}

    def resolve_ticket(self, ticket_id: int, resolution: str) -> dict[str, str]:
        ticket = self._find(ticket_id)
        if not ticket:
            return _not_found(ticket_id)
        if ticket["status"] == "Resolved":
            return {"error": f"Ticket with ID {ticket_id} is already resolved."}
        ticket["status"] = "Resolved"
        ticket["resolution"] = resolution
        return {"status": f"Ticket {ticket_id} has been resolved successfully."}

    def edit_ticket(self, ticket_id: int, updates: dict[str, Any]) -> dict[str, str]:
        ticket = self._find(ticket_id)
        if not ticket:
            return _not_found(ticket_id)
        invalid = set(updates.keys()) - set(_EDITABLE)  # .keys(): fails as the reference does
        if invalid:
            # Set order, as the benchmark's API prints it (varies with the hash seed).
            return {"error": f"Invalid fields for update: {', '.join(invalid)}"}
        for key, value in updates.items():
            if value is not None:
                ticket[key] = value
        return {"status": f"Ticket {ticket_id} has been updated successfully."}

    def ticket_login(self, username: str, password: str) -> dict[str, bool]:
        if username and password:
            self.current_user = username
            return {"success": True}
        return {"success": False}

    def ticket_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def logout(self) -> dict[str, bool]:
        if self.current_user:
            self.current_user = None
            return {"success": True}
        return {"success": False}

    def get_user_tickets(self, status: str | None = None) -> list[dict[str, Any]]:
        if not self.current_user:
            return [{"error": "User not authenticated. Please log in to view tickets."}]
        tickets = [t for t in self.ticket_queue if t["created_by"] == self.current_user]
        if status:
            tickets = [t for t in tickets if t["status"].lower() == status.lower()]
        return tickets
