"""User lookup."""

_USERS = {1: {"id": 1, "name": "Ada", "email": "ada@example.com"}}


def find_user(user_id: int) -> dict | None:
    return _USERS.get(user_id)
