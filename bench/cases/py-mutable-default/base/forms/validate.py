"""Form validation."""


def require(form: dict[str, str], field: str) -> list[str]:
    if not form.get(field, "").strip():
        return [f"{field} is required"]
    return []
