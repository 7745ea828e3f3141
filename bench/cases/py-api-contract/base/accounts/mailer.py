"""Outgoing mail."""

from accounts.users import find_user


def recipient(user_id: int) -> str | None:
    user = find_user(user_id)
    if user is None:
        return None
    return user["email"]
