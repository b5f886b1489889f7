import pytest

from agentmem import APIError, CreateMemoriesResult, Memory, MemoryInput


def test_create_get_update_versions_delete(client, unique):
    created = client.memories.create(content=f"The user prefers tabs {unique}", type="preference", tags=[unique])
    assert isinstance(created, CreateMemoriesResult)
    (memory_id,) = created.ids
    assert created.results[0].outcome == "stored"

    memory = client.memories.get(memory_id)
    assert isinstance(memory, Memory)
    assert (memory.content, memory.type, memory.tags, memory.version) == (f"The user prefers tabs {unique}", "preference", [unique], 1)
    assert memory.provenance is not None and memory.provenance.source == "direct"

    updated = client.memories.update(memory_id, content=f"The user prefers spaces {unique}", metadata={"camelKey": 1})
    assert (updated.version, updated.metadata) == (2, {"camelKey": 1})
    assert [v.version for v in client.memories.versions(memory_id)] == [1, 2]
    assert client.memories.get(memory_id, version=1).content == f"The user prefers tabs {unique}"

    deleted = client.memories.delete(memory_id)
    assert deleted.id == memory_id
    with pytest.raises(APIError) as missing:
        client.memories.get(memory_id)
    assert (missing.value.status, missing.value.code, missing.value.details) == (404, "not_found", {"id": memory_id})


def test_batch_create_and_list_with_filters_and_pages(client, unique):
    batch = client.memories.create(
        memories=[
            MemoryInput(content=f"Deploys go out on Tuesdays {unique}", type="fact", tags=[unique], metadata={"team": "web"}),
            {"content": f"Never force-push to main {unique}", "type": "directive", "tags": [unique], "valid_until": "2999-01-01T00:00:00Z"},
            MemoryInput(content=f"Ask Dana about billing {unique}", type="contact", tags=[unique]),
        ]
    )
    assert len(batch.ids) == 3
    assert batch.memories[1].valid_until.startswith("2999-01-01")

    first = client.memories.list(tags=[unique], page_size=2)
    second = client.memories.list(tags=[unique], page_size=2, page_token=first.next_page_token)
    assert len(first.memories) == 2 and second.next_page_token is None
    assert {m.id for m in first.memories + second.memories} == set(batch.ids)

    directives = client.memories.list(tags=[unique], types=["directive"]).memories
    assert [m.content for m in directives] == [f"Never force-push to main {unique}"]
    by_metadata = client.memories.list(tags=[unique], metadata={"team": "web"}).memories
    assert [m.id for m in by_metadata] == [batch.ids[0]]


def test_invalid_input_names_the_field_and_the_rule(client):
    with pytest.raises(APIError) as missing:
        client.memories.create(content="no type")
    assert (missing.value.status, missing.value.code, missing.value.field, missing.value.rule) == (400, "invalid_request", "type", "required")

    with pytest.raises(APIError) as bad:
        client.memories.create(content="bad type", type="rumour")  # type: ignore[arg-type]
    assert (bad.value.code, bad.value.field, bad.value.rule) == ("invalid_request", "type", "enum")
    assert "type" in str(bad.value)


def test_rate_limit_headers_are_readable(client):
    client.stats()
    assert client.rate_limit.limit is not None and client.rate_limit.limit > 0
    assert client.rate_limit.remaining is not None and client.rate_limit.reset is not None


def test_idempotency_key_returns_the_first_answer(client, unique):
    first = client.memories.create(content=f"Idempotent write {unique}", type="fact", idempotency_key=unique)
    again = client.memories.create(content=f"Idempotent write {unique}", type="fact", idempotency_key=unique)
    assert again.ids == first.ids
