"""Stubs from the service descriptor, and the `Memory` wrapper."""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Dict, Iterable, Iterator, List, Optional, Sequence

import grpc

from . import speakermem_pb2 as pb

_SERVICE = pb.DESCRIPTOR.services_by_name["SpeakerMem"]
_CHANNEL_HEADER = "x-speakermem-channel"
_API_KEY_HEADER = "x-api-key"


def encode_header_value(value: str) -> str:
    """The routing header's encoding, byte for byte as the C++ client: UTF-8
    bytes outside 0x21..0x7E and '%' become %XX (gRPC metadata must be
    printable ASCII; a proxy hashing it places a channel consistently)."""
    out = []
    for b in value.encode("utf-8"):
        if b < 0x21 or b > 0x7E or b == 0x25:
            out.append("%%%02X" % b)
        else:
            out.append(chr(b))
    return "".join(out)


def _message_class(descriptor):
    return getattr(pb, descriptor.name)


class Stub:
    """One callable per RPC of speakermem.v1.SpeakerMem, by name, e.g.
    `stub.Ingest(request, metadata=..., timeout=...)`; streaming RPCs take
    and return iterators, as grpcio's generated stubs do."""

    def __init__(self, channel: grpc.Channel):
        for method in _SERVICE.methods:
            path = f"/{_SERVICE.full_name}/{method.name}"
            req = _message_class(method.input_type)
            resp = _message_class(method.output_type)
            kind = {
                (False, False): channel.unary_unary,
                (False, True): channel.unary_stream,
                (True, False): channel.stream_unary,
                (True, True): channel.stream_stream,
            }[(method.client_streaming, method.server_streaming)]
            setattr(self, method.name, kind(path, request_serializer=req.SerializeToString,
                                            response_deserializer=resp.FromString))


class SpeakerMemError(Exception):
    """A failed call: `code` is the gRPC status code (grpc.StatusCode)."""

    def __init__(self, code: grpc.StatusCode, message: str):
        super().__init__(f"{code.name}: {message}")
        self.code = code
        self.message = message


@dataclasses.dataclass
class IngestResult:
    stored: int
    duplicates: int
    first_seq: int
    last_seq: int


@dataclasses.dataclass
class Evidence:
    message_id: str
    seq: int
    speaker: str
    text: str
    timestamp_ms: int
    score: float
    why: str
    newer_than_memory: bool = False  # said after the Writer's cursor


@dataclasses.dataclass
class Record:
    record_id: str
    owner: str
    source: str
    layer: str
    content: str
    from_ids: List[str]
    superseded_by: str
    supersedes: List[str]


@dataclasses.dataclass
class Row:
    row: str                 # a speaker id, or "GROUP"
    records: List[Record]
    sourced: List[Record]
    fallback: Optional[Evidence]
    empty: bool


@dataclasses.dataclass
class QueryResult:
    answer: str
    abstained: bool
    evidence: List[Evidence]
    rows: List[Row]
    cited_ids: List[str]
    trace: List[Dict[str, Any]]
    # newest_seq, derived_through_seq, lag_messages, lag_ms, waited
    freshness: Dict[str, Any] = dataclasses.field(default_factory=dict)
    # The evidence pack exactly as the answerer saw it.
    evidence_pack: str = ""


@dataclasses.dataclass
class StreamEvent:
    """One event of Memory.query_stream: kind "evidence" (result: the
    evidence, no answer yet), "delta" (text: a piece of the answer) or
    "final" (text: the answer; result: the complete QueryResult)."""
    kind: str
    text: str = ""
    result: Optional[QueryResult] = None


@dataclasses.dataclass
class DeletionCounts:
    messages_deleted: int
    messages_edited: int
    records_deleted: int
    records_updated: int
    transitions_deleted: int


def _evidence(m, score: float = 0.0, why: str = "", newer: bool = False) -> Evidence:
    return Evidence(m.message_id, m.seq, m.speaker, m.text, m.timestamp_ms, score, why, newer)


def _result(r) -> QueryResult:
    rows = [Row(row.row, [_record(x) for x in row.records], [_record(x) for x in row.sourced],
                _evidence(row.fallback) if row.fallback.message_id else None, row.empty)
            for row in r.rows]
    trace = [{"stage": t.stage, "latency_ms": t.latency_ms, "model_calls": t.model_calls,
              "tokens_in": t.tokens_in, "tokens_out": t.tokens_out, "note": t.note}
             for t in r.trace]
    f = r.freshness
    freshness = {"newest_seq": f.newest_seq, "derived_through_seq": f.derived_through_seq,
                 "lag_messages": f.lag_messages, "lag_ms": f.lag_ms, "waited": f.waited}
    return QueryResult(r.answer, r.abstained,
                       [_evidence(e.message, e.score, e.why, e.newer_than_memory)
                        for e in r.evidence],
                       rows, list(r.cited_ids), trace, freshness, r.evidence_pack)


def _record(r) -> Record:
    return Record(r.record_id, r.owner, r.source, pb.Layer.Name(r.layer).lower(), r.content,
                  list(r.from_ids), r.superseded_by, list(r.supersedes))


def _counts(c) -> DeletionCounts:
    return DeletionCounts(c.messages_deleted, c.messages_edited, c.records_deleted,
                          c.records_updated, c.transitions_deleted)


class Memory:
    """A connection to speakermemd (or to a proxy in front of shards).

    `channel` is the default channel of the calls that take one. Errors
    raise SpeakerMemError with the canonical gRPC code."""

    def __init__(self, addr: str = "127.0.0.1:50151", *, api_key: Optional[str] = None,
                 channel: Optional[str] = None, timeout: float = 30.0,
                 root_certificates: Optional[bytes] = None):
        options = [("grpc.max_receive_message_length", 64 << 20),
                   ("grpc.max_send_message_length", 64 << 20)]
        if root_certificates is not None:
            creds = grpc.ssl_channel_credentials(root_certificates=root_certificates)
            self._channel = grpc.secure_channel(addr, creds, options=options)
        else:
            self._channel = grpc.insecure_channel(addr, options=options)
        self.stub = Stub(self._channel)
        self._api_key = api_key
        self._default_channel = channel
        self._timeout = timeout

    # -- plumbing ------------------------------------------------------------

    def close(self) -> None:
        self._channel.close()

    def __enter__(self) -> "Memory":
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def _ch(self, channel: Optional[str]) -> str:
        ch = channel or self._default_channel
        if not ch:
            raise ValueError("no channel given and no default channel set")
        return ch

    def _metadata(self, channel: Optional[str]):
        md = []
        if channel:
            md.append((_CHANNEL_HEADER, encode_header_value(channel)))
        if self._api_key:
            md.append((_API_KEY_HEADER, self._api_key))
        return md

    def _call(self, name: str, request, channel: Optional[str] = None,
              timeout: Optional[float] = None):
        try:
            return getattr(self.stub, name)(request, metadata=self._metadata(channel),
                                            timeout=timeout or self._timeout)
        except grpc.RpcError as e:  # the one place gRPC errors are converted
            raise SpeakerMemError(e.code(), e.details() or "") from None

    def wait_until_serving(self, timeout: float = 30.0) -> None:
        """Blocks until the server answers (raises SpeakerMemError)."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                grpc.channel_ready_future(self._channel).result(timeout=max(0.1, deadline - time.monotonic()))
                self._call("ListChannels", pb.ListChannelsRequest(page_size=1), timeout=5)
                return
            except SpeakerMemError as e:
                if e.code != grpc.StatusCode.UNAVAILABLE or time.monotonic() > deadline:
                    raise
            except grpc.FutureTimeoutError:
                raise SpeakerMemError(grpc.StatusCode.UNAVAILABLE, "server not reachable") from None
            time.sleep(0.05)

    # -- System 1 ------------------------------------------------------------

    def ingest(self, messages: Sequence[Dict[str, Any]], channel: Optional[str] = None) -> IngestResult:
        """Stores messages: dicts with speaker, text, timestamp_ms and
        optionally message_id, speaker_id, session, turn, reply_to,
        metadata. The whole batch is validated first (INVALID_ARGUMENT)."""
        ch = self._ch(channel)
        req = pb.IngestRequest(channel=ch)
        for m in messages:
            msg = req.messages.add()
            for key, value in m.items():
                if key == "metadata":
                    msg.metadata.update(value)
                else:
                    setattr(msg, key, value)
        r = self._call("Ingest", req, ch)
        return IngestResult(r.stored, r.duplicates, r.first_seq, r.last_seq)

    def messages(self, channel: Optional[str] = None, speaker: str = "",
                 page_size: int = 1000) -> Iterator[Evidence]:
        """Every message of the channel, in order."""
        ch = self._ch(channel)
        req = pb.GetMessagesRequest(channel=ch, speaker=speaker, page_size=page_size)
        while True:
            r = self._call("GetMessages", req, ch)
            for m in r.messages:
                yield _evidence(m)
            if not r.next_page_token:
                return
            req.page_token = r.next_page_token

    def flush(self, channel: Optional[str] = None, wait: bool = True, timeout: float = 60.0) -> int:
        """Lets the Writer derive everything stored so far; returns its cursor."""
        ch = self._ch(channel)
        r = self._call("Flush", pb.FlushRequest(channel=ch, wait=wait, timeout_ms=int(timeout * 1000)),
                       ch, timeout=timeout + 5)
        return r.cursor_seq

    # -- queries -------------------------------------------------------------

    def _query_request(self, question: str, channel: Optional[str], *, asker: str = "",
                       top_k: int = 0, s2_k: int = 0, options: Sequence[str] = (),
                       fresh: bool = False, fresh_timeout_ms: int = 0):
        ch = self._ch(channel)
        req = pb.QueryRequest(channel=ch, question=question, asker=asker, options=list(options),
                              fresh=fresh, fresh_timeout_ms=fresh_timeout_ms)
        if top_k:
            req.budgets.s1_top_k = top_k
        if s2_k:
            req.budgets.s2_k = s2_k
        return ch, req

    def query(self, question: str, channel: Optional[str] = None, *, answer: bool = True,
              **kw) -> QueryResult:
        """Answers `question` from the channel's memory (answer=False:
        evidence only, the Retrieve RPC). Keywords: asker, top_k, s2_k,
        options (multiple choice, "A: text"), fresh=True waits for the
        Writer to derive every stored message first (DEADLINE_EXCEEDED past
        fresh_timeout_ms)."""
        ch, req = self._query_request(question, channel, **kw)
        return _result(self._call("Query" if answer else "Retrieve", req, ch))

    def query_stream(self, question: str, channel: Optional[str] = None,
                     **kw) -> Iterator[StreamEvent]:
        """The QueryStream RPC as an iterator: one StreamEvent("evidence")
        (the result so far, no answer yet), StreamEvent("delta") pieces of
        the answer as the answerer writes them, then StreamEvent("final")
        with the complete result (its answer is authoritative). Stopping the
        iteration (break, close()) cancels the call and the server's model
        call. Same keywords as query()."""
        ch, req = self._query_request(question, channel, **kw)
        try:
            call = self.stub.QueryStream(req, metadata=self._metadata(ch), timeout=self._timeout)
        except grpc.RpcError as e:
            raise SpeakerMemError(e.code(), e.details() or "") from None
        try:
            for event in call:
                kind = event.WhichOneof("event")
                if kind == "delta":
                    yield StreamEvent("delta", text=event.delta)
                elif kind == "evidence":
                    yield StreamEvent("evidence", result=_result(event.evidence))
                elif kind == "final":
                    yield StreamEvent("final", text=event.final.answer, result=_result(event.final))
        except grpc.RpcError as e:  # converted here as in _call
            raise SpeakerMemError(e.code(), e.details() or "") from None
        finally:
            call.cancel()  # a no-op once the call has ended

    def retrieve(self, question: str, channel: Optional[str] = None, **kw) -> QueryResult:
        return self.query(question, channel, answer=False, **kw)

    def records(self, channel: Optional[str] = None, owner: str = "",
                all_versions: bool = False) -> List[Record]:
        ch = self._ch(channel)
        req = pb.ListRecordsRequest(channel=ch, owner=owner, include_superseded=all_versions,
                                    page_size=1000)
        out: List[Record] = []
        while True:
            r = self._call("ListRecords", req, ch)
            out.extend(_record(x) for x in r.records)
            if not r.next_page_token:
                return out
            req.page_token = r.next_page_token

    # -- deletion ------------------------------------------------------------

    def delete_messages(self, message_ids: Iterable[str], channel: Optional[str] = None) -> DeletionCounts:
        ch = self._ch(channel)
        r = self._call("DeleteMessages", pb.DeleteMessagesRequest(channel=ch, message_ids=list(message_ids)), ch)
        return _counts(r.counts)

    def forget_speaker(self, speaker: str, channel: Optional[str] = None) -> DeletionCounts:
        ch = self._ch(channel)
        r = self._call("ForgetSpeaker", pb.ForgetSpeakerRequest(channel=ch, speaker=speaker), ch)
        return _counts(r.counts)

    def delete_channel(self, channel: Optional[str] = None) -> bool:
        ch = self._ch(channel)
        return self._call("DeleteChannel", pb.DeleteChannelRequest(channel=ch), ch).existed
