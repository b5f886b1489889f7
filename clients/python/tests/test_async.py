import asyncio

import pytest

from agentmem import APIError, AsyncClient, RecallResult


def test_async_client_remembers_recalls_and_raises(base_url, api_key, unique):
    async def scenario():
        async with AsyncClient(base_url=base_url, api_key=api_key) as client:
            created = await client.memories.create(content=f"The on-call rotation changes on Mondays {unique}", type="fact", tags=[unique])
            recalled, stats = await asyncio.gather(
                client.recall(query="when does on-call rotate", tags=[unique], mode="hybrid"),
                client.stats(),
            )
            with pytest.raises(APIError) as missing:
                await client.memories.get("mem_missing")
            skills = await client.skills.list(tags=[unique])
            return created, recalled, stats, missing.value, skills

    created, recalled, stats, missing, skills = asyncio.run(scenario())
    assert isinstance(recalled, RecallResult)
    assert [m.id for m in recalled.memories] == created.ids
    assert stats.memories_stored >= 1
    assert (missing.status, missing.code) == (404, "not_found")
    assert skills.skills == []
