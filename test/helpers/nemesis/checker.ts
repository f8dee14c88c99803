import type { Member, SendRecord } from './clients.ts';

/**
 * The checker: what the store holds (history from every node, and the rows as Cassandra has them)
 * against what the senders were told and what the members were sent. Pure: it reads records and
 * returns counts and examples, so a test asserts on them and the report prints them.
 */

export interface StoredMessage {
  seq: number;
  messageId: string;
  content: string;
}

export interface ChatEvidence {
  chatId: string;
  /** Each node's full history of the chat, oldest first, or why it could not be read. */
  histories: { node: string; messages: StoredMessage[] | { error: string } }[];
  /** The chat's rows read straight from Cassandra (at `rowsConsistency`), oldest first, when read. */
  rows?: StoredMessage[] | { error: string };
  rowsConsistency?: string;
}

export interface CheckInput {
  chats: ChatEvidence[];
  sends: SendRecord[];
  members: Member[];
  /** The window the load ran in, and when the fault was healed (now() values). */
  loadFrom: number;
  loadTo: number;
  healedAt: number | undefined;
}

export interface MemberStats {
  member: string;
  sockets: number;
  /** Sockets that resumed on another node than the one before. */
  resumedElsewhere: number;
  live: number;
  replayed: number;
  paged: number;
  resumeGaps: number;
  liveGaps: number;
}

export interface Verdict {
  attempted: number;
  acknowledged: number;
  refused: number;
  /** Attempts answered with an unknown outcome (OUTCOME_UNKNOWN, UNAVAILABLE, 5xx, network error, timeout): each retried with its key. */
  unknownOutcomes: number;
  /** OUTCOME_UNKNOWN answers among them. */
  outcomeUnknownAnswers: number;
  /** Sends still unacknowledged at the deadline (may be stored, at most once). */
  unresolved: number;
  /** Of those, how many the store holds. */
  unresolvedStored: number;
  longestStallMs: number;
  worstChatStallMs: number;
  /** Where the worst chat's stall lies and the attempts under way across it. */
  worstChatStall: string;
  recoverMs: number | null;
  stored: number;
  // Violations: each must be 0.
  lost: number;
  duplicated: number;
  seqsReused: number;
  ackMismatches: number;
  orderViolations: number;
  historyDisorder: number;
  historiesDiffer: number;
  rowsDiffer: number;
  membersMissed: number;
  membersDuplicates: number;
  membersOutOfOrder: number;
  membersRedelivered: number;
  membersPhantoms: number;
  /** Stored seqs a resumed socket's replay skipped over (between the resume point and its last replayed seq). */
  membersReplayHoles: number;
  /** Per member: how it got its messages. */
  memberStats: MemberStats[];
  /** Up to a few examples per violation, for the report. */
  examples: Record<string, string[]>;
}

export const VIOLATIONS = [
  'lost',
  'duplicated',
  'seqsReused',
  'ackMismatches',
  'orderViolations',
  'historyDisorder',
  'historiesDiffer',
  'rowsDiffer',
  'membersMissed',
  'membersDuplicates',
  'membersOutOfOrder',
  'membersRedelivered',
  'membersPhantoms',
  'membersReplayHoles',
] as const satisfies readonly (keyof Verdict)[];

const isError = (x: unknown): x is { error: string } => typeof x === 'object' && x !== null && 'error' in x;

/** The longest span in [from, to] without one of `times`. */
function longestGap(times: number[], from: number, to: number): number {
  return Math.round(widestGap(times, from, to).ms);
}

/** The longest interval in [from, to] without one of `times`, and where it lies. */
function widestGap(times: number[], from: number, to: number): { ms: number; start: number; end: number } {
  const sorted = times.filter((x) => x >= from && x <= to).sort((a, b) => a - b);
  let prev = from;
  let worst = { ms: 0, start: from, end: from };
  for (const x of [...sorted, to]) {
    if (x - prev > worst.ms) worst = { ms: x - prev, start: prev, end: x };
    prev = x;
  }
  return worst;
}

/**
 * The worst chat's stall: how long, where it lies (seconds from the load's start) and the attempts
 * that were under way across it: which node each went to, how it ended and how long it took. A
 * bound on the stall that fails then says what the chat was waiting for.
 */
function worstStall(byChat: Map<string, SendRecord[]>, from: number, to: number): { ms: number; description: string } {
  let worst: { chatId: string; ms: number; start: number; end: number } | undefined;
  for (const [chatId, sends] of byChat) {
    const gap = widestGap(sends.flatMap((s) => (s.ackAt === undefined ? [] : [s.ackAt])), from, to);
    if (!worst || gap.ms > worst.ms) worst = { chatId, ...gap };
  }
  if (!worst) return { ms: 0, description: 'no chat' };
  const { chatId, start, end } = worst;
  const secs = (x: number) => ((x - from) / 1000).toFixed(1);
  const across = byChat
    .get(chatId)!
    .flatMap((s) => s.attempts.map((a) => ({ s, a })))
    .filter(({ a }) => a.at < end && a.at + a.ms > start)
    .sort((x, y) => x.a.at - y.a.at);
  const lines = across.slice(0, 12).map(({ s, a }) => `${s.key} ${s.via} to ${a.node} at ${secs(a.at)} s: ${a.outcome} (${a.detail}) after ${Math.round(a.ms)} ms`);
  return { ms: Math.round(worst.ms), description: `chat ${chatId.slice(0, 8)} from ${secs(start)} s to ${secs(end)} s of the load; ${across.length} attempts across it${lines.length ? `: ${lines.join('; ')}` : ''}` };
}

export function check(input: CheckInput): Verdict {
  const examples: Record<string, string[]> = {};
  const example = (kind: string, text: string) => {
    const list = (examples[kind] ??= []);
    if (list.length < 8) list.push(text);
  };
  let historyDisorder = 0;
  let historiesDiffer = 0;
  let rowsDiffer = 0;
  let duplicated = 0;
  let seqsReused = 0;

  // The store's view of each chat: the first node's history that could be read; every other node
  // (and the rows, when read) must hold exactly the same.
  const canonical = new Map<string, StoredMessage[]>();
  for (const chat of input.chats) {
    const readable = chat.histories.filter((h) => !isError(h.messages)) as { node: string; messages: StoredMessage[] }[];
    for (const h of chat.histories) if (isError(h.messages)) example('historyUnread', `${chat.chatId} from ${h.node}: ${h.messages.error}`);
    const base = readable[0]?.messages ?? [];
    canonical.set(chat.chatId, base);
    const key = (list: StoredMessage[]) => list.map((m) => `${m.seq}/${m.messageId}/${m.content}`).join('|');
    for (const h of readable.slice(1)) {
      if (key(h.messages) !== key(base)) {
        historiesDiffer++;
        example('historiesDiffer', `${chat.chatId}: ${h.node} has ${h.messages.length} messages, ${readable[0]!.node} ${base.length}`);
      }
    }
    if (readable.length === 0) {
      historiesDiffer++;
      example('historiesDiffer', `${chat.chatId}: no node served its history`);
    }
    if (chat.rows && !isError(chat.rows)) {
      const rows = chat.rows;
      const inRows = new Set(rows.map((m) => `${m.seq}/${m.messageId}/${m.content}`));
      const inHistory = new Set(base.map((m) => `${m.seq}/${m.messageId}/${m.content}`));
      const onlyRows = [...inRows].filter((x) => !inHistory.has(x));
      const onlyHistory = [...inHistory].filter((x) => !inRows.has(x));
      if (onlyRows.length + onlyHistory.length > 0) {
        rowsDiffer += onlyRows.length + onlyHistory.length;
        example('rowsDiffer', `${chat.chatId}: rows (${chat.rowsConsistency}) not in history: ${onlyRows.slice(0, 3).join(', ')}; history not in rows: ${onlyHistory.slice(0, 3).join(', ')}`);
      }
      const rowSeqs = new Map<number, number>();
      for (const m of rows) rowSeqs.set(m.seq, (rowSeqs.get(m.seq) ?? 0) + 1);
      for (const [seq, n] of rowSeqs) if (n > 1) (seqsReused++, example('seqsReused', `${chat.chatId} seq ${seq}: ${n} rows`));
    } else if (chat.rows) example('rowsUnread', `${chat.chatId}: ${(chat.rows as { error: string }).error}`);

    for (let i = 1; i < base.length; i++) {
      if (base[i]!.seq <= base[i - 1]!.seq) {
        historyDisorder++;
        example('historyDisorder', `${chat.chatId}: seq ${base[i]!.seq} after ${base[i - 1]!.seq}`);
      }
    }
    const bySeq = new Map<number, Set<string>>();
    const byContent = new Map<string, number[]>();
    for (const m of base) {
      bySeq.set(m.seq, (bySeq.get(m.seq) ?? new Set()).add(m.messageId));
      byContent.set(m.content, [...(byContent.get(m.content) ?? []), m.seq]);
    }
    for (const [seq, ids] of bySeq) if (ids.size > 1) (seqsReused++, example('seqsReused', `${chat.chatId} seq ${seq}: messages ${[...ids].join(', ')}`));
    for (const [content, seqs] of byContent) if (seqs.length > 1) (duplicated++, example('duplicated', `${chat.chatId} "${content}" at seqs ${seqs.join(', ')}`));
  }

  // Sends against the store.
  const storedByContent = new Map<string, StoredMessage>();
  for (const [, list] of canonical) for (const m of list) if (!storedByContent.has(m.content)) storedByContent.set(m.content, m);
  let lost = 0;
  let ackMismatches = 0;
  let unresolvedStored = 0;
  const ackedSeqOwner = new Map<string, string>();
  for (const s of input.sends) {
    const stored = storedByContent.get(s.content);
    if (s.ack) {
      if (!stored) {
        lost++;
        example('lost', `${s.key} (chat ${s.chatId.slice(0, 8)}) acknowledged as seq ${s.ack.seq} ${s.ack.messageId}, not stored; attempts: ${s.attempts.map((a) => `${a.detail}@${a.node.replace('http://', '')}`).join(' ')}`);
      } else if (stored.seq !== s.ack.seq || stored.messageId !== s.ack.messageId) {
        ackMismatches++;
        example('ackMismatches', `${s.key}: acknowledged seq ${s.ack.seq} ${s.ack.messageId}, stored seq ${stored.seq} ${stored.messageId}`);
      }
      const at = `${s.chatId}/${s.ack.seq}`;
      const other = ackedSeqOwner.get(at);
      if (other !== undefined && other !== s.key) (seqsReused++, example('seqsReused', `${at} acknowledged to ${other} and to ${s.key}`));
      ackedSeqOwner.set(at, s.key);
    } else if (!s.refused && stored) unresolvedStored++;
  }

  // Real-time order: a send first tried after another was acknowledged comes later in its chat.
  let orderViolations = 0;
  const byChat = new Map<string, SendRecord[]>();
  for (const s of input.sends) byChat.set(s.chatId, [...(byChat.get(s.chatId) ?? []), s]);
  for (const [chatId, sends] of byChat) {
    const acked = sends.filter((s) => s.ack && s.ackAt !== undefined).sort((a, b) => a.ackAt! - b.ackAt!);
    const starts = sends.filter((s) => storedByContent.has(s.content)).sort((a, b) => a.firstAt - b.firstAt);
    let i = 0;
    let maxSeq = 0;
    let maxKey = '';
    for (const s of starts) {
      while (i < acked.length && acked[i]!.ackAt! < s.firstAt) {
        if (acked[i]!.ack!.seq > maxSeq) (maxSeq = acked[i]!.ack!.seq), (maxKey = acked[i]!.key);
        i++;
      }
      const seq = storedByContent.get(s.content)!.seq;
      if (seq <= maxSeq) {
        orderViolations++;
        example('orderViolations', `${chatId.slice(0, 8)}: ${s.key} first sent after ${maxKey} was acknowledged as seq ${maxSeq}, stored at seq ${seq}`);
      }
    }
  }

  // Members against the store.
  let membersMissed = 0;
  let membersDuplicates = 0;
  let membersOutOfOrder = 0;
  let membersRedelivered = 0;
  let membersPhantoms = 0;
  let membersReplayHoles = 0;
  const memberStats: MemberStats[] = [];
  for (const member of input.members) {
    const stats: MemberStats = { member: member.name, sockets: member.sessions.length, resumedElsewhere: 0, live: 0, replayed: 0, paged: 0, resumeGaps: 0, liveGaps: 0 };
    member.sessions.forEach((s, i) => {
      if (i > 0 && s.node !== member.sessions[i - 1]!.node) stats.resumedElsewhere++;
      stats.resumeGaps += s.gaps.length;
    });
    stats.liveGaps = member.pages.filter((p) => p.reason === 'live-gap').length;
    for (const [chatId, stored] of canonical) {
      if (!member.held.has(chatId)) continue;
      const storedBySeq = new Map(stored.map((m) => [m.seq, m]));
      const held = member.held.get(chatId)!;
      for (const [, h] of held) h.via === 'live' ? stats.live++ : h.via === 'replay' ? stats.replayed++ : stats.paged++;
      const missing = stored.filter((m) => !held.has(m.seq)).map((m) => m.seq);
      if (missing.length > 0) {
        membersMissed += missing.length;
        example('membersMissed', `${member.name} lacks ${missing.length} of ${chatId.slice(0, 8)}: seqs ${missing.slice(0, 12).join(', ')}`);
      }
      for (const [seq, h] of held) {
        const m = storedBySeq.get(seq);
        if (!m || m.messageId !== h.messageId) {
          membersPhantoms++;
          example('membersPhantoms', `${member.name} got seq ${seq} of ${chatId.slice(0, 8)} (${h.via}) as ${h.messageId}; stored: ${m ? m.messageId : 'none'}`);
        }
      }
      member.sessions.forEach((session, k) => {
        const list = session.deliveries[chatId] ?? [];
        const from = session.resumeFrom[chatId] ?? 0;
        const seen = new Set<number>();
        let prev = -Infinity;
        for (const d of list) {
          if (seen.has(d.seq)) (membersDuplicates++, example('membersDuplicates', `${member.name} socket ${k} (${session.node}) was sent seq ${d.seq} of ${chatId.slice(0, 8)} twice`));
          else if (d.seq < prev) (membersOutOfOrder++, example('membersOutOfOrder', `${member.name} socket ${k}: seq ${d.seq} of ${chatId.slice(0, 8)} after ${prev}`));
          if (d.seq <= from) (membersRedelivered++, example('membersRedelivered', `${member.name} socket ${k} resumed from ${from} of ${chatId.slice(0, 8)}, was sent seq ${d.seq}${d.replay ? ' (replay)' : ''}`));
          seen.add(d.seq);
          prev = Math.max(prev, d.seq);
        }
        // A replay is every stored message after the resume point, in order, with no hole.
        const replayed = new Set(list.filter((d) => d.replay).map((d) => d.seq));
        const lastReplayed = Math.max(0, ...replayed);
        const holes = stored.filter((m) => m.seq > from && m.seq < lastReplayed && !replayed.has(m.seq)).map((m) => m.seq);
        if (holes.length) {
          membersReplayHoles += holes.length;
          example('membersReplayHoles', `${member.name} socket ${k} (${session.node}) resumed from ${from} of ${chatId.slice(0, 8)}: its replay skipped stored seqs ${holes.slice(0, 10).join(', ')}`);
        }
      });
    }
    memberStats.push(stats);
  }

  const ackTimes = input.sends.flatMap((s) => (s.ackAt === undefined ? [] : [s.ackAt]));
  const worstChat = worstStall(byChat, input.loadFrom, input.loadTo);
  const afterHeal = input.healedAt === undefined ? [] : ackTimes.filter((x) => x >= input.healedAt!);
  return {
    attempted: input.sends.length,
    acknowledged: input.sends.filter((s) => s.ack).length,
    refused: input.sends.filter((s) => s.refused).length,
    unknownOutcomes: input.sends.reduce((n, s) => n + s.attempts.filter((a) => a.outcome === 'unknown').length, 0),
    outcomeUnknownAnswers: input.sends.reduce((n, s) => n + s.attempts.filter((a) => a.detail === 'OUTCOME_UNKNOWN').length, 0),
    unresolved: input.sends.filter((s) => !s.ack && !s.refused).length,
    unresolvedStored,
    longestStallMs: longestGap(ackTimes, input.loadFrom, input.loadTo),
    worstChatStallMs: worstChat.ms,
    worstChatStall: worstChat.description,
    recoverMs: afterHeal.length === 0 ? null : Math.round(Math.min(...afterHeal) - input.healedAt!),
    stored: [...canonical.values()].reduce((n, l) => n + l.length, 0),
    lost,
    duplicated,
    seqsReused,
    ackMismatches,
    orderViolations,
    historyDisorder,
    historiesDiffer,
    rowsDiffer,
    membersMissed,
    membersDuplicates,
    membersOutOfOrder,
    membersRedelivered,
    membersPhantoms,
    membersReplayHoles,
    memberStats,
    examples,
  };
}
