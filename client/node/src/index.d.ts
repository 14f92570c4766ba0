// Types of the SpeakerMem Node client (src/index.js).
import type { ChannelCredentials, status as GrpcStatus } from '@grpc/grpc-js';

export interface MemoryOptions {
  addr?: string; // default "127.0.0.1:50151"
  apiKey?: string;
  channel?: string; // the default channel
  timeoutMs?: number; // per call, default 30000
  credentials?: ChannelCredentials; // default insecure
}

export interface Message {
  messageId?: string;
  speaker: string;
  speakerId?: string;
  text: string;
  timestampMs: number;
  session?: string;
  turn?: number;
  replyTo?: string;
  metadata?: Record<string, string>;
}

export interface IngestResult { stored: number; duplicates: number; firstSeq: number; lastSeq: number }
export interface IngestAck extends IngestResult { chunkId: number }
export interface IngestTotals { chunks: number; stored: number; duplicates: number }

export interface IngestStream {
  send(messages: Message[]): Promise<IngestAck>;
  close(): Promise<void>;
}

export interface Evidence {
  messageId: string;
  seq: number;
  speaker: string;
  speakerId: string;
  text: string;
  timestampMs: number;
  session: string;
  score: number;
  why: string;
  newerThanMemory: boolean;
}

export interface DerivedRecord {
  recordId: string;
  owner: string; // a speaker id, or "GROUP"
  source: string;
  layer: string; // CORE, PROFILE, INTERACTION, INSIGHT
  content: string;
  fromIds: string[];
  validAtMs: number;
  supersedes: string[];
  supersededBy: string;
}

export interface Row {
  row: string;
  records: DerivedRecord[];
  sourced: DerivedRecord[];
  fallback: Evidence | null;
  empty: boolean;
}

export interface StageTrace {
  stage: string;
  latencyMs: number;
  modelCalls: number;
  tokensIn: number;
  tokensOut: number;
  note: string;
}

export interface QueryResult {
  answer: string;
  abstained: boolean;
  evidence: Evidence[];
  rows: Row[];
  citedIds: string[];
  projection: { rows: string[]; issue: string; tense: string; source: string; owner: string };
  trace: StageTrace[];
  freshness: {
    newestSeq: number;
    derivedThroughSeq: number;
    lagMessages: number;
    lagMs: number;
    waited: boolean;
  };
  evidencePack: string;
}

export type QueryEvent =
  | { kind: 'evidence'; text: ''; result: QueryResult }
  | { kind: 'delta'; text: string }
  | { kind: 'final'; text: string; result: QueryResult };

export interface QueryOptions {
  channel?: string;
  asker?: string;
  topK?: number;
  s2K?: number;
  options?: string[]; // multiple choice: "A: text"
  fresh?: boolean;
  freshTimeoutMs?: number;
  noS2?: boolean;
  minSeq?: number;
  timeoutMs?: number;
}

export interface DeletionCounts {
  messagesDeleted: number;
  messagesEdited: number;
  recordsDeleted: number;
  recordsUpdated: number;
  transitionsDeleted: number;
}

export class SpeakerMemError extends Error {
  code: number; // grpc.status
  codeName: string; // "NOT_FOUND"
  details: string;
}

export class Memory {
  constructor(options?: MemoryOptions);
  close(): void;
  waitUntilServing(timeoutMs?: number): Promise<void>;
  ingest(messages: Message[], channel?: string): Promise<IngestResult>;
  openIngestStream(options?: { channel?: string }): IngestStream;
  ingestStream(
    messages: Message[],
    options?: { channel?: string; chunkSize?: number; onAck?: (ack: IngestAck) => void },
  ): Promise<IngestTotals>;
  messages(options?: { channel?: string; speaker?: string; pageSize?: number }): AsyncGenerator<Evidence>;
  flush(options?: { channel?: string; wait?: boolean; timeoutMs?: number }): Promise<number>;
  query(question: string, options?: QueryOptions): Promise<QueryResult>;
  retrieve(question: string, options?: QueryOptions): Promise<QueryResult>;
  queryStream(question: string, options?: QueryOptions): AsyncGenerator<QueryEvent>;
  records(options?: { channel?: string; owner?: string; allVersions?: boolean }): Promise<DerivedRecord[]>;
  deleteMessages(messageIds: string[], options?: { channel?: string }): Promise<DeletionCounts>;
  forgetSpeaker(speaker: string, options?: { channel?: string }): Promise<DeletionCounts>;
  deleteChannel(channel?: string): Promise<boolean>;
}

export function encodeHeaderValue(value: string): string;
export const status: typeof GrpcStatus;
