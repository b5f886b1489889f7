import httpx
import pytest

from agentmem import APIError, Client


@pytest.fixture(scope="module")
def slow_key(admin, new_key):
    """A key admitted one request per second, with no burst: the second of two quick requests gets 429."""
    secret, key_id = new_key("slow")
    answer = admin.put(f"/api/v1/admin/keys/{key_id}/rate-limits", json={"sustainedPerSecond": 1, "burstPerSecond": 1, "burstSeconds": 1})
    answer.raise_for_status()
    return secret


def test_429_is_retried_after_retry_after(base_url, slow_key):
    statuses = []
    http = httpx.Client(base_url=base_url, headers={"authorization": f"Bearer {slow_key}"}, event_hooks={"response": [lambda r: statuses.append(r.status_code)]})
    with Client(base_url=base_url, api_key=slow_key, http_client=http) as client:
        # Calls until one was refused and retried: each call must still succeed.
        for _ in range(20):
            assert client.stats().plan
            if 429 in statuses:
                break
    assert 429 in statuses and statuses[-1] == 200


def test_retries_are_bounded(base_url, slow_key):
    for client in (Client(base_url=base_url, api_key=slow_key, max_retries=0), Client(base_url=base_url, api_key=slow_key, max_retry_wait=0.5)):
        with client, pytest.raises(APIError) as refused:
            for _ in range(20):
                client.stats()
        error = refused.value
        assert (error.status, error.code, error.retry_after) == (429, "rate_limited", 1.0)
        assert error.rate_limit.limit == 1 and error.rate_limit.remaining == 0
