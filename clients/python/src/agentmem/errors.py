"""The exception every error answer of the service becomes."""

from __future__ import annotations

from typing import Any, Dict, Optional

from .types import RateLimit


class APIError(Exception):
    """An error answer: `code` as in the API's error table (`invalid_request`, `not_found`, `rate_limited`, ...),
    the HTTP `status`, and for invalid input the `field` and the `rule` it broke (`required`, `enum`, ...)."""

    def __init__(
        self,
        status: int,
        code: str,
        message: str,
        details: Optional[Dict[str, Any]] = None,
        retry_after: Optional[float] = None,
        rate_limit: Optional[RateLimit] = None,
    ) -> None:
        super().__init__(f"{code} ({status}): {message}")
        self.status = status
        self.code = code
        self.message = message
        self.details: Dict[str, Any] = details or {}
        self.field: Optional[str] = self.details.get("field")
        self.rule: Optional[str] = self.details.get("rule")
        self.retry_after = retry_after
        self.rate_limit = rate_limit
