import type { Migration } from '../../../common/cassandra/index.ts';

/**
 * The control service's tables. Accounts are partitioned by id with an e-mail claim table;
 * applications by owning account, keys by application; limits are held as numbered slots claimed
 * with compare-and-set, so concurrent creates never pass them. Cluster registry and signing keys
 * sit under a `scope` (one per control deployment sharing the keyspace).
 */
/**
 * Options of a table whose rows only expire (the delivery logs): rows live `seconds`, compacted by
 * time windows of `windowHours` (a few dozen windows over a row's life), tombstones kept an hour.
 */
const expiring = (seconds: number, windowHours: number) =>
  `default_time_to_live = ${seconds} AND gc_grace_seconds = 3600 AND compaction = {'class': 'TimeWindowCompactionStrategy', 'compaction_window_unit': 'HOURS', 'compaction_window_size': ${windowHours}}`;
/** A day, for the webhook delivery log. */
const EXPIRING = expiring(86_400, 1);
/** A week, for the push delivery log (its bound is argued in push-deliveries.ts). */
export const PUSH_DELIVERY_TTL_SECONDS = 7 * 86_400;

export const controlMigrations: Migration[] = [
  {
    name: 'control-001-initial',
    statements: [
      `CREATE TABLE IF NOT EXISTS {ks}.accounts (id text PRIMARY KEY, email text, company_name text, role text, password_hash text, password_salt text, created_at text, updated_at text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.account_emails (email text PRIMARY KEY, account_id text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.session_families (id text PRIMARY KEY, account_id text, created_at text, expires_at text, revoked_at text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.session_families_by_account (account_id text, family_id text, PRIMARY KEY ((account_id), family_id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.refresh_tokens (hash text PRIMARY KEY, family_id text, account_id text, expires_at text, used_at text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.applications (client_id text, id text, name text, status text, type text, tier text, cluster_id text, created_at text, updated_at text, slot int, PRIMARY KEY ((client_id), id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.applications_by_id (id text PRIMARY KEY, client_id text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.application_slots (client_id text, slot int, app_id text, PRIMARY KEY ((client_id), slot))`,
      `CREATE TABLE IF NOT EXISTS {ks}.api_keys (app_id text, id text, token_hash text, key_prefix text, audience text, tier text, created_at text, revoked_at text, slot int, PRIMARY KEY ((app_id), id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.api_key_slots (app_id text, slot int, key_id text, PRIMARY KEY ((app_id), slot))`,
      `CREATE TABLE IF NOT EXISTS {ks}.clusters (scope text, name text, id text, endpoint text, status text, created_at text, PRIMARY KEY ((scope, name)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.clusters_by_id (scope text, id text, name text, PRIMARY KEY ((scope, id)))`,
      `CREATE TABLE IF NOT EXISTS {ks}.control_signing_keys (scope text PRIMARY KEY, kid text, key text)`,
    ],
  },
  {
    name: 'control-002-signing-keyring',
    statements: [
      // The keys a rotation writes (the new one, and the others with their retirement), one
      // partition per scope; `control_signing_keys` keeps the first key and, in `kid`, the key the
      // latest rotation stored (the compare-and-set that serializes rotations).
      `CREATE TABLE IF NOT EXISTS {ks}.control_signing_keyring (scope text, kid text, key text, PRIMARY KEY ((scope), kid))`,
    ],
  },
  {
    name: 'control-003-mfa',
    statements: [
      // TOTP enrolments (a confirmed secret, or a pending one), their recovery codes (hashed; used_at
      // '' while unused) and the login challenges already used (kept by TTL past their expiry).
      `CREATE TABLE IF NOT EXISTS {ks}.account_mfa (account_id text PRIMARY KEY, pending_secret text, secret text, enabled_at text, last_step int)`,
      `CREATE TABLE IF NOT EXISTS {ks}.account_mfa_recovery (account_id text, hash text, used_at text, PRIMARY KEY ((account_id), hash))`,
      `CREATE TABLE IF NOT EXISTS {ks}.mfa_challenges_used (id text PRIMARY KEY)`,
    ],
  },
  {
    name: 'control-004-usage',
    statements: [
      // Usage per application, written by the nodes (see control/store/types/usage.ts): sums as
      // counters, a node's daily peak per row (expiring after 40 days), the newest concurrent-user
      // sample, and each key's last use.
      `CREATE TABLE IF NOT EXISTS {ks}.usage_totals (app_id text, metric text, value counter, PRIMARY KEY ((app_id), metric))`,
      `CREATE TABLE IF NOT EXISTS {ks}.usage_daily (app_id text, day text, messages counter, PRIMARY KEY ((app_id), day))`,
      `CREATE TABLE IF NOT EXISTS {ks}.usage_peaks (app_id text, day text, node_id text, peak int, PRIMARY KEY ((app_id), day, node_id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.usage_current (app_id text PRIMARY KEY, users int, at text)`,
      `CREATE TABLE IF NOT EXISTS {ks}.usage_key_use (app_id text, key_id text, at text, PRIMARY KEY ((app_id), key_id))`,
    ],
  },
  {
    name: 'control-005-webhooks',
    statements: [
      // Webhook endpoints per application, and the slots that hold their limit (as for API keys).
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_endpoints (app_id text, id text, url text, events list<text>, description text, status text, disabled_reason text, secret text, created_at text, updated_at text, slot int, PRIMARY KEY ((app_id), id))`,
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_slots (app_id text, slot int, endpoint_id text, PRIMARY KEY ((app_id), slot))`,
    ],
  },
  {
    name: 'control-006-webhook-deliveries',
    statements: [
      // Each endpoint's delivery log, kept 24 hours: attempts by endpoint and minute, newest first;
      // the minutes that hold attempts; an attempt's time by its id. The bounds are argued in
      // control/store/cassandra/webhook-deliveries.ts. Rows only expire (no updates), hence time
      // window compaction, and tombstones kept an hour: anything a replica might bring back expires.
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_deliveries (app_id text, endpoint_id text, minute text, at text, id text, event_id text, type text, attempt int, status text, status_code int, duration_ms int, error text, next_retry_at text, body text, PRIMARY KEY ((app_id, endpoint_id, minute), at, id)) WITH CLUSTERING ORDER BY (at DESC, id DESC) AND ${EXPIRING}`,
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_delivery_minutes (app_id text, endpoint_id text, minute text, PRIMARY KEY ((app_id, endpoint_id), minute)) WITH CLUSTERING ORDER BY (minute DESC) AND ${EXPIRING}`,
      `CREATE TABLE IF NOT EXISTS {ks}.webhook_delivery_ids (app_id text, endpoint_id text, id text, at text, PRIMARY KEY ((app_id, endpoint_id, id))) WITH ${EXPIRING}`,
    ],
  },
  {
    name: 'control-007-before-send',
    statements: [
      // Each application's before-send hook (at most one), written by compare-and-set only.
      `CREATE TABLE IF NOT EXISTS {ks}.before_send_hooks (app_id text PRIMARY KEY, url text, timeout_ms int, failure_policy text, secret text, created_at text, updated_at text)`,
    ],
  },
  {
    name: 'control-008-key-suffix',
    statements: [
      // The last 4 characters of each new key's token, which tell keys apart in lists.
      `ALTER TABLE {ks}.api_keys ADD key_suffix text`,
    ],
  },
  {
    name: 'control-009-attachment-settings',
    statements: [
      // Each application's attachment settings, one row, replaced whole by each set.
      `CREATE TABLE IF NOT EXISTS {ks}.attachment_settings (app_id text PRIMARY KEY, settings_json text, updated_at text)`,
    ],
  },
  {
    name: 'control-010-push-settings',
    statements: [
      // Each application's push settings, a row per part (options, webPush, apns, fcm), each replaced whole by its set.
      `CREATE TABLE IF NOT EXISTS {ks}.push_settings (app_id text, part text, value_json text, updated_at text, PRIMARY KEY (app_id, part))`,
    ],
  },
  {
    name: 'control-011-push-deliveries',
    statements: [
      // Each application's push delivery log, kept 7 days: attempts by stream (`all`, or one
      // provider) and minute, newest first, and the minutes that hold attempts. The bounds are
      // argued in control/store/cassandra/push-deliveries.ts.
      `CREATE TABLE IF NOT EXISTS {ks}.push_deliveries (app_id text, stream text, minute text, at text, id text, provider text, event_id text, message_id text, user_id text, device_id text, attempt int, result text, status_code int, reason text, duration_ms int, next_retry_at text, PRIMARY KEY ((app_id, stream, minute), at, id)) WITH CLUSTERING ORDER BY (at DESC, id DESC) AND ${expiring(PUSH_DELIVERY_TTL_SECONDS, 6)}`,
      `CREATE TABLE IF NOT EXISTS {ks}.push_delivery_minutes (app_id text, stream text, minute text, PRIMARY KEY ((app_id, stream), minute)) WITH CLUSTERING ORDER BY (minute DESC) AND ${expiring(PUSH_DELIVERY_TTL_SECONDS, 6)}`,
    ],
  },
];
