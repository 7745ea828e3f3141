"""A thin client of the payment gateway."""


class GatewayError(Exception):
    """The gateway refused or failed a request."""


class Gateway:
    def __init__(self, session, base_url: str) -> None:
        self._session = session
        self._base_url = base_url

    def capture(self, payment_id: str, amount_cents: int) -> str:
        response = self._session.post(
            f"{self._base_url}/payments/{payment_id}/capture",
            json={"amount": amount_cents},
            timeout=10,
        )
        if response.status_code != 200:
            raise GatewayError(f"capture failed: {response.status_code}")
        return response.json()["capture_id"]
