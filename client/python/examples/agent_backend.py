"""An agent backend using SpeakerMem as its memory: every chat message goes
in as it arrives; before answering, the agent asks SpeakerMem and hands the
answer plus its evidence (who said what, when) to its own model.

    python3 client/python/examples/agent_backend.py --addr 127.0.0.1:50151
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(__file__), ".."))
from speakermem import Memory  # noqa: E402


def on_chat_message(mem: Memory, speaker: str, text: str) -> None:
    mem.ingest([{"speaker": speaker, "text": text, "timestamp_ms": int(time.time() * 1000)}])


def context_for(mem: Memory, question: str, asker: str) -> str:
    r = mem.query(question, asker=asker)
    lines = [f"Memory says: {r.answer}"]
    for e in r.evidence[:5]:
        lines.append(f"- {e.speaker} said: {e.text}")
    for row in r.rows:
        for rec in row.records:
            lines.append(f"- [{row.row} / {rec.layer}] {rec.content}")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--addr", default=os.environ.get("SPEAKERMEM_ADDR", "127.0.0.1:50151"))
    ap.add_argument("--api-key", default=os.environ.get("SPEAKERMEM_API_KEY"))
    ap.add_argument("--channel", default="agent-demo")
    args = ap.parse_args()
    with Memory(args.addr, api_key=args.api_key, channel=args.channel) as mem:
        mem.wait_until_serving()
        for speaker, text in [("Alice", "I prefer the beach venue in Lisbon"),
                              ("Bob", "Lisbon is too expensive for me"),
                              ("Carol", "We decided to book Lisbon anyway")]:
            on_chat_message(mem, speaker, text)
        mem.flush()
        print(context_for(mem, "What does Bob think about the venue?", asker="Alice"))


if __name__ == "__main__":
    main()
