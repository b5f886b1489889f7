"""The tests run against a real server: AGENTMEM_URL, AGENTMEM_API_KEY (an agent key) and AGENTMEM_ADMIN_KEY
(to make further keys) name it. test/clients/python-client.test.ts starts one and runs pytest."""

import os
import uuid

import httpx
import pytest

from agentmem import Client


def _env(name: str) -> str:
    value = os.environ.get(name)
    if not value:
        pytest.exit(f"{name} is not set: run these tests through test/clients/python-client.test.ts", returncode=2)
    return value


@pytest.fixture(scope="session")
def base_url() -> str:
    return _env("AGENTMEM_URL")


@pytest.fixture(scope="session")
def api_key() -> str:
    return _env("AGENTMEM_API_KEY")


@pytest.fixture(scope="session")
def client(base_url, api_key):
    with Client(base_url=base_url, api_key=api_key) as c:
        yield c


@pytest.fixture(scope="session")
def admin(base_url):
    with httpx.Client(base_url=base_url, headers={"authorization": f"Bearer {_env('AGENTMEM_ADMIN_KEY')}"}) as c:
        yield c


@pytest.fixture(scope="session")
def new_key(admin):
    """Makes an API key in a workspace of its own; returns (secret, key id)."""

    def make(prefix: str = "py"):
        workspace = f"{prefix}-{uuid.uuid4().hex[:8]}"
        answer = admin.post("/api/v1/admin/keys", json={"workspace": workspace, "container": "agent"})
        answer.raise_for_status()
        return answer.json()["key"], answer.json()["id"]

    return make


@pytest.fixture()
def unique() -> str:
    """A word no other test uses, so filters and searches see only this test's data."""
    return "t" + uuid.uuid4().hex[:10]
