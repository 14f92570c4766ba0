'use strict';
// SpeakerMem's Node client: the speakermem.v1.SpeakerMem gRPC API loaded from
// the repository's proto at run time (@grpc/proto-loader), and `Memory`, a
// small promise/async-iterator wrapper with plain camelCase results
// (src/index.d.ts types them). Every gRPC error becomes a SpeakerMemError
// carrying the status code, at one place (toError).

const path = require('node:path');
const fs = require('node:fs');
const grpc = require('@grpc/grpc-js');
const protoLoader = require('@grpc/proto-loader');

const CHANNEL_HEADER = 'x-speakermem-channel';
const API_KEY_HEADER = 'x-api-key';

// The contract: proto/ beside this package when installed, else the
// repository's own (one source of truth).
function protoPath() {
  for (const p of [
    path.join(__dirname, '..', 'proto', 'speakermem', 'v1', 'speakermem.proto'),
    path.join(__dirname, '..', '..', '..', 'proto', 'speakermem', 'v1', 'speakermem.proto'),
  ]) {
    if (fs.existsSync(p)) return p;
  }
  throw new Error('speakermem.proto not found beside the package or in the repository');
}

const definition = protoLoader.loadSync(protoPath(), {
  keepCase: true, // requests use the proto's field names, as the Python client does
  longs: Number, // ids and millisecond times fit in 2^53
  enums: String,
  defaults: true,
  oneofs: true,
});
const pb = grpc.loadPackageDefinition(definition).speakermem.v1;

// The routing header's encoding, byte for byte as the C++ client: UTF-8
// bytes outside 0x21..0x7E and '%' become %XX.
function encodeHeaderValue(value) {
  let out = '';
  for (const b of Buffer.from(value, 'utf8')) {
    out += b < 0x21 || b > 0x7e || b === 0x25
      ? '%' + b.toString(16).toUpperCase().padStart(2, '0')
      : String.fromCharCode(b);
  }
  return out;
}

const CODE_NAMES = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

// A failed call: `code` is the gRPC status code (a number, grpc.status),
// `codeName` its name ("NOT_FOUND"), `details` the server's message.
class SpeakerMemError extends Error {
  constructor(code, details) {
    super(`${CODE_NAMES[code] || code}: ${details}`);
    this.name = 'SpeakerMemError';
    this.code = code;
    this.codeName = CODE_NAMES[code] || String(code);
    this.details = details;
  }
}

function toError(e) {
  if (e instanceof SpeakerMemError) return e;
  if (e && typeof e.code === 'number') return new SpeakerMemError(e.code, e.details || e.message);
  return e;
}

// ---------------------------------------------------------------- results

function evidence(m, score = 0, why = '', newerThanMemory = false) {
  return {
    messageId: m.message_id, seq: m.seq, speaker: m.speaker, speakerId: m.speaker_id,
    text: m.text, timestampMs: m.timestamp_ms, session: m.session, score, why, newerThanMemory,
  };
}

function record(r) {
  return {
    recordId: r.record_id, owner: r.owner, source: r.source, layer: r.layer, content: r.content,
    fromIds: r.from_ids, validAtMs: r.valid_at_ms, supersedes: r.supersedes,
    supersededBy: r.superseded_by,
  };
}

function queryResult(r) {
  const f = r.freshness || {};
  return {
    answer: r.answer,
    abstained: r.abstained,
    evidence: r.evidence.map((e) => evidence(e.message, e.score, e.why, e.newer_than_memory)),
    rows: r.rows.map((row) => ({
      row: row.row,
      records: row.records.map(record),
      sourced: row.sourced.map(record),
      fallback: row.fallback && row.fallback.message_id ? evidence(row.fallback) : null,
      empty: row.empty,
    })),
    citedIds: r.cited_ids,
    projection: r.projection && {
      rows: r.projection.rows, issue: r.projection.issue, tense: r.projection.tense,
      source: r.projection.source, owner: r.projection.owner,
    },
    trace: r.trace.map((t) => ({
      stage: t.stage, latencyMs: t.latency_ms, modelCalls: t.model_calls,
      tokensIn: t.tokens_in, tokensOut: t.tokens_out, note: t.note,
    })),
    freshness: {
      newestSeq: f.newest_seq, derivedThroughSeq: f.derived_through_seq,
      lagMessages: f.lag_messages, lagMs: f.lag_ms, waited: f.waited,
    },
    evidencePack: r.evidence_pack,
  };
}

function counts(c) {
  return {
    messagesDeleted: c.messages_deleted, messagesEdited: c.messages_edited,
    recordsDeleted: c.records_deleted, recordsUpdated: c.records_updated,
    transitionsDeleted: c.transitions_deleted,
  };
}

// A message for the wire: camelCase or the proto's snake_case accepted.
function wireMessage(m) {
  const pick = (camel, snake) => (m[camel] !== undefined ? m[camel] : m[snake]);
  return {
    message_id: pick('messageId', 'message_id') || '',
    speaker: m.speaker || '',
    speaker_id: pick('speakerId', 'speaker_id') || '',
    text: m.text || '',
    timestamp_ms: pick('timestampMs', 'timestamp_ms') || 0,
    session: m.session || '',
    turn: m.turn || 0,
    reply_to: pick('replyTo', 'reply_to') || '',
    metadata: m.metadata || {},
  };
}

// ---------------------------------------------------------------- Memory

class Memory {
  // options: addr ("127.0.0.1:50151"), apiKey, channel (the default one),
  // timeoutMs (per call, default 30000), credentials (grpc credentials;
  // default insecure).
  constructor(options = {}) {
    this.addr = options.addr || '127.0.0.1:50151';
    this.apiKey = options.apiKey || '';
    this.defaultChannel = options.channel || '';
    this.timeoutMs = options.timeoutMs || 30000;
    this.stub = new pb.SpeakerMem(this.addr, options.credentials || grpc.credentials.createInsecure(), {
      'grpc.max_receive_message_length': 64 << 20,
      'grpc.max_send_message_length': 64 << 20,
    });
  }

  close() { this.stub.close(); }

  channel(ch) {
    const c = ch || this.defaultChannel;
    if (!c) throw new TypeError('no channel given and no default channel set');
    return c;
  }

  metadata(channel) {
    const md = new grpc.Metadata();
    if (channel) md.set(CHANNEL_HEADER, encodeHeaderValue(channel));
    if (this.apiKey) md.set(API_KEY_HEADER, this.apiKey);
    return md;
  }

  deadline(ms) { return new Date(Date.now() + (ms || this.timeoutMs)); }

  // One unary call, its error converted.
  call(method, request, channel, timeoutMs) {
    return new Promise((resolve, reject) => {
      this.stub[method](request, this.metadata(channel), { deadline: this.deadline(timeoutMs) },
        (err, resp) => (err ? reject(toError(err)) : resolve(resp)));
    });
  }

  // Resolves once the server answers (UNAVAILABLE after `timeoutMs`).
  async waitUntilServing(timeoutMs = 30000) {
    const until = Date.now() + timeoutMs;
    for (;;) {
      try {
        await this.call('ListChannels', { page_size: 1 }, '', 5000);
        return;
      } catch (e) {
        if (e.code !== grpc.status.UNAVAILABLE || Date.now() > until) throw e;
        await new Promise((r) => setTimeout(r, 50));
      }
    }
  }

  // -- System 1 ------------------------------------------------------------

  // Stores a batch atomically; validated whole first (INVALID_ARGUMENT).
  async ingest(messages, channel) {
    const ch = this.channel(channel);
    const r = await this.call('Ingest', { channel: ch, messages: messages.map(wireMessage) }, ch);
    return { stored: r.stored, duplicates: r.duplicates, firstSeq: r.first_seq, lastSeq: r.last_seq };
  }

  // A long-lived IngestStream: send(messages) writes one chunk and resolves
  // with its acknowledgement (a chunk the server rejects rejects with a
  // SpeakerMemError naming it; the stream goes on); close() ends the stream.
  openIngestStream(options = {}) {
    const ch = this.channel(options.channel);
    const call = this.stub.IngestStream(this.metadata(ch));
    const waiting = new Map(); // chunk id -> {resolve, reject}
    let nextId = 1;
    let failure = null;
    const failAll = (e) => {
      failure = failure || e;
      for (const w of waiting.values()) w.reject(failure);
      waiting.clear();
    };
    call.on('data', (ack) => {
      const w = waiting.get(ack.chunk_id);
      if (!w) return;
      waiting.delete(ack.chunk_id);
      if (ack.error && ack.error.code) {
        w.reject(new SpeakerMemError(ack.error.code, `chunk ${ack.chunk_id}: ${ack.error.message}`));
      } else {
        w.resolve({ chunkId: ack.chunk_id, stored: ack.stored, duplicates: ack.duplicates,
          firstSeq: ack.first_seq, lastSeq: ack.last_seq });
      }
    });
    const ended = new Promise((resolve, reject) => {
      call.on('error', (e) => { failAll(toError(e)); reject(toError(e)); });
      call.on('end', () => { failAll(new SpeakerMemError(grpc.status.ABORTED, 'the stream ended')); resolve(); });
    });
    ended.catch(() => {}); // surfaced through send() and close()
    return {
      send: (messages) => {
        if (failure) return Promise.reject(failure);
        const id = nextId++;
        const acked = new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
        call.write({ channel: ch, chunk_id: id, messages: messages.map(wireMessage) });
        return acked;
      },
      close: async () => { call.end(); await ended; },
    };
  }

  // Streams `messages` in chunks (default 500) through one IngestStream;
  // resolves with the totals. `onAck` (optional) sees each acknowledgement.
  async ingestStream(messages, options = {}) {
    const size = options.chunkSize || 500;
    const stream = this.openIngestStream(options);
    const acks = [];
    for (let i = 0; i < messages.length; i += size) {
      acks.push(stream.send(messages.slice(i, i + size)).then((a) => {
        if (options.onAck) options.onAck(a);
        return a;
      }));
    }
    try {
      const all = await Promise.all(acks);
      return {
        chunks: all.length,
        stored: all.reduce((n, a) => n + a.stored, 0),
        duplicates: all.reduce((n, a) => n + a.duplicates, 0),
      };
    } finally {
      await stream.close().catch(() => {});
    }
  }

  // Every message of the channel, in order.
  async *messages(options = {}) {
    const ch = this.channel(options.channel);
    const req = { channel: ch, speaker: options.speaker || '', page_size: options.pageSize || 1000 };
    for (;;) {
      const r = await this.call('GetMessages', req, ch);
      for (const m of r.messages) yield evidence(m);
      if (!r.next_page_token) return;
      req.page_token = r.next_page_token;
    }
  }

  // Lets the Writer derive everything stored so far; resolves with its cursor.
  async flush(options = {}) {
    const ch = this.channel(options.channel);
    const timeoutMs = options.timeoutMs || 60000;
    const r = await this.call('Flush', { channel: ch, wait: options.wait !== false, timeout_ms: timeoutMs },
      ch, timeoutMs + 5000);
    return r.cursor_seq;
  }

  // -- queries -------------------------------------------------------------

  queryRequest(question, o) {
    const ch = this.channel(o.channel);
    return [ch, {
      channel: ch, question, asker: o.asker || '', options: o.options || [],
      fresh: !!o.fresh, fresh_timeout_ms: o.freshTimeoutMs || 0, no_s2: !!o.noS2,
      min_seq: o.minSeq || 0,
      budgets: { s1_top_k: o.topK || 0, s2_k: o.s2K || 0 },
    }];
  }

  // Answers `question` from the channel's memory. Options: channel, asker,
  // topK, s2K, options (multiple choice, "A: text"), fresh, freshTimeoutMs,
  // noS2, minSeq.
  async query(question, options = {}) {
    const [ch, req] = this.queryRequest(question, options);
    return queryResult(await this.call('Query', req, ch));
  }

  // The evidence without the Answer stage.
  async retrieve(question, options = {}) {
    const [ch, req] = this.queryRequest(question, options);
    return queryResult(await this.call('Retrieve', req, ch));
  }

  // QueryStream as an async iterator of {kind: 'evidence', result} (no
  // answer yet), {kind: 'delta', text} pieces of the answer, then
  // {kind: 'final', text, result} (its answer is authoritative). Leaving
  // the loop early (break, return, throw) cancels the call and the
  // server's model call.
  async *queryStream(question, options = {}) {
    const [ch, req] = this.queryRequest(question, options);
    const call = this.stub.QueryStream(req, this.metadata(ch), { deadline: this.deadline(options.timeoutMs) });
    try {
      for await (const ev of call) {
        if (ev.event === 'delta') yield { kind: 'delta', text: ev.delta };
        else if (ev.event === 'evidence') yield { kind: 'evidence', text: '', result: queryResult(ev.evidence) };
        else if (ev.event === 'final') yield { kind: 'final', text: ev.final.answer, result: queryResult(ev.final) };
      }
    } catch (e) {
      throw toError(e);
    } finally {
      call.cancel(); // a no-op once the call has ended
    }
  }

  // -- System 2 ------------------------------------------------------------

  async records(options = {}) {
    const ch = this.channel(options.channel);
    const req = { channel: ch, owner: options.owner || '', include_superseded: !!options.allVersions,
      page_size: 1000 };
    const out = [];
    for (;;) {
      const r = await this.call('ListRecords', req, ch);
      out.push(...r.records.map(record));
      if (!r.next_page_token) return out;
      req.page_token = r.next_page_token;
    }
  }

  // -- deletion ------------------------------------------------------------

  async deleteMessages(messageIds, options = {}) {
    const ch = this.channel(options.channel);
    const r = await this.call('DeleteMessages', { channel: ch, message_ids: messageIds }, ch, 180000);
    return counts(r.counts);
  }

  async forgetSpeaker(speaker, options = {}) {
    const ch = this.channel(options.channel);
    const r = await this.call('ForgetSpeaker', { channel: ch, speaker }, ch, 180000);
    return counts(r.counts);
  }

  // Resolves true when the channel existed.
  async deleteChannel(channel) {
    const ch = this.channel(channel);
    const r = await this.call('DeleteChannel', { channel: ch }, ch, 180000);
    return r.existed;
  }
}

module.exports = { Memory, SpeakerMemError, encodeHeaderValue, status: grpc.status, pb };
