'use strict';
// The Node client against a real speakermemd (started here on loopback,
// port 0, temp dir). Run: SPEAKERMEMD=build/server/speakermemd npm test
// (CTest does it, after `npm ci`).
const { test, before, after } = require('node:test');
const assert = require('node:assert/strict');
const { spawn } = require('node:child_process');
const fs = require('node:fs');
const os = require('node:os');
const path = require('node:path');
const { Memory, SpeakerMemError, encodeHeaderValue, status } = require('../src');

let dir;
let server;
let mem;

before(async () => {
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'speakermem-node-'));
  const binary = process.env.SPEAKERMEMD ||
    path.join(__dirname, '..', '..', '..', 'build', 'server', 'speakermemd');
  const portFile = path.join(dir, 'ports');
  server = spawn(binary, ['--data-dir', path.join(dir, 'data'), '--listen', '127.0.0.1:0',
    '--metrics-listen', '', '--port-file', portFile, '--writer.idle_flush_ms=0'],
  { stdio: ['ignore', 'ignore', fs.openSync(path.join(dir, 'log'), 'w')] });
  const until = Date.now() + 30000;
  while (!(fs.existsSync(portFile) && fs.readFileSync(portFile, 'utf8').trim())) {
    if (Date.now() > until) throw new Error('speakermemd did not start: ' + fs.readFileSync(path.join(dir, 'log'), 'utf8'));
    await new Promise((r) => setTimeout(r, 20));
  }
  const port = fs.readFileSync(portFile, 'utf8').trim().split(/\s+/)[0];
  mem = new Memory({ addr: `127.0.0.1:${port}`, channel: 'team ü' }); // non-ASCII channel name
  await mem.waitUntilServing();
});

after(async () => {
  if (mem) mem.close();
  if (server) {
    const exited = new Promise((r) => server.once('exit', r));
    server.kill('SIGTERM');
    await exited;
  }
  fs.rmSync(dir, { recursive: true, force: true });
});

const lines = [
  ['Alice', 'I booked the beach venue in Lisbon for the offsite'],
  ['Bob', 'The budget for the offsite is 4000 euros'],
  ['Carol', 'I will bring the projector on Friday'],
];
const messages = (n, prefix) => Array.from({ length: n }, (_, i) => ({
  messageId: `${prefix}${i}`, speaker: lines[i % 3][0], text: lines[i % 3][1],
  timestampMs: 1700000000000 + i * 60000, session: 's1',
}));

test('ingest, stream, query, records, deletion against a real server', async () => {
  const r = await mem.ingest(messages(30, 'm'));
  assert.equal(r.stored, 30);
  assert.equal(r.firstSeq, 1);
  assert.equal((await mem.ingest(messages(5, 'm'))).duplicates, 5);

  const acks = [];
  const totals = await mem.ingestStream(messages(25, 'x'), { chunkSize: 10, onAck: (a) => acks.push(a) });
  assert.deepEqual(totals, { chunks: 3, stored: 25, duplicates: 0 });
  assert.deepEqual(acks.map((a) => a.chunkId).sort(), [1, 2, 3]);
  assert.equal(await mem.flush(), 55);

  const stored = [];
  for await (const m of mem.messages({ pageSize: 20 })) stored.push(m);
  assert.equal(stored.length, 55);
  assert.equal(stored[0].text, lines[0][1]);

  const res = await mem.query('Where is the offsite venue?');
  assert.ok(res.answer);
  assert.ok(res.evidence.some((e) => e.text.includes('Lisbon')));
  assert.ok(res.rows.length > 0);
  assert.ok(res.trace.some((t) => t.stage === 's1_bm25'));
  assert.equal(res.freshness.lagMessages, 0);
  assert.ok(res.evidencePack);
  const ev = await mem.retrieve('budget', { topK: 3 });
  assert.equal(ev.answer, '');
  assert.ok(ev.evidence.length <= 3);

  // Streamed: evidence, deltas, final, and the same answer as Query.
  const events = [];
  for await (const e of mem.queryStream('Where is the offsite venue?')) events.push(e);
  assert.equal(events[0].kind, 'evidence');
  assert.equal(events[0].result.answer, '');
  assert.equal(events.at(-1).kind, 'final');
  const deltas = events.filter((e) => e.kind === 'delta').map((e) => e.text).join('');
  assert.equal(deltas, events.at(-1).result.answer);
  assert.equal(events.at(-1).result.answer, res.answer);
  for await (const e of mem.queryStream('Where is the offsite venue?')) {
    assert.equal(e.kind, 'evidence');
    break; // cancels the call; nothing thrown
  }

  const records = await mem.records();
  assert.ok(records.length > 0);
  assert.ok(records.every((x) => x.recordId && x.layer));

  const deleted = await mem.deleteMessages(['x0', 'x1']);
  assert.equal(deleted.messagesDeleted, 2);
  const forgot = await mem.forgetSpeaker('Bob');
  assert.ok(forgot.messagesDeleted > 0);
  for await (const m of mem.messages()) assert.notEqual(m.speaker, 'Bob');
  assert.equal(await mem.deleteChannel(), true);
  assert.equal(await mem.deleteChannel(), false);
});

test('a long-lived ingest stream acknowledges each chunk; a bad chunk does not end it', async () => {
  const stream = mem.openIngestStream({ channel: 'relay' });
  const a = await stream.send(messages(3, 'r'));
  assert.equal(a.stored, 3);
  await assert.rejects(stream.send([{ speaker: 'ALL', text: 'x', timestampMs: 1 }]),
    (e) => e instanceof SpeakerMemError && e.code === status.INVALID_ARGUMENT);
  const b = await stream.send(messages(6, 'r'));
  assert.deepEqual([b.stored, b.duplicates], [3, 3]);
  await stream.close();
});

test('the example bot relay stores the feed and answers its /ask lines', async () => {
  const relay = spawn(process.execPath, [path.join(__dirname, '..', 'examples', 'bot_relay.js'),
    '--addr', mem.addr, path.join(__dirname, '..', 'examples', 'feed.jsonl')]);
  let out = '';
  let err = '';
  relay.stdout.on('data', (d) => { out += d; });
  relay.stderr.on('data', (d) => { err += d; });
  const code = await new Promise((r) => relay.once('exit', r));
  assert.equal(code, 0, err);
  const answers = out.trim().split('\n').map((l) => JSON.parse(l));
  assert.deepEqual(answers.map((a) => a.question), ['Where is the offsite?', 'Where is the offsite now?']);
  assert.ok(answers.every((a) => a.channel === 'team' && a.answer));
  assert.match(answers[1].answer, /Porto/); // asked after the change of plan
  assert.match(err, /"stored":4/);
  assert.match(err, /"questions":2/);
  const stored = [];
  for await (const m of mem.messages({ channel: 'team' })) stored.push(m.messageId);
  assert.deepEqual(stored, ['m1', 'm2', 'm3', 'm4']); // questions are not stored
});

test('the TypeScript declarations compile against an application (tsc --strict)', async () => {
  const tsc = path.join(__dirname, '..', 'node_modules', 'typescript', 'bin', 'tsc');
  const run = spawn(process.execPath, [tsc, '--noEmit', '--strict', '--target', 'es2022',
    '--module', 'commonjs', '--moduleResolution', 'node', path.join(__dirname, 'types_check.ts')]);
  let out = '';
  run.stdout.on('data', (d) => { out += d; });
  run.stderr.on('data', (d) => { out += d; });
  assert.equal(await new Promise((r) => run.once('exit', r)), 0, out);
});

test('errors carry gRPC codes; the routing header is encoded as the C++ client does', async () => {
  await assert.rejects(mem.ingest([{ speaker: 'ALL', text: 'x', timestampMs: 1 }]),
    (e) => e instanceof SpeakerMemError && e.code === status.INVALID_ARGUMENT &&
      e.codeName === 'INVALID_ARGUMENT' && e.details.includes('reserved'));
  await assert.rejects(mem.query('anything', { channel: 'no-such-channel' }),
    (e) => e.code === status.NOT_FOUND);
  await assert.rejects(async () => {
    for await (const e of mem.queryStream('anything', { channel: 'no-such-channel' })) void e;
  }, (e) => e instanceof SpeakerMemError && e.code === status.NOT_FOUND);
  assert.throws(() => new Memory({ addr: mem.addr }).channel(), TypeError);
  assert.equal(encodeHeaderValue('team ü%'), 'team%20%C3%BC%25');
  assert.equal(encodeHeaderValue('a/b:c'), 'a/b:c');
});
