"""Client and AsyncClient: the same resources, sent through httpx's sync or async client."""

from __future__ import annotations

import asyncio
import time
from typing import Any, Dict, Optional

import httpx

from ._call import Call, RetryPolicy, T, read_answer, read_rate_limit
from ._marketplace import Marketplace
from ._memories import Memories
from ._recall import Recall, StatsResource
from ._skills import Skills
from .types import RateLimit

__all__ = ["Client", "AsyncClient"]


class _Resources:
    """The API's resources, bound to one client's `_send` (which returns a value, or an awaitable of one)."""

    def __init__(self, max_retries: int, max_retry_wait: float) -> None:
        self.retry = RetryPolicy(max_retries=max_retries, max_retry_wait=max_retry_wait)
        # The X-RateLimit headers of the latest answer.
        self.rate_limit = RateLimit()
        self.memories = Memories(self._send)
        self.recall = Recall(self._send)
        self.stats = StatsResource(self._send)
        self.skills = Skills(self._send)
        self.marketplace = Marketplace(self._send)

    def _send(self, call: Call[T]) -> Any:
        raise NotImplementedError


def _http_options(base_url: str, api_key: str, timeout: float) -> Dict[str, Any]:
    return {
        "base_url": base_url.rstrip("/"),
        "headers": {"authorization": f"Bearer {api_key}", "user-agent": "agentmem-python/0.1.0"},
        "timeout": timeout,
    }


class Client(_Resources):
    """A blocking client: `Client(base_url="http://localhost:8080", api_key="amk_...")`.

    Every method returns a typed result or raises `APIError`; 429 answers are retried after their Retry-After
    (at most `max_retries` times, each wait at most `max_retry_wait` seconds). Use it as a context manager, or
    call `close()`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 30.0,
        http_client: Optional[httpx.Client] = None,
    ) -> None:
        super().__init__(max_retries, max_retry_wait)
        self._http = http_client or httpx.Client(**_http_options(base_url, api_key, timeout))

    def _send(self, call: Call[T]) -> T:
        attempt = 0
        while True:
            response = self._http.request(**call.request_args())
            self.rate_limit = read_rate_limit(response)
            delay = self.retry.delay(response, attempt)
            if delay is None:
                return read_answer(response, call, self.rate_limit)
            time.sleep(delay)
            attempt += 1

    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> "Client":
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class AsyncClient(_Resources):
    """The asyncio client: the same methods as `Client`, each to be awaited. Close it with `await aclose()`
    or `async with`."""

    def __init__(
        self,
        base_url: str,
        api_key: str,
        *,
        timeout: float = 30.0,
        max_retries: int = 2,
        max_retry_wait: float = 30.0,
        http_client: Optional[httpx.AsyncClient] = None,
    ) -> None:
        super().__init__(max_retries, max_retry_wait)
        self._http = http_client or httpx.AsyncClient(**_http_options(base_url, api_key, timeout))

    async def _send(self, call: Call[T]) -> T:  # type: ignore[override]
        attempt = 0
        while True:
            response = await self._http.request(**call.request_args())
            self.rate_limit = read_rate_limit(response)
            delay = self.retry.delay(response, attempt)
            if delay is None:
                return read_answer(response, call, self.rate_limit)
            await asyncio.sleep(delay)
            attempt += 1

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> "AsyncClient":
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()
