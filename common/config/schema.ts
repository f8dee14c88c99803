import Type, { type Static } from 'typebox';

/**
 * Every setting of both services, named as its environment variable. This schema is the single
 * source for types, defaults and the README's configuration table (a test keeps them in step).
 */
export const ConfigSchema = Type.Object({
  ROLE: Type.Union([Type.Literal('standalone'), Type.Literal('control'), Type.Literal('node')], {
    default: 'standalone',
    description: 'What this process runs: `standalone` (control service and one node), `control`, or `node`.',
  }),
  HOST: Type.String({ default: '127.0.0.1', minLength: 1, description: 'Interface to listen on; `0.0.0.0` to accept connections from other machines.' }),
  CONTROL_PORT: Type.Integer({ default: 8080, minimum: 0, maximum: 65535, description: 'Port of the control (management) service; 0 picks a free port.' }),
  NODE_PORT: Type.Integer({ default: 8081, minimum: 0, maximum: 65535, description: 'Port of the cluster node (REST and WebSocket); 0 picks a free port.' }),
  DATA_DIR: Type.String({ default: './data', minLength: 1, description: 'Directory of the embedded store (LMDB) and nothing else.' }),
  STORE: Type.Union([Type.Literal('embedded'), Type.Literal('cassandra')], {
    default: 'embedded',
    description: 'Where durable state lives: `embedded` (LMDB under DATA_DIR, one machine) or `cassandra` (Cassandra or ScyllaDB, shared by every process of a cluster).',
  }),
  CASSANDRA_CONTACT_POINTS: Type.String({ default: '127.0.0.1:9042', minLength: 1, description: 'Comma-separated host:port of Cassandra/ScyllaDB nodes (STORE=cassandra).' }),
  CASSANDRA_LOCAL_DC: Type.String({ default: 'datacenter1', minLength: 1, description: 'Data center the driver treats as local.' }),
  CASSANDRA_KEYSPACE: Type.String({ default: 'chat', pattern: '^[a-z][a-z0-9_]{0,47}$', description: 'Keyspace holding every table.' }),
  CASSANDRA_REPLICATION_FACTOR: Type.Integer({ default: 1, minimum: 1, maximum: 9, description: 'Replication factor of the keyspace when the schema command creates it (SimpleStrategy).' }),
  BUS: Type.Union([Type.Literal('memory'), Type.Literal('redis')], {
    default: 'memory',
    description: 'How nodes exchange events: `memory` (one process) or `redis` (between the nodes of a cluster; needs STORE=cassandra).',
  }),
  REDIS_URL: Type.String({ default: 'redis://127.0.0.1:6379', minLength: 1, description: 'Redis to route events through (BUS=redis); a password goes in it (redis://:password@host:port), and rediss:// connects over TLS.' }),
  REDIS_TLS_CA_FILE: Type.String({ default: '', description: "With a rediss:// REDIS_URL: a PEM file of the certificate authorities that Redis's certificate is checked against, instead of the system's (for a private CA)." }),
  REDIS_CLUSTER_NODES: Type.String({
    default: '',
    pattern: '^$|^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}(,(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5})*$',
    description: 'Comma-separated host:port of nodes of a Redis Cluster (BUS=redis): when set, the bus, the node list and presence use that cluster (sharded pub/sub) instead of the one Redis at REDIS_URL, whose user, password and rediss:// still apply to every cluster node. A few nodes suffice; the others are discovered.',
  }),
  NODE_RPC_PORT: Type.Integer({
    default: 0,
    minimum: 0,
    maximum: 65535,
    description: 'Port on HOST of the node-to-node listener (BUS=redis): the authenticated TCP connection over which nodes forward chat operations to the chat\'s owner. Never the public port; 0 picks a free port.',
  }),
  NODE_RPC_ADDRESS: Type.String({
    default: '',
    pattern: '^$|^(\\[[0-9A-Fa-f:.]+\\]|[A-Za-z0-9.-]+):[0-9]{1,5}$',
    description: '`host:port` at which the other nodes reach this node\'s node-to-node listener (BUS=redis), announced in the live node list. Defaults to HOST and the bound NODE_RPC_PORT (127.0.0.1 when HOST is 0.0.0.0 or ::): set it when nodes run on several machines.',
  }),
  CONTROL_PUBLIC_URL: Type.String({ default: '', description: 'URL at which clients reach the control service; defaults to http://HOST:CONTROL_PORT.' }),
  NODE_PUBLIC_URL: Type.String({ default: '', description: 'URL at which clients reach the cluster; returned as `clusterEndpoint`. Defaults to http://HOST:NODE_PORT.' }),
  CLUSTER_NAME: Type.String({ default: 'demo', pattern: '^[a-z0-9][a-z0-9-]{0,62}$', description: 'Name of the cluster this deployment serves; the `aud` of its API keys.' }),
  CORS_ORIGINS: Type.String({ default: '', description: 'Comma-separated browser origins allowed to call the services, or `*`. Empty allows none.' }),
  TRUST_PROXY: Type.Boolean({ default: false, description: 'Take the client address from `X-Forwarded-For` (set only behind your own proxy): the entry TRUSTED_PROXY_HOPS from the right.' }),
  TRUSTED_PROXY_HOPS: Type.Integer({ default: 1, minimum: 1, maximum: 10, description: 'With TRUST_PROXY: how many proxies of your own each append an address to `X-Forwarded-For`; the client is that many entries from the right, and entries further left (the client\'s own claims) are ignored.' }),
  MAX_BODY_BYTES: Type.Integer({ default: 65536, minimum: 1024, maximum: 16777216, description: 'Largest accepted request body; larger ones get 413 while streaming.' }),
  LOGIN_MAX_FAILURES: Type.Integer({ default: 5, minimum: 1, description: 'Wrong passwords per account and client address before each further attempt from that address waits (1 s, doubling); counts end LOGIN_WINDOW_SECONDS after the last failure.' }),
  LOGIN_MAX_PER_ADDRESS: Type.Integer({ default: 30, minimum: 1, description: 'Login and register attempts per client address within LOGIN_WINDOW_SECONDS before 429.' }),
  MFA_TOKEN_TTL_SECONDS: Type.Integer({ default: 300, minimum: 1, maximum: 3600, description: 'Lifetime of the login challenge (mfaToken) a login returns when the account has MFA on: the code must be verified within it.' }),
  LOGIN_WINDOW_SECONDS: Type.Integer({ default: 900, minimum: 1, description: 'Window of the login throttles.' }),
  KEY_STATUS_TTL_MS: Type.Integer({ default: 500, minimum: 0, maximum: 1000, description: 'How long a node trusts a cached API-key status; bounds how late a revocation is seen.' }),
  USER_JWT_TTL_SECONDS: Type.Integer({ default: 900, minimum: 5, maximum: 86400, description: 'Lifetime of user JWTs; clients refresh them with their refresh token.' }),
  SIGNING_KEY_REFRESH_SECONDS: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 300,
    description: 'How often each service reloads its signing keys from the store, so a rotation (`npm run keys -- rotate`) is seen without a restart; a new key signs only after twice this.',
  }),
  USER_SENDS_PER_SECOND: Type.Integer({ default: 50, minimum: 1, description: 'Messages one chat user may send per second (REST and WebSocket together) before 429 / RATE_LIMITED.' }),
  USER_WRITES_PER_SECOND: Type.Integer({ default: 20, minimum: 1, description: 'Edits, deletes, reactions, read marks, chat changes (create, rename, delete, members, roles), mutes and bans, flags and presence queries one chat user may make per second, REST and WebSocket together, before 429 / RATE_LIMITED.' }),
  APP_ACTIONS_PER_SECOND: Type.Integer({
    default: 1000,
    minimum: 1,
    description: "Chat actions (sends, edits, deletes, reactions, read marks, typing, chat changes) all the users of one application may make per second on one node, REST and WebSocket together, before 429 / RATE_LIMITED: one tenant's load cannot fill a node's queues for the others.",
  }),
  DEMO_MAX_CONCURRENT_USERS: Type.Integer({
    default: 100,
    minimum: 1,
    description: 'Distinct users of one DEMO-tier application connected at once over WebSocket, cluster-wide; past it a new user is closed with 4010 before ready (users already connected are not affected). STANDARD applications have no ceiling.',
  }),
  WEBHOOK_ALLOW_INSECURE_URLS: Type.Boolean({
    default: false,
    description: 'Let webhook endpoints use http:// and loopback or private addresses (local development and tests only): otherwise only https:// URLs whose host resolves to public addresses, checked at creation and at every delivery.',
  }),
  PUSH_ALLOW_LOOPBACK: Type.Boolean({
    default: false,
    description: 'Let push go to loopback addresses (local development and tests only): Web Push subscription endpoints and a service account token URI on 127.0.0.1 or ::1 (http:// for the token URI). Otherwise a Web Push endpoint must be https:// and not a loopback or private address (an IP literal is checked at registration; a name where it resolves, each time a push is sent).',
  }),
  PUSH_CHAT_MEMBERS_MAX: Type.Integer({
    default: 100,
    minimum: 2,
    maximum: 100_000,
    description: 'Pushes of a new message go to every member with no live connection in a chat of at most this many members; in a larger chat only to the members it mentions (each recipient costs a few reads per message).',
  }),
  PUSH_CHAT_INTERVAL_MS: Type.Integer({
    default: 1_000,
    minimum: 0,
    maximum: 60_000,
    description: "A device gets at most one push per chat this often: messages that come within this time after a push wait, and the newest of them is pushed when it is up, standing for the others (a sender's messages of a chat have their recipients worked out at most this often too). 0: a device's pushes of a chat still go one at a time, the newest waiting replacing older ones, with no pause between them.",
  }),
  PUSH_APNS_ORIGIN: Type.String({
    default: '',
    pattern: '^(https://[^/\\s]+)?$',
    description: "Send APNs pushes to this origin instead of Apple's (`https://host:port`): a relay of your own, or a test server. Empty: Apple's production or sandbox origin, as each application's APNs settings say.",
  }),
  PUSH_FCM_ORIGIN: Type.String({
    default: '',
    pattern: '^(https://[^/\\s]+)?$',
    description: "Send FCM pushes to this origin instead of Google's (`https://host:port`): a relay of your own, or a test server. Empty: `https://fcm.googleapis.com`.",
  }),
  WEBHOOK_UNREAD_WINDOW_SECONDS: Type.Integer({
    default: 10,
    minimum: 1,
    maximum: 3600,
    description: 'How long `message.unread` webhook events are coalesced: a member with no live connection gets one event per chat per window, carrying the unread count when the window closes.',
  }),
  USAGE_FLUSH_SECONDS: Type.Integer({
    default: 60,
    minimum: 1,
    maximum: 3600,
    description: 'How often each node adds its usage counts (users, chats, messages per day, concurrent users, API-key last use) to the control store; usage figures lag by at most this.',
  }),
  USER_CHATS_MAX: Type.Integer({
    default: 1000,
    minimum: 1,
    maximum: 100000,
    description: 'Chats one chat user may be in; creating a chat with, or adding, a user already in this many is refused with 403 / CHAT_LIMIT_REACHED.',
  }),
  USER_TYPING_PER_SECOND: Type.Integer({ default: 5, minimum: 1, description: 'Typing indicators one chat user may send per second before RATE_LIMITED.' }),
  API_KEY_REQUESTS_PER_SECOND: Type.Integer({ default: 1000, minimum: 1, description: 'Requests one API key may make per second on one node (user registration, sign-ins, user changes) before 429.' }),
  REFRESH_PER_ADDRESS_PER_MINUTE: Type.Integer({ default: 120, minimum: 1, description: 'User refresh-token exchanges (POST /api/users/refresh, unauthenticated) per client address per minute before 429.' }),
  USER_REQUESTS_PER_SECOND: Type.Integer({ default: 200, minimum: 1, description: 'REST requests one chat user may make per second before 429.' }),
  WS_ACTIONS_PER_SECOND: Type.Integer({ default: 50, minimum: 1, description: 'WebSocket actions per connection per second (bursts of twice that) before RATE_LIMITED error frames.' }),
  ACTOR_IDLE_SECONDS: Type.Integer({ default: 60, minimum: 1, description: 'A chat actor with nothing pending is evicted after this long unused.' }),
  SEARCH_INDEX: Type.Union([Type.Literal('on'), Type.Literal('off')], {
    default: 'on',
    description: "Index messages' words for search (`on`), or not (`off`: sends write no index entries, the search routes answer 503). Messages sent while it is `off` are found once `npm run schema -- reindex` has indexed them.",
  }),
  ATTACHMENTS_STORE: Type.Union([Type.Literal(''), Type.Literal('local'), Type.Literal('s3'), Type.Literal('off')], {
    default: '',
    description: 'Where attachment files live: `local` (under DATA_DIR/files, served by this node: one node only), `s3` (an S3-compatible service, S3_*: what a cluster needs), or `off` (no attachments: their routes answer 503). Empty: `local` with STORE=embedded, `s3` with STORE=cassandra when S3_ENDPOINT is set, else `off`.',
  }),
  S3_ENDPOINT: Type.String({ default: '', description: 'The S3-compatible service of ATTACHMENTS_STORE=s3, e.g. http://127.0.0.1:7070 (path-style requests).' }),
  S3_PUBLIC_ENDPOINT: Type.String({ default: '', description: "The S3 service's address as clients reach it, when it differs from S3_ENDPOINT: signed upload and download URLs are made for it." }),
  S3_BUCKET: Type.String({
    default: 'chat-attachments',
    pattern: '^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$',
    description: "Bucket of the attachments (created at start when missing, with CORS rules for CORS_ORIGINS; an existing bucket's rules are left as they are).",
  }),
  S3_REGION: Type.String({ default: 'us-east-1', minLength: 1, description: 'Region the S3 requests are signed for.' }),
  S3_ACCESS_KEY_ID: Type.String({ default: '', description: 'Access key of the S3 service.' }),
  S3_SECRET_ACCESS_KEY: Type.String({ default: '', description: 'Secret key of the S3 service (a secret: see Secrets).' }),
  ATTACHMENT_MAX_BYTES: Type.Integer({
    default: 26_214_400,
    minimum: 1,
    maximum: 104_857_600,
    description: "Largest attachment file, in bytes (25 MiB by default, at most 100 MiB; an application's settings may set less); a larger one is refused when its upload is asked for (413 / FILE_TOO_LARGE), before any byte is stored.",
  }),
  ATTACHMENT_APP_MAX_TOTAL_BYTES: Type.Integer({
    default: 10_737_418_240,
    minimum: 0,
    description:
      "Most attachment bytes one application may store (files and thumbnails, as its usage counts them; 10 GiB by default; 0: no limit; an application's settings may set less, or one when this is 0). An upload that would take it past this is refused when it is asked for (413 / STORAGE_QUOTA_EXCEEDED); open uploads count at their declared size. Read from the usage figures, which nodes flush every USAGE_FLUSH_SECONDS: several nodes together may pass it by what they finalized within one flush interval.",
  }),
  ATTACHMENT_REFUSED_TYPES: Type.String({
    default: '',
    description: 'Comma-separated MIME types refused at finalize besides the built-in ones (SVG, HTML and executables, always refused), as sniffed from the bytes: e.g. `application/zip,video/mp4`.',
  }),
  ATTACHMENT_UPLOAD_TTL_SECONDS: Type.Integer({
    default: 3600,
    minimum: 1,
    maximum: 86400,
    description: 'An upload not sent in a message within this (finalized or not) is deleted; its upload URL works for at most 15 minutes of it.',
  }),
  ATTACHMENT_DELETE_DELAY_SECONDS: Type.Integer({
    default: 120,
    minimum: 1,
    maximum: 86400,
    description: "How long after an upload's end (or an application's deletion) its files are deleted: long enough for the change to land or fail first. They are gone within this plus ATTACHMENT_SWEEP_SECONDS. A message's or a chat's deletion carries its files' deletion in the outbox instead: they go within seconds.",
  }),
  ATTACHMENT_SWEEP_SECONDS: Type.Integer({ default: 60, minimum: 1, maximum: 3600, description: 'How often each node deletes the attachment files that are due (see ATTACHMENT_DELETE_DELAY_SECONDS).' }),
  CLAMAV_ADDRESS: Type.String({
    default: '',
    pattern: '^$|^[A-Za-z0-9.-]+:[0-9]{1,5}$',
    description: '`host:port` of a ClamAV daemon (clamd, TCPSocket): every file is scanned at finalize, and one it finds malware in is deleted and refused (422 / FILE_INFECTED). Empty: no scan.',
  }),
  CLAMAV_TIMEOUT_MS: Type.Integer({ default: 30000, minimum: 100, maximum: 600000, description: 'How long a scan may take; past it, or with clamd unreachable, finalize answers 503 / UNAVAILABLE and can be asked again.' }),
  LOG_LEVEL: Type.Union(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'].map((l) => Type.Literal(l)), {
    default: 'info',
    description: 'Log level of the JSON logs on stdout.',
  }),
});

export type Config = Static<typeof ConfigSchema>;
