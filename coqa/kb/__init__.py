"""The knowledge-base layer: store backends, the loader and the name codec.

It knows nothing about questions nor about the application's settings: `open_kb`
picks the backend a `KBConfig` names; everything above talks to the
`KnowledgeBase` interface only.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from coqa.kb.base import KBError, KnowledgeBase, QueryResult
from coqa.kb.names import Term

STORE_SUBDIR = "oxigraph"
INDEX_SUBDIR = "mentions"
MANIFEST = "manifest.json"



@dataclass(frozen=True)
class KBConfig:
    """Which knowledge base to open and how to reach it (the application fills
    it from its settings, `coqa.config.Settings.kb_config`)."""

    backend: str  # oxigraph, sparql or gstore
    store: str  # oxigraph: a store directory made by `coqa load`; empty: the demo knowledge base
    endpoint: str  # sparql: the query URL
    gstore_url: str
    gstore_db: str
    gstore_user: str
    gstore_password: str
    mention_index: str  # empty: <store>/mentions
    cache_dir: str  # where the demo knowledge base is loaded on first use
    timeout: float  # remote backends: seconds per request
    retries: int
    retry_backoff: float

    @property
    def cache_path(self) -> Path:
        return Path(self.cache_dir).expanduser()


__all__ = [
    "KBConfig", "KBError", "KnowledgeBase", "QueryResult", "Term", "open_kb", "store_directory", "mention_index_directory", "uses_demo_kb",
]  # fmt: skip


def uses_demo_kb(settings: KBConfig) -> bool:
    """True when the settings name no knowledge base, so the shipped demo one is used."""
    return settings.backend == "oxigraph" and not settings.store


def store_directory(settings: KBConfig) -> Path:
    """The store directory for the oxigraph backend: the configured one, or
    the demo knowledge base in the cache directory, loaded on first use."""
    if not uses_demo_kb(settings):
        return Path(settings.store).expanduser()
    from coqa.kb.demo import ensure_demo_store

    return ensure_demo_store(settings.cache_path)


def mention_index_directory(settings: KBConfig) -> Path:
    """Where the mention index lives: the configured directory, else next to the store."""
    if settings.mention_index:
        return Path(settings.mention_index).expanduser()
    if settings.backend != "oxigraph" and not settings.store:
        raise KBError(
            f"the {settings.backend} backend needs a mention index: build one with "
            "`coqa load KB_DIR --store DIR --index-only` and set mention_index (or --store DIR)"
        )
    return store_directory(settings) / INDEX_SUBDIR


def open_kb(settings: KBConfig) -> KnowledgeBase:
    """Open the knowledge base the settings name; KBError with a clear message if it cannot be."""
    if settings.backend == "oxigraph":
        from coqa.kb.backends.oxigraph_store import OxigraphStore

        return OxigraphStore(store_directory(settings) / STORE_SUBDIR)
    if settings.backend == "sparql":
        if not settings.endpoint:
            raise KBError("the sparql backend needs an endpoint URL (--endpoint URL or COQA_ENDPOINT)")
        from coqa.kb.backends.sparql_endpoint import SparqlEndpoint

        return SparqlEndpoint(settings.endpoint, settings.timeout, settings.retries, settings.retry_backoff)
    if not settings.gstore_url or not settings.gstore_db:
        raise KBError("the gstore backend needs a server URL and a database (--gstore URL --db NAME)")
    from coqa.kb.backends.gstore import GStore

    return GStore(
        settings.gstore_url,
        settings.gstore_db,
        settings.gstore_user,
        settings.gstore_password,
        settings.timeout,
        settings.retries,
        settings.retry_backoff,
    )
