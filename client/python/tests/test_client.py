"""The Python client against a real speakermemd (started here on loopback,
port 0, temp dir). Run: SPEAKERMEMD=build/server/speakermemd python3 -m
unittest discover client/python/tests (CTest does it)."""

import os
import subprocess
import sys
import tempfile
import time
import unittest

import grpc

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from speakermem import Memory, SpeakerMemError  # noqa: E402


class Server:
    def __init__(self):
        self.dir = tempfile.TemporaryDirectory()
        port_file = os.path.join(self.dir.name, "ports")
        binary = os.environ.get("SPEAKERMEMD", "build/server/speakermemd")
        self.proc = subprocess.Popen(
            [binary, "--data-dir", os.path.join(self.dir.name, "data"), "--listen", "127.0.0.1:0",
             "--metrics-listen", "", "--port-file", port_file, "--writer.idle_flush_ms=0"],
            stderr=open(os.path.join(self.dir.name, "log"), "w"))
        deadline = time.time() + 30
        while not os.path.exists(port_file) and time.time() < deadline:
            time.sleep(0.02)
        self.addr = "127.0.0.1:" + open(port_file).read().split()[0]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=30)
        self.dir.cleanup()


class ClientTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.server = Server()
        cls.mem = Memory(cls.server.addr, channel="team ü")  # non-ASCII channel name
        cls.mem.wait_until_serving()

    @classmethod
    def tearDownClass(cls):
        cls.mem.close()
        cls.server.stop()

    def test_ingest_query_forget(self):
        lines = [("Alice", "I booked the beach venue in Lisbon for the offsite"),
                 ("Bob", "The budget for the offsite is 4000 euros"),
                 ("Carol", "I will bring the projector on Friday")] * 10
        msgs = [{"message_id": f"m{i}", "speaker": s, "text": t,
                 "timestamp_ms": 1700000000000 + i * 60000, "session": "s1",
                 "metadata": {"src": "test"}} for i, (s, t) in enumerate(lines)]
        r = self.mem.ingest(msgs)
        self.assertEqual(r.stored, 30)
        self.assertEqual(self.mem.ingest(msgs[:5]).duplicates, 5)
        self.assertEqual(self.mem.flush(), 30)
        stored = list(self.mem.messages())
        self.assertEqual(len(stored), 30)
        self.assertEqual(stored[0].text, lines[0][1])
        res = self.mem.query("Where is the offsite venue?")
        self.assertTrue(res.answer)
        self.assertTrue(any("Lisbon" in e.text for e in res.evidence))
        self.assertTrue(res.rows)
        self.assertTrue(any(t["stage"] == "s1_bm25" for t in res.trace))
        self.assertEqual(res.freshness["lag_messages"], 0)  # flushed above
        self.assertEqual(res.freshness["newest_seq"], 30)
        self.assertFalse(any(e.newer_than_memory for e in res.evidence))
        self.assertTrue(self.mem.query("Where is the offsite venue?", fresh=True).freshness["waited"])
        events = list(self.mem.query_stream("Where is the offsite venue?"))
        kinds = [e.kind for e in events]
        self.assertEqual(kinds[0], "evidence")
        self.assertEqual(kinds[-1], "final")
        self.assertIn("delta", kinds)
        self.assertEqual(events[0].result.answer, "")
        self.assertTrue(events[0].result.evidence_pack)
        final = events[-1].result
        self.assertEqual("".join(e.text for e in events if e.kind == "delta"), final.answer)
        self.assertEqual(final.answer, res.answer)
        stream = self.mem.query_stream("Where is the offsite venue?")
        self.assertEqual(next(stream).kind, "evidence")
        stream.close()  # stops reading: the call is cancelled, nothing raised
        ev = self.mem.retrieve("budget", top_k=3)
        self.assertEqual(ev.answer, "")
        self.assertLessEqual(len(ev.evidence), 3)
        self.assertTrue(self.mem.records())
        counts = self.mem.forget_speaker("Bob")
        self.assertEqual(counts.messages_deleted, 10)
        self.assertFalse(any(m.speaker == "Bob" for m in self.mem.messages()))

    def test_routing_header_matches_the_cpp_client(self):
        from speakermem.client import encode_header_value
        self.assertEqual(encode_header_value("team ü%"), "team%20%C3%BC%25")
        self.assertEqual(encode_header_value("a/b:c"), "a/b:c")

    def test_errors_carry_grpc_codes(self):
        with self.assertRaises(SpeakerMemError) as bad:
            self.mem.ingest([{"speaker": "ALL", "text": "x", "timestamp_ms": 1}])
        self.assertEqual(bad.exception.code, grpc.StatusCode.INVALID_ARGUMENT)
        self.assertIn("reserved", bad.exception.message)
        with self.assertRaises(SpeakerMemError) as missing:
            self.mem.query("anything", channel="no-such-channel")
        self.assertEqual(missing.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(SpeakerMemError) as streamed:
            list(self.mem.query_stream("anything", channel="no-such-channel"))
        self.assertEqual(streamed.exception.code, grpc.StatusCode.NOT_FOUND)
        with self.assertRaises(ValueError):
            Memory(self.server.addr).query("no channel")


if __name__ == "__main__":
    unittest.main()
