import type { Migration } from '../../../common/cassandra/index.ts';

/**
 * The node's tables. Every partition key starts with the application id. Messages are partitioned
 * by (app, chat, UTC day bucket) and clustered by their UUIDv7 id as text (text sorts v7 ids by
 * time; Cassandra's uuid type would not), newest first; side tables index a chat's non-empty
 * buckets, its seqs, the latest revision of each message, and senders' idempotency keys, so every
 * query reads O(result) rows.
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
];
