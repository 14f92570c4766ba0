// Compiled (not run) by the tests with tsc --strict: the declarations in
// src/index.d.ts describe the client as an application uses it.
import { Memory, QueryEvent, QueryResult, SpeakerMemError, status } from '../src';

async function demo(mem: Memory): Promise<string> {
  await mem.ingest([{ speaker: 'Alice', text: 'The offsite is in Lisbon', timestampMs: 1 }], 'team');
  const stream = mem.openIngestStream({ channel: 'team' });
  const ack = await stream.send([{ messageId: 'm2', speaker: 'Bob', text: 'ok', timestampMs: 2 }]);
  const seq: number = ack.lastSeq;
  await stream.close();
  const r: QueryResult = await mem.query('Where?', { channel: 'team', topK: 5, noS2: false });
  let text = r.answer + r.evidence.map((e) => e.text).join() + r.rows.map((x) => x.row).join();
  for await (const ev of mem.queryStream('Where?', { channel: 'team' })) {
    const e: QueryEvent = ev;
    if (e.kind === 'delta') text += e.text;
    if (e.kind === 'final') text += e.result.citedIds.join();
  }
  try {
    await mem.deleteChannel('team');
  } catch (err) {
    if (err instanceof SpeakerMemError && err.code === status.NOT_FOUND) text += err.codeName;
  }
  return text + seq;
}

void demo(new Memory({ addr: '127.0.0.1:50151' }));
