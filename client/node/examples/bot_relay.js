#!/usr/bin/env node
'use strict';
// A chat bot relay: tails a JSONL feed of chat events into IngestStream and
// answers "/ask QUESTION" lines with QueryStream, printing each answer as it
// forms. One event per line:
//   {"channel": "team", "id": "m1", "user": "U1", "name": "Alice",
//    "text": "The offsite is in Lisbon", "ts": 1700000000000}
// ("ts" in ms; "session" optional). A line whose text starts with "/ask "
// is a question, asked in its channel as its user; it is not stored.
//
//   node examples/bot_relay.js --addr 127.0.0.1:50151 [--follow] FEED.jsonl
// Without --follow the relay stops at the end of the feed once every chunk
// is acknowledged and every answer printed; with it, it keeps reading what
// is appended (Ctrl-C to stop). Answers go to stdout as JSON lines:
//   {"channel": ..., "question": ..., "answer": ..., "cited": [...]}
// and, while they form, as text on stderr.
const fs = require('node:fs');
const { Memory } = require('../src');

function parseArgs(argv) {
  const o = { addr: process.env.SPEAKERMEM_ADDR || '127.0.0.1:50151', follow: false, feed: '' };
  for (let i = 0; i < argv.length; ++i) {
    if (argv[i] === '--addr') o.addr = argv[++i];
    else if (argv[i] === '--follow') o.follow = true;
    else o.feed = argv[i];
  }
  if (!o.feed) throw new Error('usage: bot_relay.js [--addr HOST:PORT] [--follow] FEED.jsonl');
  return o;
}

class Relay {
  constructor(mem) {
    this.mem = mem;
    this.streams = new Map(); // channel -> {stream, batch, timer}
    this.pending = new Set(); // promises of acks and answers
    this.stats = { lines: 0, stored: 0, duplicates: 0, rejected: 0, questions: 0, bad: 0 };
  }

  track(p) {
    this.pending.add(p);
    p.finally(() => this.pending.delete(p));
  }

  // Messages of a channel are sent in chunks: every 100, or 200 ms after
  // the first of a chunk.
  message(ev) {
    let s = this.streams.get(ev.channel);
    if (!s) {
      s = { stream: this.mem.openIngestStream({ channel: ev.channel }), batch: [], timer: null };
      this.streams.set(ev.channel, s);
    }
    s.batch.push({ messageId: String(ev.id), speaker: ev.name || ev.user, speakerId: ev.user,
      text: ev.text, timestampMs: ev.ts, session: ev.session || '' });
    if (s.batch.length >= 100) this.send(s);
    else if (!s.timer) s.timer = setTimeout(() => this.send(s), 200);
  }

  send(s) {
    clearTimeout(s.timer);
    s.timer = null;
    if (s.batch.length === 0) return;
    const p = s.stream.send(s.batch).then((ack) => {
      this.stats.stored += ack.stored;
      this.stats.duplicates += ack.duplicates;
    }, (e) => {
      this.stats.rejected += 1;
      console.error(`relay: chunk rejected: ${e.message}`);
    });
    s.batch = [];
    this.track(p);
  }

  // The channel's messages so far are sent (and acknowledged) before the
  // question is asked, so the answer can use them.
  async ask(ev, question) {
    const s = this.streams.get(ev.channel);
    if (s) this.send(s);
    await Promise.allSettled([...this.pending]);
    this.stats.questions += 1;
    let final = null;
    for await (const e of this.mem.queryStream(question, { channel: ev.channel, asker: ev.user })) {
      if (e.kind === 'delta') process.stderr.write(e.text);
      if (e.kind === 'final') final = e.result;
    }
    process.stderr.write('\n');
    console.log(JSON.stringify({ channel: ev.channel, question, answer: final.answer,
      cited: final.citedIds }));
  }

  async line(text) {
    if (!text.trim()) return;
    this.stats.lines += 1;
    let ev;
    try {
      ev = JSON.parse(text);
    } catch (e) {
      this.stats.bad += 1;
      console.error(`relay: line ${this.stats.lines}: not JSON: ${e.message}`);
      return;
    }
    if (!ev || typeof ev.channel !== 'string' || typeof ev.text !== 'string') {
      this.stats.bad += 1;
      console.error(`relay: line ${this.stats.lines}: needs "channel" and "text"`);
      return;
    }
    if (ev.text.startsWith('/ask ')) {
      await this.ask(ev, ev.text.slice(5).trim()).catch((e) => console.error(`relay: ask failed: ${e.message}`));
    } else {
      this.message(ev);
    }
  }

  async close() {
    for (const s of this.streams.values()) this.send(s);
    await Promise.allSettled([...this.pending]);
    for (const s of this.streams.values()) await s.stream.close().catch(() => {});
  }
}

// Reads the feed line by line from `offset`; resolves at its end (or, with
// follow, never: appended lines keep coming).
async function tail(file, follow, onLine) {
  const fd = fs.openSync(file, 'r');
  const buf = Buffer.alloc(1 << 16);
  let offset = 0;
  let rest = '';
  for (;;) {
    const n = fs.readSync(fd, buf, 0, buf.length, offset);
    if (n > 0) {
      offset += n;
      rest += buf.subarray(0, n).toString('utf8');
      let nl;
      while ((nl = rest.indexOf('\n')) >= 0) {
        const line = rest.slice(0, nl);
        rest = rest.slice(nl + 1);
        await onLine(line);
      }
      continue;
    }
    if (!follow) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  if (rest) await onLine(rest);
  fs.closeSync(fd);
}

async function main() {
  const o = parseArgs(process.argv.slice(2));
  const mem = new Memory({ addr: o.addr });
  await mem.waitUntilServing(30000);
  const relay = new Relay(mem);
  process.on('SIGINT', async () => {
    await relay.close();
    console.error(`relay: ${JSON.stringify(relay.stats)}`);
    process.exit(0);
  });
  await tail(o.feed, o.follow, (l) => relay.line(l));
  await relay.close();
  console.error(`relay: ${JSON.stringify(relay.stats)}`);
  mem.close();
}

main().catch((e) => {
  console.error(`relay: ${e.message}`);
  process.exit(1);
});
