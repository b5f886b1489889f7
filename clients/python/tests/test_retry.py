import asyncio

import httpx
import pytest

from agentmem import APIError, AsyncClient


@pytest.fixture(scope="module")
def slow_key(admin, new_key):
    """A key admitted one request per second, with no burst: of three requests sent at once, two get 429."""
    secret, key_id = new_key("slow")
    answer = admin.put(f"/api/v1/admin/keys/{key_id}/rate-limits", json={"sustainedPerSecond": 1, "burstPerSecond": 1, "burstSeconds": 1})
    answer.raise_for_status()
    return secret


def _three_at_once(base_url, key, **options):
    """Three stats calls sent together; returns each call's result or exception, and every status seen."""
    statuses = []

    async def scenario():
        hooks = {"response": [lambda r: _record(statuses, r)]}
        http = httpx.AsyncClient(base_url=base_url, headers={"authorization": f"Bearer {key}"}, event_hooks=hooks)
        async with AsyncClient(base_url=base_url, api_key=key, http_client=http, **options) as client:
            return await asyncio.gather(*(client.stats() for _ in range(3)), return_exceptions=True)

    return asyncio.run(scenario()), statuses


async def _record(statuses, response):
    statuses.append(response.status_code)


def test_429_is_retried_after_retry_after(base_url, slow_key):
    results, statuses = _three_at_once(base_url, slow_key, max_retries=5)
    assert all(not isinstance(r, Exception) and r.plan for r in results), results
    assert statuses.count(429) >= 2 and statuses.count(200) == 3


def test_retries_are_bounded(base_url, slow_key):
    for options in ({"max_retries": 0}, {"max_retry_wait": 0.5}):
        results, statuses = _three_at_once(base_url, slow_key, **options)
        refused = [r for r in results if isinstance(r, APIError)]
        assert len(refused) >= 2 and len(statuses) == 3, options
        error = refused[0]
        assert (error.status, error.code, error.retry_after) == (429, "rate_limited", 1.0)
        assert error.rate_limit.limit == 1 and error.rate_limit.remaining == 0
