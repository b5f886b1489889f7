"""Python client for the agentmem memory and skills service (JSON REST API).

    from agentmem import Client
    client = Client(base_url="http://localhost:8080", api_key="amk_...")
    client.memories.create(content="The user prefers tabs", type="preference")
    result = client.recall(query="indentation", mode="hybrid", limit=5)
"""

from .client import AsyncClient, Client
from .errors import APIError
from .types import *  # noqa: F401,F403 - the typed request and response objects
from .types import MemoryInput, RateLimit, SkillFile

__all__ = ["Client", "AsyncClient", "APIError", "MemoryInput", "SkillFile", "RateLimit"]
__version__ = "0.1.0"
