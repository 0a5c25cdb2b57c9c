"""A workspace messenger (``MessageAPI``)."""

from __future__ import annotations

from typing import Any

from pytest_bfcl.backends.base import Backend

_NO_USER = {"error": "No user is currently logged in."}


class MessageAPI(Backend):
    DEFAULTS = {
        "generated_ids": set(),
        "user_count": 4,
        "user_map": {"Alice": "USR001", "Bob": "USR002", "Catherine": "USR003", "Daniel": "USR004"},
        "inbox": [
            {"USR002": "My name is Alice. I want to connect."},
            {"USR003": "Could you upload the file?"},
            {"USR004": "Could you upload the file?"},
        ],
        "message_count": 3,
        "current_user": None,
    }
    SEED = 200191

    # The state fields of DEFAULTS, set on every instance by Backend.
    generated_ids: set[int]
    user_count: int
    user_map: dict[str, str]
    inbox: list[dict[str, str]]
    message_count: int
    current_user: str | None

    def _new_message_id(self) -> dict[str, int]:
        new_id = self._random.randint(10000, 99999)
        while new_id in self.generated_ids:
            new_id = self._random.randint(10000, 99999)
        self.generated_ids.add(new_id)
        return {"new_id": new_id}

    def list_users(self) -> dict[str, list[str]]:
        return {"user_list": list(self.user_map)}

    def get_user_id(self, user: str) -> dict[str, Any]:
        if user not in self.user_map:
            return {"error": f"User '{user}' not found in the workspace."}
        return {"user_id": self.user_map[user]}

    def message_login(self, user_id: str) -> dict[str, Any]:
        if user_id not in self.user_map.values():
            return {"login_status": False, "message": f"User ID '{user_id}' not found."}
        self.current_user = user_id
        return {"login_status": True, "message": f"User '{user_id}' logged in successfully."}

    def message_get_login_status(self) -> dict[str, bool]:
        return {"login_status": bool(self.current_user)}

    def send_message(self, receiver_id: str, message: str) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NO_USER)
        if receiver_id not in self.user_map.values():
            return {"error": f"Receiver ID '{receiver_id}' not found."}
        message_id = self._new_message_id()
        self.inbox.append({receiver_id: message})
        self.message_count += 1
        return {
            "sent_status": True,
            "message_id": message_id,
            "message": f"Message sent to '{receiver_id}' successfully.",
        }

    def delete_message(self, receiver_id: str) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NO_USER)
        for item in reversed(self.inbox):
            receiver = next(iter(item))
            if receiver == receiver_id:
                self.inbox.remove(item)  # the first equal entry, like the benchmark's API
                return {
                    "deleted_status": True,
                    "receiver_id": receiver,
                    "message": f"Receiver {receiver_id}'s latest message deleted successfully.",
                }
        return {"error": f"Receiver ID {receiver_id} not found."}

    def view_messages_sent(self) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NO_USER)
        sent: dict[str, list[str]] = {}
        for item in self.inbox:
            receiver, text = next(iter(item.items()))
            sent.setdefault(receiver, []).append(text)
        return {"messages": sent}

    def add_contact(self, user_name: str) -> dict[str, Any]:
        if user_name in self.user_map:
            return {"error": f"User name '{user_name}' already exists."}
        self.user_count += 1
        user_id = f"USR{str(self.user_count).zfill(3)}"
        if user_id in self.user_map.values():
            return {"error": f"User ID '{user_id}' already exists."}
        self.user_map[user_name] = user_id
        return {
            "added_status": True,
            "user_id": user_id,
            "message": f"Contact '{user_name}' added successfully.",
        }

    def search_messages(self, keyword: str) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NO_USER)
        needle = keyword.lower()
        results = []
        for item in self.inbox:
            receiver, text = next(iter(item.items()))
            if needle in text.lower():
                results.append({"receiver_id": receiver, "message": text})
        return {"results": results}

    def get_message_stats(self) -> dict[str, Any]:
        if not self.current_user:
            return dict(_NO_USER)
        receivers = {next(iter(item)) for item in self.inbox}
        return {"stats": {"received_count": len(self.inbox), "total_contacts": len(receivers)}}
