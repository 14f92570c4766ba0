"""SpeakerMem Python client: the gRPC API (speakermem.v1) with a small
idiomatic wrapper.

    from speakermem import Memory
    mem = Memory("127.0.0.1:50151", api_key=None, channel="team")
    mem.ingest([{"speaker": "Alice", "text": "I booked Lisbon", "timestamp_ms": 1700000000000}])
    result = mem.query("Which venue did Alice book?")
    print(result.answer, [e.text for e in result.evidence])
    for event in mem.query_stream("Which venue did Alice book?"):
        if event.kind == "delta":
            print(event.text, end="", flush=True)

Works with Debian's python3-grpcio and python3-protobuf. `speakermem_pb2`
is generated from proto/speakermem/v1/speakermem.proto
(client/python/regenerate.sh); the RPC stubs are built from its service
descriptor at import, so they always match it.
"""

from .client import (  # noqa: F401
    DeletionCounts,
    Evidence,
    IngestResult,
    Memory,
    QueryResult,
    Record,
    Row,
    SpeakerMemError,
    StreamEvent,
    Stub,
)
from . import speakermem_pb2 as pb  # noqa: F401
