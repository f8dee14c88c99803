import type { Migration } from '../../../common/cassandra/index.ts';
import { copyFirstLayout } from './copy-first-layout.ts';
import { backfillSearch } from './search-backfill.ts';
import { indexUserChats } from './user-chat-index.ts';

/**
 * The node's tables. Every partition key starts with the application id, and every partition is
 * bounded (the bound is stated beside each table of migration 004).
 *
 * Messages (004): `chat_messages`, partitioned by (app, chat, seq block: seq / 1024) and clustered
 * by seq, newest first, holds one row per message. A message id carries its seq (see
 * node/store/message-id.ts), so a lookup by id, a history page from an id, a resume after a seq and
 * the newest page each read O(result) rows of one or two partitions, with no index row per message.
 * `message_changes` indexes writes that changed a message (edits, deletes, reactions), by revision;
 * a message's first write records its revision in the row instead (`crev`). `send_keys` finds a
 * retried send by its idempotency key for 24 hours. The chat's members partition carries, as
 * static columns, which node writes the chat and the numbers it has taken (see leases.ts).
 *
 * Migrations 001–003 made the first layout (messages by day bucket with an index row per seq,
 * revision and bucket, and a compare-and-set head per batch); 005 copies its messages into the
 * layout of 004. Its tables are left in place, unused, for the operator to drop.
 */
export const nodeMigrations: Migration[] = [
  {
    name: 'node-001-initial',
    statements: [
      `CREATE TABLE IF NOT EXISTS {ks}.users (app_id text, id text, username text, display_name text, created_at text, updated_at text, PRIMARY KEY ((app_id, id)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.usernames (app_id text, username text, user_id text, PRIMARY KEY ((app_id, username)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.user_families (app_id text, id text, user_id text, expires_at text, revoked_at text, PRIMARY KEY ((app_id, id)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.user_families_by_user (app_id text, user_id text, family_id text, PRIMARY KEY ((app_id, user_id), family_id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.user_tokens (app_id text, hash text, family_id text, user_id text, expires_at text, used_at text, PRIMARY KEY ((app_id, hash)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.chats (app_id text, id text, kind text, name text, created_by text, created_at text, updated_at text, last_seq bigint, last_activity_at text, PRIMARY KEY ((app_id, id)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.chat_members (app_id text, chat_id text, user_id text, role text, joined_at text, read_seq bigint, PRIMARY KEY ((app_id, chat_id), user_id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.user_chats (app_id text, user_id text, chat_id text, PRIMARY KEY ((app_id, user_id), chat_id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.direct_pairs (app_id text, low text, high text, chat_id text, PRIMARY KEY ((app_id, low, high)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.messages (app_id text, chat_id text, bucket bigint, id text, seq bigint, sender_id text, content text, created_at text, edited_at text, deleted_at text, reply_to_id text, reactions text, client_key text, rev bigint, PRIMARY KEY ((app_id, chat_id, bucket), id)) WITH CLUSTERING ORDER BY (id DESC)`,
      `CREATE TABLE IF NOT EXISTS {ks}.message_buckets (app_id text, chat_id text, bucket bigint, PRIMARY KEY ((app_id, chat_id), bucket)) WITH CLUSTERING ORDER BY (bucket DESC)`,
      `CREATE TABLE IF NOT EXISTS {ks}.message_seqs (app_id text, chat_id text, seq bigint, bucket bigint, id text, PRIMARY KEY ((app_id, chat_id), seq))`,
      `CREATE TABLE IF NOT EXISTS {ks}.message_revs (app_id text, chat_id text, rev bigint, bucket bigint, id text, PRIMARY KEY ((app_id, chat_id), rev))`,
      `CREATE TABLE IF NOT EXISTS {ks}.message_keys (app_id text, chat_id text, sender_id text, client_key text, id text, PRIMARY KEY ((app_id, chat_id, sender_id, client_key)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.node_signing_keys (scope text, kid text, key text, PRIMARY KEY (scope))`,
    ],
  },
  {
    name: 'node-002-chat-heads',
    statements: [
      // A chat's head (last seq and revision), moved by compare-and-set with every fenced put.
      `CREATE TABLE IF NOT EXISTS {ks}.chat_heads (app_id text, chat_id text, seq bigint, rev bigint, PRIMARY KEY ((app_id, chat_id)))`,
    ],
  },
  {
    name: 'node-003-chat-head-writer',
    statements: [
      // The put that moved the head last. A compare-and-set that timed out is known to be applied
      // by finding its own writer there: two writers racing from one head set the same seq and rev.
      `ALTER TABLE {ks}.chat_heads ADD writer text`,
    ],
  },
  {
    name: 'node-004-chat-log',
    statements: [
      // Which node writes the chat (a lease: `writer` expires with a TTL unless renewed) and the
      // numbers it has taken; in the members partition so that membership writes are fenced by
      // the same compare-and-set. See leases.ts for the protocol and its safety argument.
      `ALTER TABLE {ks}.chat_members ADD (writer_epoch bigint static, writer text static, seq_taken bigint static, rev_taken bigint static)`,
      // One row per message; a partition holds the seqs of one block of 1024, so at most 1024 rows.
      `CREATE TABLE IF NOT EXISTS {ks}.chat_messages (app_id text, chat_id text, block bigint, seq bigint, id text, sender_id text, content text, created_at text, edited_at text, deleted_at text, reply_to_id text, reactions text, client_key text, rev bigint, crev bigint, PRIMARY KEY ((app_id, chat_id, block), seq)) WITH CLUSTERING ORDER BY (seq DESC)`,
      // Only for ids that do not carry their seq (messages of the first layout): one row each.
      `CREATE TABLE IF NOT EXISTS {ks}.message_ids (app_id text, chat_id text, id text, seq bigint, PRIMARY KEY ((app_id, chat_id, id)))`,
      // The latest change of each changed message, by revision; a partition holds one block of
      // 1024 revisions, so at most 1024 rows (superseded rows are deleted).
      `CREATE TABLE IF NOT EXISTS {ks}.message_changes (app_id text, chat_id text, block bigint, rev bigint, seq bigint, PRIMARY KEY ((app_id, chat_id, block), rev))`,
      // A sender's idempotency key → the message it sent; one row per partition, kept 24 hours.
      `CREATE TABLE IF NOT EXISTS {ks}.send_keys (app_id text, chat_id text, sender_id text, client_key text, seq bigint, id text, PRIMARY KEY ((app_id, chat_id, sender_id, client_key))) WITH default_time_to_live = 86400`,
    ],
  },
  {
    name: 'node-005-copy-first-layout',
    statements: [],
    data: copyFirstLayout,
  },
  {
    name: 'node-006-signing-keyring',
    statements: [
      // The keys a rotation writes (the new one, and the others with their retirement);
      // `node_signing_keys` keeps the first key and, in `kid`, the key the latest rotation stored
      // (the compare-and-set that serializes rotations).
      `CREATE TABLE IF NOT EXISTS {ks}.node_signing_keyring (scope text, kid text, key text, PRIMARY KEY ((scope), kid))`,
    ],
  },
  {
    name: 'node-007-user-chat-index',
    statements: [
      // A user's chats by activity (see user-chat-index.ts); a partition holds one user's chats, at
      // most USER_CHATS_MAX rows (plus stale entries until a read deletes them).
      `ALTER TABLE {ks}.user_chats ADD (member boolean, activity_at text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.user_chat_activity (app_id text, user_id text, activity_at text, chat_id text, PRIMARY KEY ((app_id, user_id), activity_at, chat_id)) WITH CLUSTERING ORDER BY (activity_at DESC, chat_id DESC)`,
      `CREATE TABLE IF NOT EXISTS {ks}.user_chat_counts (app_id text, user_id text, chats counter, PRIMARY KEY ((app_id, user_id)))`,
    ],
    data: indexUserChats,
  },
  {
    name: 'node-008-webhook-outbox',
    statements: [
      // Each node's webhook events (see outbox.ts): a partition holds one owner's events of ten
      // minutes, and rows expire after 25 hours.
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_outbox (owner text, slot bigint, id text, app_id text, type text, body text, check_chat text, check_message text, check_rev bigint, done list<text>, finished boolean, PRIMARY KEY ((owner, slot), id)) WITH default_time_to_live = 90000`,
      // The owners (one row per node start, removed once its outbox is finished and it is gone)
      // and each one's low-water mark.
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_outbox_owners (shard int, owner text, low text, seen timestamp, PRIMARY KEY ((shard), owner))`,
    ],
  },
  {
    name: 'node-009-outbox-change-checks',
    statements: [
      // The check of a chat, member or user event written before its change (see outbox.ts), as JSON.
      `ALTER TABLE {ks}.webhook_outbox ADD check_state text`,
    ],
  },
  {
    name: 'node-010-moderation',
    statements: [
      // Bans in force (see moderation.ts): one partition per application, timed bans expire by TTL.
      `CREATE TABLE IF NOT EXISTS {ks}.user_bans (app_id text, user_id text, reason text, expires_at text, created_at text, by_whom text, PRIMARY KEY ((app_id), user_id))`,
      // The moderation log: one partition per application and month, newest first, kept 90 days.
      `CREATE TABLE IF NOT EXISTS {ks}.moderation_actions (app_id text, month text, id text, at text, action text, user_id text, by_whom text, reason text, expires_at text, PRIMARY KEY ((app_id, month), id)) WITH CLUSTERING ORDER BY (id DESC) AND default_time_to_live = 7776000`,
    ],
  },
  {
    name: 'node-011-user-blocks',
    statements: [
      // Whom each user blocks (see moderation.ts): a partition per blocking user, its count static.
      `CREATE TABLE IF NOT EXISTS {ks}.user_blocks (app_id text, user_id text, blocked_id text, blocked_at text, blocked_count int static, PRIMARY KEY ((app_id, user_id), blocked_id))`,
    ],
  },
  {
    name: 'node-012-blocklists',
    statements: [
      // Each application's blocklist, one row (at most 10,000 entries of 100 characters, as JSON).
      `CREATE TABLE IF NOT EXISTS {ks}.blocklists (app_id text, entries_json text, list_version text, updated_at text, PRIMARY KEY (app_id))`,
    ],
  },
  {
    name: 'node-013-chat-moderation',
    statements: [
      // A member's mute, as JSON (see chats.ts): written with the member, fenced like its other writes.
      `ALTER TABLE {ks}.chat_members ADD mute text`,
      // Bans from one chat (see moderation.ts): a partition per chat, timed bans end by TTL.
      `CREATE TABLE IF NOT EXISTS {ks}.chat_bans (app_id text, chat_id text, user_id text, reason text, expires_at text, created_at text, by_whom text, PRIMARY KEY ((app_id, chat_id), user_id))`,
      `ALTER TABLE {ks}.moderation_actions ADD (chat_id text, message_id text)`,
      // Flags (see flags.ts): who flagged a message (a partition per message, bounded by the chat's
      // members), the open review queue (a partition per application and month, newest first, kept
      // 90 days), and each application's moderation settings.
      `CREATE TABLE IF NOT EXISTS {ks}.message_flags (app_id text, chat_id text, message_id text, flagged_by text, id text, open boolean, PRIMARY KEY ((app_id, chat_id, message_id), flagged_by))`,
      `CREATE TABLE IF NOT EXISTS {ks}.open_flags (app_id text, month text, id text, chat_id text, message_id text, sender_id text, flagged_by text, reason text, created_at text, PRIMARY KEY ((app_id, month), id)) WITH CLUSTERING ORDER BY (id DESC) AND default_time_to_live = 7776000`,
      `CREATE TABLE IF NOT EXISTS {ks}.moderation_settings (app_id text, flag_hide_threshold int, PRIMARY KEY (app_id))`,
      // A message hidden pending review (see message-rows.ts).
      `ALTER TABLE {ks}.chat_messages ADD hidden_at text`,
    ],
  },
  {
    name: 'node-014-member-count',
    statements: [
      // How many members a chat has, written with the chat row by its actor (see Chat.memberCount).
      `ALTER TABLE {ks}.chats ADD member_count int`,
    ],
  },
  {
    name: 'node-015-session-markers',
    statements: [
      // Who rotated a refresh token and who revoked a family (see users.ts): a compare-and-set
      // that timed out is known to be applied by finding its own marker there.
      `ALTER TABLE {ks}.user_tokens ADD rotated_to text`,
      `ALTER TABLE {ks}.user_families ADD revoked_by text`,
    ],
  },
  {
    name: 'node-016-message-attachments',
    statements: [
      // The files a message carries, as JSON metadata (see message-rows.ts): the bytes are in the object store.
      `ALTER TABLE {ks}.chat_messages ADD attachments text`,
      // Which message carries each upload: written with the message, read by a send that names it.
      `CREATE TABLE IF NOT EXISTS {ks}.attachment_holders (app_id text, chat_id text, upload_id text, message_id text, PRIMARY KEY ((app_id, chat_id), upload_id))`,
    ],
  },
  {
    name: 'node-017-custom-data',
    statements: [
      // An application's own data (JSON, at most 4 KB) on messages, chats and users, and a message's
      // type (`system`, or null for a regular one); see message-rows.ts, chats.ts, users.ts.
      `ALTER TABLE {ks}.chat_messages ADD (type text, data text)`,
      `ALTER TABLE {ks}.chats ADD data text`,
      `ALTER TABLE {ks}.users ADD data text`,
    ],
  },
  {
    name: 'node-018-mentions-pins',
    statements: [
      // The members a message mentions, as JSON (see message-rows.ts).
      `ALTER TABLE {ks}.chat_messages ADD mentions text`,
      // Each member's mentions, for its mention count: a partition holds one member's mentions
      // among one block of 1024 seqs, so at most 1024 rows; a count reads at most five.
      `CREATE TABLE IF NOT EXISTS {ks}.chat_mentions (app_id text, chat_id text, user_id text, block bigint, seq bigint, PRIMARY KEY ((app_id, chat_id, user_id, block), seq)) WITH CLUSTERING ORDER BY (seq DESC)`,
      // A chat's pinned messages (at most 50), as JSON with the chat row (see chats.ts).
      `ALTER TABLE {ks}.chats ADD pins text`,
    ],
  },
  {
    name: 'node-019-threads',
    statements: [
      // A reply's parent, a parent's thread summary as JSON, and the seq of a reply's other copy
      // when it is shown in the chat too (see message-rows.ts). Replies
      // live in their thread's log, `chat_messages` rows under the key `<chatId>:<parentId>`
      // (node/store/thread-log.ts), bounded by seq block as a chat's are.
      `ALTER TABLE {ks}.chat_messages ADD (parent_id text, thread text, copy_seq bigint)`,
      // A user's threads (followed, or unfollowed explicitly) with its read mark and the thread's
      // newest reply: one partition per user, at most THREAD_LIMITS.follows rows (the node forgets
      // the least recently active past it). The inbox reads the partition whole.
      `CREATE TABLE IF NOT EXISTS {ks}.user_threads (app_id text, user_id text, chat_id text, parent_id text, following boolean, read_seq bigint, last_seq bigint, activity_at text, PRIMARY KEY ((app_id, user_id), chat_id, parent_id))`,
      // A thread's followers: one partition per thread, at most the chat's members.
      `CREATE TABLE IF NOT EXISTS {ks}.thread_followers (app_id text, chat_id text, parent_id text, user_id text, following boolean, PRIMARY KEY ((app_id, chat_id, parent_id), user_id))`,
    ],
  },
  {
    name: 'node-020-thread-inbox',
    statements: [
      // A user's followed threads by activity, newest first, what the threads inbox pages through
      // (see threads.ts): one partition per user, at most its rows in user_threads (1,000) plus
      // the entries a write that failed half-way left behind.
      `CREATE TABLE IF NOT EXISTS {ks}.user_thread_activity (app_id text, user_id text, activity_at text, chat_id text, parent_id text, PRIMARY KEY ((app_id, user_id), activity_at, chat_id, parent_id)) WITH CLUSTERING ORDER BY (activity_at DESC, chat_id DESC, parent_id DESC)`,
      // A user's followed threads with unread replies: one partition per user, at most its rows.
      `CREATE TABLE IF NOT EXISTS {ks}.user_unread_threads (app_id text, user_id text, chat_id text, parent_id text, PRIMARY KEY ((app_id, user_id), chat_id, parent_id))`,
    ],
  },
  {
    name: 'node-021-search',
    statements: [
      // A term's messages (search.ts), newest first: one partition per application, term and hour
      // (of the message id's time), so at most the application's messages of one hour (360,000 at
      // a sustained 100 messages a second, about 20 MB); `log_id` is the chat's or a thread's log.
      `CREATE TABLE IF NOT EXISTS {ks}.search_postings (app_id text, term text, hour bigint, id text, log_id text, PRIMARY KEY ((app_id, term, hour), id, log_id)) WITH CLUSTERING ORDER BY (id DESC, log_id ASC)`,
      // The hours a term has messages in, newest first: one partition per application and term,
      // at most 24 rows a day (8,760 a year).
      `CREATE TABLE IF NOT EXISTS {ks}.search_term_hours (app_id text, term text, hour bigint, PRIMARY KEY ((app_id, term), hour)) WITH CLUSTERING ORDER BY (hour DESC)`,
      // The application's terms by their first character, for prefixes: one partition per
      // application and first character, at most the application's distinct terms starting with it.
      `CREATE TABLE IF NOT EXISTS {ks}.search_terms (app_id text, lead text, term text, PRIMARY KEY ((app_id, lead), term))`,
    ],
  },
  {
    // The search backfill's progress table. It indexed the messages written before node-021; that
    // run is node-026's now (it would write a table made only there).
    name: 'node-022-search-backfill',
    statements: [
      // A backfill's progress, a row per run (`day_hours`: node-026's): the token of the last partition indexed, the messages indexed.
      `CREATE TABLE IF NOT EXISTS {ks}.search_backfill (name text PRIMARY KEY, last_token bigint, messages bigint, done boolean)`,
    ],
  },
  {
    // Postings by hour and shard of the term (search.ts SearchRows: a request's postings in a few
    // partitions, not one each), in place of node-021's by term and hour, which are dropped. It
    // indexed every message into them; that run is node-026's now (it writes tables made only there).
    name: 'node-023-search-shards',
    statements: [
      // A shard of an application's postings of one hour (the message id's), by term, then newest
      // first: at most the application's words of that hour / SEARCH_SHARDS (16) rows, each term's
      // slice one read; 200,000 rows (about 12 MB) at a sustained 100 messages of 9 words a second.
      `CREATE TABLE IF NOT EXISTS {ks}.search_hour_postings (app_id text, hour bigint, shard int, term text, id text, log_id text, PRIMARY KEY ((app_id, hour, shard), term, id, log_id)) WITH CLUSTERING ORDER BY (term ASC, id DESC, log_id ASC)`,
      `DROP TABLE IF EXISTS {ks}.search_postings`,
    ],
  },
  {
    name: 'node-024-push-devices',
    statements: [
      // A user's push devices (push.ts): at most PUSH_DEVICES_PER_USER (10) rows a partition.
      `CREATE TABLE IF NOT EXISTS {ks}.push_devices (app_id text, user_id text, device_id text, address_json text, created_at text, PRIMARY KEY ((app_id, user_id), device_id))`,
      // Each address's one owner (a sha-256 of the Web Push endpoint, or of the provider and token).
      `CREATE TABLE IF NOT EXISTS {ks}.push_device_addresses (app_id text, address_key text, user_id text, device_id text, PRIMARY KEY ((app_id, address_key)))`,
    ],
  },
  {
    name: 'node-025-push-chat-mutes',
    statements: [
      // The chats whose pushes a user turned off (push.ts): a partition per user, a row per chat.
      `CREATE TABLE IF NOT EXISTS {ks}.push_chat_mutes (app_id text, user_id text, chat_id text, PRIMARY KEY ((app_id, user_id), chat_id))`,
    ],
  },
  {
    // A term's hours in a partition of the application's day, in place of node-021's partition per
    // term (a word seen for the first time cost a partition write of its own: see search.ts
    // SearchRows), and the days a term has in its dictionary row, which a search reads first. Then
    // every message is indexed (search-backfill.ts), going on from where an interrupted run saved
    // its progress. It reads all of `chat_messages`: for a large keyspace, run `npm run schema`
    // before starting the nodes of this version, rather than letting the first node to start do it
    // (and wait for it). `npm run schema -- reindex` runs it again. `search_term_hours` is left in
    // place, unused, for the operator to drop: nodes of the earlier version write it until they
    // are upgraded (their messages of that time are indexed by a reindex afterwards).
    name: 'node-026-search-days',
    statements: [
      // An application's (term, hour) pairs of one day (UTC), by term, then newest first: a term's
      // hours of the day one read of at most 24 rows. A row of a word and a number for each word of
      // each hour: about what one of the hour's 16 postings partitions holds, a day of them.
      `CREATE TABLE IF NOT EXISTS {ks}.search_day_hours (app_id text, day int, term text, hour bigint, PRIMARY KEY ((app_id, day), term, hour)) WITH CLUSTERING ORDER BY (term ASC, hour DESC)`,
      // The days the term has messages in: at most 366 a year.
      `ALTER TABLE {ks}.search_terms ADD days set<int>`,
    ],
    data: (client, ks) => backfillSearch(client, ks).then(() => undefined),
  },
];
