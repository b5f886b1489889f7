"""What the sync and async clients share: a request described as data, and how its answer is read."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, Dict, Generic, Optional, TypeVar

import httpx

from .errors import APIError
from .types import RateLimit

T = TypeVar("T")


@dataclass
class Call(Generic[T]):
    """One REST request and the function that turns its JSON answer into a typed result."""

    method: str
    path: str
    parse: Callable[[Any], T]
    body: Any = None
    params: Optional[Dict[str, Any]] = None
    headers: Optional[Dict[str, str]] = None

    def request_args(self) -> Dict[str, Any]:
        args: Dict[str, Any] = {"method": self.method, "url": self.path}
        if self.body is not None:
            args["json"] = self.body
        if self.params:
            args["params"] = {k: v for k, v in self.params.items() if v is not None}
        if self.headers:
            args["headers"] = self.headers
        return args


@dataclass
class RetryPolicy:
    """429 answers are retried after their Retry-After, at most `max_retries` times, and only when the wait
    is at most `max_retry_wait` seconds (a plan's exhausted monthly quota asks for days)."""

    max_retries: int = 2
    max_retry_wait: float = 30.0

    def delay(self, response: httpx.Response, attempt: int) -> Optional[float]:
        if response.status_code != 429 or attempt >= self.max_retries:
            return None
        wait = _seconds(response.headers.get("retry-after"))
        wait = 1.0 if wait is None else wait
        return wait if wait <= self.max_retry_wait else None


def read_rate_limit(response: httpx.Response) -> RateLimit:
    h = response.headers
    return RateLimit(
        limit=_int(h.get("x-ratelimit-limit")),
        remaining=_int(h.get("x-ratelimit-remaining")),
        reset=_int(h.get("x-ratelimit-reset")),
    )


def read_answer(response: httpx.Response, call: Call[T], rate_limit: RateLimit) -> T:
    if response.is_success:
        return call.parse(response.json() if response.content else {})
    raise _error(response, rate_limit)


def _error(response: httpx.Response, rate_limit: RateLimit) -> APIError:
    try:
        error = response.json()["error"]
        code, message, details = error["code"], error.get("message", ""), error.get("details") or {}
    except (ValueError, KeyError, TypeError):
        # Not the service's error body (a proxy's page, say): keep the status and the text.
        code, message, details = ("server_error" if response.status_code >= 500 else "http_error"), response.text[:500], {}
    return APIError(
        response.status_code,
        code,
        message,
        details,
        retry_after=_seconds(response.headers.get("retry-after")),
        rate_limit=rate_limit,
    )


def _seconds(value: Optional[str]) -> Optional[float]:
    try:
        return max(0.0, float(value)) if value is not None else None
    except ValueError:
        return None


def _int(value: Optional[str]) -> Optional[int]:
    try:
        return int(value) if value is not None else None
    except ValueError:
        return None
