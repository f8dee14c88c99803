#!/usr/bin/env bash
# Installs, starts, checks and stops the real backing services on loopback for
# development and CI: Redis (Debian's redis-server) and Apache Cassandra 5.0
# (resolved from Maven Central with mvn, run on Java 17). Two topologies: one
# Redis and one Cassandra node on 127.0.0.1 (single, the default), or a
# replicated one (ha): a three-node Cassandra ring and a six-node Redis Cluster,
# each process on its own loopback address.
# Run `scripts/services.sh --help` for commands, environment variables and defaults.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
ROOT_DIR="$(cd "$SCRIPT_DIR/.." && pwd)"
CASSANDRA_CONF_DIR="$SCRIPT_DIR/cassandra"

STATE_DIR="${SERVICES_STATE_DIR:-$ROOT_DIR/tmp/services}"
REDIS_PORT="${REDIS_PORT:-6379}"
CASSANDRA_VERSION="${CASSANDRA_VERSION:-5.0.9}"
CASSANDRA_CACHE_DIR="${CASSANDRA_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/chat-service/cassandra-$CASSANDRA_VERSION}"
CASSANDRA_PORT="${CASSANDRA_PORT:-9042}"
CASSANDRA_STORAGE_PORT="${CASSANDRA_STORAGE_PORT:-7000}"
CASSANDRA_JMX_PORT="${CASSANDRA_JMX_PORT:-7199}"
CASSANDRA_HEAP_MIN="${CASSANDRA_HEAP_MIN:-512m}"
CASSANDRA_HEAP_MAX="${CASSANDRA_HEAP_MAX:-1g}"
CASSANDRA_JVM_OPTS="${CASSANDRA_JVM_OPTS:-}"
CASSANDRA_TIMER_SLACK_NS="${CASSANDRA_TIMER_SLACK_NS:-1000000}"
CASSANDRA_START_TIMEOUT="${CASSANDRA_START_TIMEOUT:-180}"
REDIS_START_TIMEOUT="${REDIS_START_TIMEOUT:-20}"
OBJECTSTORE_VERSION="${OBJECTSTORE_VERSION:-v1.8.0}"
OBJECTSTORE_CACHE_DIR="${OBJECTSTORE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/chat-service/versitygw-$OBJECTSTORE_VERSION}"
OBJECTSTORE_PORT="${OBJECTSTORE_PORT:-7070}"
# Loopback development and CI only: the root user of a store no one else can reach.
OBJECTSTORE_ACCESS_KEY="${OBJECTSTORE_ACCESS_KEY:-chat-service-dev}"
OBJECTSTORE_SECRET_KEY="${OBJECTSTORE_SECRET_KEY:-chat-service-dev-secret}"
OBJECTSTORE_START_TIMEOUT="${OBJECTSTORE_START_TIMEOUT:-30}"
CLAMAV_PORT="${CLAMAV_PORT:-3310}"
CLAMAV_START_TIMEOUT="${CLAMAV_START_TIMEOUT:-60}"
GO_TIMEOUT="${GO_TIMEOUT:-900}"
SERVICES_STOP_TIMEOUT="${SERVICES_STOP_TIMEOUT:-60}"
MVN_TIMEOUT="${MVN_TIMEOUT:-900}"
APT_TIMEOUT="${APT_TIMEOUT:-600}"

# The ha topology (--topology ha) has variables of its own, so the single
# topology's ports (which CI moves) never move it.
HA_DIR="$STATE_DIR/ha"
HA_CASSANDRA_ADDRESSES="${HA_CASSANDRA_ADDRESSES:-127.0.0.11,127.0.0.12,127.0.0.13}"
HA_CASSANDRA_PORT="${HA_CASSANDRA_PORT:-9042}"
HA_CASSANDRA_STORAGE_PORT="${HA_CASSANDRA_STORAGE_PORT:-7000}"
HA_CASSANDRA_JMX_PORTS="${HA_CASSANDRA_JMX_PORTS:-7211,7212,7213}"
HA_CASSANDRA_HEAP="${HA_CASSANDRA_HEAP:-512m}"
HA_REDIS_ADDRESSES="${HA_REDIS_ADDRESSES:-127.0.0.21,127.0.0.22,127.0.0.23,127.0.0.24,127.0.0.25,127.0.0.26}"
HA_REDIS_PORT="${HA_REDIS_PORT:-6379}"
HA_REDIS_NODE_TIMEOUT="${HA_REDIS_NODE_TIMEOUT:-2000}"
HA_START_TIMEOUT="${HA_START_TIMEOUT:-300}"

REDIS_DIR="$STATE_DIR/redis"
REDIS_PID="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"
CASSANDRA_DIR="$STATE_DIR/cassandra"
CASSANDRA_PID="$CASSANDRA_DIR/cassandra.pid"
CASSANDRA_LOG="$CASSANDRA_DIR/cassandra.log"
CASSANDRA_LIB="$CASSANDRA_CACHE_DIR/lib"
CASSANDRA_READY_LINE='Starting listening for CQL clients'
OBJECTSTORE_DIR="$STATE_DIR/objectstore"
OBJECTSTORE_PID="$OBJECTSTORE_DIR/versitygw.pid"
OBJECTSTORE_LOG="$OBJECTSTORE_DIR/versitygw.log"
OBJECTSTORE_BIN="$OBJECTSTORE_CACHE_DIR/versitygw"
CLAMAV_DIR="$STATE_DIR/clamav"
CLAMAV_PID="$CLAMAV_DIR/clamd.pid"
CLAMAV_LOG="$CLAMAV_DIR/clamd.log"

usage() {
  cat <<EOF
Usage: scripts/services.sh <command> [--topology single|ha] [service...]
       scripts/services.sh env [--topology single|ha]
       scripts/services.sh nodetool [--topology ha] <node> <nodetool arguments...>
       scripts/services.sh nodetool --topology single <nodetool arguments...>

Runs the backing services on loopback for development and CI.
Services: redis, cassandra, objectstore, clamav (default: all four; ha: redis
and cassandra).

Topologies:
  single    (default) one Redis on 127.0.0.1:\$REDIS_PORT and one Cassandra
            node on 127.0.0.1:\$CASSANDRA_PORT.
            The object store (versitygw, an S3-compatible server) serves
            \$SERVICES_STATE_DIR/objectstore/data on 127.0.0.1:\$OBJECTSTORE_PORT;
            it belongs to this topology only (the ha one uses the same server).
            So does clamd on 127.0.0.1:\$CLAMAV_PORT, whose only database is the
            EICAR test signature (no signature download: tests only).
  ha        a Cassandra ring of three nodes, each a seed, on
            \$HA_CASSANDRA_ADDRESSES (CQL port \$HA_CASSANDRA_PORT, storage
            port \$HA_CASSANDRA_STORAGE_PORT, JMX on 127.0.0.1, one port per
            node), and a Redis Cluster of six nodes (three masters, one
            replica each) on \$HA_REDIS_ADDRESSES, port \$HA_REDIS_PORT (cluster
            bus on that port + 10000). Each process on its own address; state
            under \$SERVICES_STATE_DIR/ha/cassandra-N and .../ha/redis-N.

Commands:
  install   Redis: apt-get install redis-server if it is missing (apt-get update
            only when the package is unknown or the install fails).
            Cassandra: resolve org.apache.cassandra:cassandra-all:\$CASSANDRA_VERSION
            and its runtime dependencies with mvn into \$CASSANDRA_CACHE_DIR;
            later runs reuse it and do not call mvn.
            Object store: go install github.com/versity/versitygw/cmd/versitygw
            at \$OBJECTSTORE_VERSION into \$OBJECTSTORE_CACHE_DIR (needs Go and the
            Go module proxy once; later runs reuse the binary).
            ClamAV: apt-get install clamav-daemon if clamd is missing.
  start     Install if needed, start in the background with a pid file under
            \$SERVICES_STATE_DIR and wait until ready (Redis answers PING;
            Cassandra logs "$CASSANDRA_READY_LINE" and answers a CQL
            query on its native port). Already running: reports and exits 0.
            ha: starts only the processes that are not running (the Cassandra
            nodes at once), then waits until every Cassandra node answers CQL
            and lists the others in system.peers and nodetool status shows
            every node UN, and until every Redis node says cluster_state:ok,
            knows every node and sees all 16384 slots served. The Redis
            Cluster is created (redis-cli --cluster create, one replica per
            master) only when no node belongs to one yet; a restart keeps each
            node's nodes.conf (Redis keeps no data across a restart), and a
            node whose state was deleted joins the others as a replica.
  status    For each service (ha: each process): running or not, pid, address,
            ready or not. Exit 0 if every requested one is ready, 1 otherwise.
  stop      SIGTERM the pid in the pid file, wait up to \$SERVICES_STOP_TIMEOUT s,
            then SIGKILL; remove the pid file. Only processes this script
            started (per its pid files) are signalled.
  wipe      stop, then delete the service's state (data, logs) under
            \$SERVICES_STATE_DIR (ha: under \$SERVICES_STATE_DIR/ha).
  env       Print the export line that points the service at the topology:
            single: REDIS_URL, CASSANDRA_CONTACT_POINTS, the object store's
            S3_ENDPOINT, S3_ACCESS_KEY_ID, S3_SECRET_ACCESS_KEY, and CLAMAV_ADDRESS;
            ha: CASSANDRA_CONTACT_POINTS, CASSANDRA_REPLICATION_FACTOR,
            REDIS_CLUSTER_NODES, STORE=cassandra, BUS=redis.
            Use as: eval "\$(scripts/services.sh env --topology ha)"
  nodetool  Run Cassandra's nodetool (from the resolved jars) over JMX against
            HA node <node> (1, 2, 3 or its address), or with --topology single
            against the single node (no <node>).
  -h, --help  This text.

Environment (default):
  SERVICES_STATE_DIR      pid files, logs and data    (<repo>/tmp/services)
  REDIS_PORT              Redis port                   (6379)
  REDIS_START_TIMEOUT     seconds to wait for Redis    (20)
  CASSANDRA_VERSION       cassandra-all version        (5.0.9)
  CASSANDRA_CACHE_DIR     resolved jars                (\${XDG_CACHE_HOME:-\$HOME/.cache}/chat-service/cassandra-<version>)
  CASSANDRA_PORT          CQL native transport port    (9042)
  CASSANDRA_STORAGE_PORT  internode storage port       (7000)
  CASSANDRA_JMX_PORT      JMX (nodetool) on 127.0.0.1, or off (7199)
  CASSANDRA_HEAP_MIN      -Xms                         (512m)
  CASSANDRA_HEAP_MAX      -Xmx                         (1g)
  CASSANDRA_JVM_OPTS      extra JVM options, space separated, both topologies (none)
  CASSANDRA_TIMER_SLACK_NS  timer slack of every Cassandra thread, both topologies,
                          in ns; 0 leaves the kernel's 50000 (1000000)
  CASSANDRA_JAVA          java binary (Java 11 or 17)  (\$JAVA_HOME/bin/java, java on PATH,
                                                        or a JDK 17/11 under /usr/lib/jvm)
  CASSANDRA_START_TIMEOUT seconds to wait for CQL      (180)
  SERVICES_STOP_TIMEOUT   seconds before SIGKILL       (60)
  MVN_TIMEOUT, APT_TIMEOUT, GO_TIMEOUT  bounds for mvn / apt-get / go install in seconds (900, 600, 900)
  OBJECTSTORE_VERSION     versitygw version            (v1.8.0)
  OBJECTSTORE_CACHE_DIR   its binary                   (\${XDG_CACHE_HOME:-\$HOME/.cache}/chat-service/versitygw-<version>)
  OBJECTSTORE_PORT        its S3 port on 127.0.0.1     (7070)
  OBJECTSTORE_ACCESS_KEY, OBJECTSTORE_SECRET_KEY  its root credentials
                          (chat-service-dev, chat-service-dev-secret: loopback only)
  OBJECTSTORE_START_TIMEOUT seconds to wait for it     (30)
  CLAMAV_PORT             clamd's TCP port on 127.0.0.1 (3310)
  CLAMAV_START_TIMEOUT    seconds to wait for clamd    (60)
 The ha topology's own (the single topology's ports above do not move it):
  HA_CASSANDRA_ADDRESSES  Cassandra nodes, comma-separated
                          (127.0.0.11,127.0.0.12,127.0.0.13)
  HA_CASSANDRA_PORT       their CQL port               (9042)
  HA_CASSANDRA_STORAGE_PORT  their storage port        (7000)
  HA_CASSANDRA_JMX_PORTS  their JMX ports on 127.0.0.1, one per node, or off
                          (7211,7212,7213)
  HA_CASSANDRA_HEAP       -Xms and -Xmx of each node   (512m)
  HA_REDIS_ADDRESSES      Redis nodes, comma-separated, an even number, at least 6
                          (127.0.0.21,127.0.0.22,127.0.0.23,127.0.0.24,127.0.0.25,127.0.0.26)
  HA_REDIS_PORT           their port                   (6379)
  HA_REDIS_NODE_TIMEOUT   cluster-node-timeout in ms   (2000)
  HA_START_TIMEOUT        seconds to wait for the ring and the cluster (300)
 The tests find the ha topology at HA_CASSANDRA_CONTACT_POINTS and
 HA_REDIS_CLUSTER_NODES (host:port, comma-separated; default: the addresses above).

Files:
  Cassandra config: scripts/cassandra/cassandra.yaml (single),
  cassandra-ha.yaml (ha; one copy per node, filled in, in its state dir),
  jvm17-server.options, logback.xml, logback-tools.xml (nodetool), pom.xml.
  Logs: \$SERVICES_STATE_DIR/redis/redis.log, \$SERVICES_STATE_DIR/cassandra/cassandra.log;
  ha: \$SERVICES_STATE_DIR/ha/cassandra-N/cassandra.log, \$SERVICES_STATE_DIR/ha/redis-N/redis.log.

Examples:
  scripts/services.sh start                 # both, waits until ready
  REDIS_PORT=6380 scripts/services.sh start redis
  scripts/services.sh status cassandra && echo up
  scripts/services.sh stop
  scripts/services.sh start --topology ha   # 3 Cassandra nodes, 6 Redis nodes
  eval "\$(scripts/services.sh env --topology ha)" && npm run schema
  scripts/services.sh nodetool 1 status     # the ring as node 1 sees it
  scripts/services.sh nodetool --topology single flush   # the single node's memtables to disk
  scripts/services.sh stop --topology ha
EOF
}

log() { printf '%s\n' "$*" >&2; }
die() { printf 'services.sh: %s\n' "$*" >&2; exit 1; }

as_root() {
  if [ "$(id -u)" -eq 0 ]; then "$@"
  elif command -v sudo >/dev/null 2>&1; then sudo -n "$@"
  else die "need root (or sudo) to run: $*"
  fi
}

# --- process helpers -------------------------------------------------------

# pid_alive PIDFILE PATTERN: prints the pid if the pid file names a live
# process whose command line contains PATTERN; removes a stale pid file.
pid_alive() {
  local file=$1 pattern=$2 pid
  [ -f "$file" ] || return 1
  pid=$(tr -dc '0-9' <"$file")
  if [ -n "$pid" ] && [ -r "/proc/$pid/cmdline" ] &&
     tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -qF -- "$pattern"; then
    printf '%s\n' "$pid"
    return 0
  fi
  rm -f "$file"
  return 1
}

log_tail() { # log_tail FILE: the last lines of a log, long lines shortened
  tail -n "${2:-30}" "$1" 2>/dev/null | cut -c1-400 >&2 || true
}

port_open() { # port_open PORT [HOST]: whether something accepts connections there
  timeout 2 bash -c "exec 3<>/dev/tcp/${2:-127.0.0.1}/$1" 2>/dev/null
}

# wait_started NAME PIDFILE PATTERN TIMEOUT READY LOG...: waits until the command READY succeeds;
# when the process dies or TIMEOUT seconds pass first, shows the last lines of each LOG, stops the
# process and exits 1. Whether it lives is asked by pid, not by PATTERN: just after `cmd &` the
# child may not have exec'd yet, and its command line is still this script's.
wait_started() {
  local name=$1 file=$2 pattern=$3 timeout=$4 ready=$5 waited=0 f pid
  shift 5
  pid=$(tr -dc '0-9' <"$file")
  while ! "$ready"; do
    if ! kill -0 "$pid" 2>/dev/null || [ "$waited" -ge "$((timeout * 5))" ]; then
      log "$name: not ready after $((waited / 5))s; last lines of $*:"
      for f in "$@"; do log_tail "$f" 20; done
      stop_pid "$name" "$file" "$pattern"
      exit 1
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
}

stop_pid() { # stop_pid NAME PIDFILE PATTERN
  local name=$1 file=$2 pattern=$3 pid ticks=0
  if ! pid=$(pid_alive "$file" "$pattern"); then
    log "$name: not running"
    return 0
  fi
  log "$name: stopping pid $pid"
  kill -TERM "$pid" 2>/dev/null || true
  while kill -0 "$pid" 2>/dev/null; do
    if [ "$ticks" -ge "$((SERVICES_STOP_TIMEOUT * 5))" ]; then
      log "$name: still running after ${SERVICES_STOP_TIMEOUT}s, sending SIGKILL"
      kill -KILL "$pid" 2>/dev/null || true
      sleep 1
      break
    fi
    sleep 0.2
    ticks=$((ticks + 1))
  done
  rm -f "$file"
  log "$name: stopped"
}

# --- Redis -----------------------------------------------------------------

redis_installed() { command -v redis-server >/dev/null 2>&1; }

apt_install() { # apt_install PACKAGE...
  local candidate
  candidate=$(apt-cache policy "$1" 2>/dev/null | awk '/Candidate:/ {print $2}')
  if [ -z "$candidate" ] || [ "$candidate" = "(none)" ]; then
    as_root timeout "$APT_TIMEOUT" apt-get update -qq
  fi
  if ! as_root env DEBIAN_FRONTEND=noninteractive timeout "$APT_TIMEOUT" \
       apt-get install -y -qq --no-install-recommends "$@" >/dev/null; then
    as_root timeout "$APT_TIMEOUT" apt-get update -qq
    as_root env DEBIAN_FRONTEND=noninteractive timeout "$APT_TIMEOUT" \
      apt-get install -y -qq --no-install-recommends "$@" >/dev/null
  fi
}

redis_install() {
  if redis_installed; then
    log "redis: installed ($(redis-server --version | sed -n "s/.* v=\([^ ]*\).*/\1/p"))"
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "redis-server is missing and apt-get is not available"
  log "redis: installing redis-server with apt-get"
  apt_install redis-server
  redis_installed || die "redis: apt-get finished but redis-server is not on PATH"
  log "redis: installed ($(redis-server --version | sed -n "s/.* v=\([^ ]*\).*/\1/p"))"
}

redis_ping() { # prints PONG when Redis answers
  if command -v redis-cli >/dev/null 2>&1; then
    timeout 3 redis-cli -h 127.0.0.1 -p "$REDIS_PORT" ping 2>/dev/null
  else
    timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$REDIS_PORT && printf 'PING\r\n' >&3 && head -c 7 <&3" 2>/dev/null | tr -d '+\r\n'
  fi
}

redis_start() {
  local pid waited=0
  if pid=$(pid_alive "$REDIS_PID" redis-server); then
    log "redis: already running (pid $pid, 127.0.0.1:$REDIS_PORT)"
    return 0
  fi
  redis_install
  if port_open "$REDIS_PORT"; then
    die "redis: port $REDIS_PORT on 127.0.0.1 is in use by another process (not one started with this state dir); set REDIS_PORT"
  fi
  mkdir -p "$REDIS_DIR"
  [ -f "$REDIS_LOG" ] && mv -f "$REDIS_LOG" "$REDIS_LOG.1"
  # No persistence: nothing is saved to disk.
  redis-server --bind 127.0.0.1 --port "$REDIS_PORT" --protected-mode yes \
    --save '' --appendonly no --dir "$REDIS_DIR" \
    --daemonize yes --pidfile "$REDIS_PID" --logfile "$REDIS_LOG" </dev/null 9>&-
  while [ "$(redis_ping)" != "PONG" ]; do
    if [ "$waited" -ge "$((REDIS_START_TIMEOUT * 5))" ]; then
      log "redis: not ready after ${REDIS_START_TIMEOUT}s; last lines of $REDIS_LOG:"
      log_tail "$REDIS_LOG" 20
      stop_pid redis "$REDIS_PID" redis-server
      exit 1
    fi
    sleep 0.2
    waited=$((waited + 1))
  done
  pid=$(pid_alive "$REDIS_PID" redis-server) || die "redis: answers PING but its pid file $REDIS_PID is missing"
  log "redis: ready (pid $pid, 127.0.0.1:$REDIS_PORT)"
}

redis_status() {
  local pid
  if pid=$(pid_alive "$REDIS_PID" redis-server); then
    if [ "$(redis_ping)" = "PONG" ]; then
      echo "redis      running  pid $pid  127.0.0.1:$REDIS_PORT  ready"
      return 0
    fi
    echo "redis      running  pid $pid  127.0.0.1:$REDIS_PORT  not ready (no PONG)"
    return 1
  fi
  echo "redis      stopped"
  return 1
}

redis_stop() { stop_pid redis "$REDIS_PID" redis-server; }

# --- Object store (versitygw) -----------------------------------------------

objectstore_installed() { [ -x "$OBJECTSTORE_BIN" ]; }

objectstore_install() {
  if objectstore_installed; then
    log "objectstore: installed (versitygw $OBJECTSTORE_VERSION)"
    return 0
  fi
  command -v go >/dev/null 2>&1 || die "objectstore: versitygw is missing and Go is not installed (needed once, to build it)"
  log "objectstore: building versitygw $OBJECTSTORE_VERSION with go install"
  mkdir -p "$OBJECTSTORE_CACHE_DIR"
  GOBIN="$OBJECTSTORE_CACHE_DIR" timeout "$GO_TIMEOUT" go install "github.com/versity/versitygw/cmd/versitygw@$OBJECTSTORE_VERSION" >&2 ||
    die "objectstore: go install of versitygw $OBJECTSTORE_VERSION failed"
  objectstore_installed || die "objectstore: go install finished but $OBJECTSTORE_BIN is missing"
  log "objectstore: installed (versitygw $OBJECTSTORE_VERSION)"
}

objectstore_ready() { # answers HTTP on its port (any status: an unsigned request gets 403)
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$OBJECTSTORE_PORT && printf 'GET / HTTP/1.0\r\n\r\n' >&3 && head -c 12 <&3" 2>/dev/null | grep -q '^HTTP/'
}

objectstore_start() {
  local pid
  if pid=$(pid_alive "$OBJECTSTORE_PID" versitygw); then
    log "objectstore: already running (pid $pid, 127.0.0.1:$OBJECTSTORE_PORT)"
    return 0
  fi
  objectstore_install
  if port_open "$OBJECTSTORE_PORT"; then
    die "objectstore: port $OBJECTSTORE_PORT on 127.0.0.1 is in use by another process (not one started with this state dir); set OBJECTSTORE_PORT"
  fi
  mkdir -p "$OBJECTSTORE_DIR/data"
  [ -f "$OBJECTSTORE_LOG" ] && mv -f "$OBJECTSTORE_LOG" "$OBJECTSTORE_LOG.1"
  ROOT_ACCESS_KEY_ID="$OBJECTSTORE_ACCESS_KEY" ROOT_SECRET_ACCESS_KEY="$OBJECTSTORE_SECRET_KEY" \
    setsid "$OBJECTSTORE_BIN" --port "127.0.0.1:$OBJECTSTORE_PORT" --quiet \
    posix "$OBJECTSTORE_DIR/data" </dev/null >"$OBJECTSTORE_LOG" 2>&1 9>&- &
  echo $! >"$OBJECTSTORE_PID"
  wait_started objectstore "$OBJECTSTORE_PID" versitygw "$OBJECTSTORE_START_TIMEOUT" objectstore_ready "$OBJECTSTORE_LOG"
  log "objectstore: ready (pid $(cat "$OBJECTSTORE_PID"), http://127.0.0.1:$OBJECTSTORE_PORT)"
}

objectstore_status() {
  local pid
  if pid=$(pid_alive "$OBJECTSTORE_PID" versitygw); then
    if objectstore_ready; then
      echo "objectstore running  pid $pid  127.0.0.1:$OBJECTSTORE_PORT  ready"
      return 0
    fi
    echo "objectstore running  pid $pid  127.0.0.1:$OBJECTSTORE_PORT  not ready (no HTTP answer)"
    return 1
  fi
  echo "objectstore stopped"
  return 1
}

objectstore_stop() { stop_pid objectstore "$OBJECTSTORE_PID" versitygw; }

# --- ClamAV (clamd) ------------------------------------------------------------

# The EICAR test file's MD5 and size, as a ClamAV hash signature: the database clamd loads here,
# so it starts in a second and needs no signature download (EICAR is the industry's test string).
CLAMAV_EICAR_HDB='44d88612fea8a8f36de82e1278abb02f:68:Eicar-Test-Signature'

clamav_installed() { command -v clamd >/dev/null 2>&1 || [ -x /usr/sbin/clamd ]; }

clamav_install() {
  if clamav_installed; then
    log "clamav: installed"
    return 0
  fi
  command -v apt-get >/dev/null 2>&1 || die "clamd is missing and apt-get is not available"
  log "clamav: installing clamav-daemon with apt-get"
  apt_install clamav-daemon
  clamav_installed || die "clamav: apt-get finished but clamd is missing"
}

clamav_ready() { # clamd answers PONG to zPING
  timeout 3 bash -c "exec 3<>/dev/tcp/127.0.0.1/$CLAMAV_PORT && printf 'zPING\0' >&3 && head -c 4 <&3" 2>/dev/null | grep -q PONG
}

clamav_start() {
  local pid clamd
  if pid=$(pid_alive "$CLAMAV_PID" clamd); then
    log "clamav: already running (pid $pid, 127.0.0.1:$CLAMAV_PORT)"
    return 0
  fi
  clamav_install
  if port_open "$CLAMAV_PORT"; then
    die "clamav: port $CLAMAV_PORT on 127.0.0.1 is in use by another process (not one started with this state dir); set CLAMAV_PORT"
  fi
  clamd=$(command -v clamd || echo /usr/sbin/clamd)
  mkdir -p "$CLAMAV_DIR/db"
  printf '%s\n' "$CLAMAV_EICAR_HDB" >"$CLAMAV_DIR/db/eicar-test.hdb"
  cat >"$CLAMAV_DIR/clamd.conf" <<CONF
DatabaseDirectory $CLAMAV_DIR/db
TCPSocket $CLAMAV_PORT
TCPAddr 127.0.0.1
Foreground yes
LogFile $CLAMAV_LOG
StreamMaxLength 100M
User $(id -un)
CONF
  setsid "$clamd" -c "$CLAMAV_DIR/clamd.conf" </dev/null >>"$CLAMAV_LOG.out" 2>&1 9>&- &
  echo $! >"$CLAMAV_PID"
  wait_started clamav "$CLAMAV_PID" clamd "$CLAMAV_START_TIMEOUT" clamav_ready "$CLAMAV_LOG" "$CLAMAV_LOG.out"
  log "clamav: ready (pid $(cat "$CLAMAV_PID"), 127.0.0.1:$CLAMAV_PORT, test signatures only)"
}

clamav_status() {
  local pid
  if pid=$(pid_alive "$CLAMAV_PID" clamd); then
    if clamav_ready; then
      echo "clamav     running  pid $pid  127.0.0.1:$CLAMAV_PORT  ready"
      return 0
    fi
    echo "clamav     running  pid $pid  127.0.0.1:$CLAMAV_PORT  not ready (no PONG)"
    return 1
  fi
  echo "clamav     stopped"
  return 1
}

clamav_stop() { stop_pid clamav "$CLAMAV_PID" clamd; }

# --- Cassandra -------------------------------------------------------------

cassandra_installed() {
  [ -f "$CASSANDRA_CACHE_DIR/.complete" ] &&
    [ "$(cat "$CASSANDRA_CACHE_DIR/.complete")" = "$CASSANDRA_VERSION" ] &&
    [ -f "$CASSANDRA_LIB/cassandra-all-$CASSANDRA_VERSION.jar" ]
}

cassandra_install() {
  if cassandra_installed; then
    log "cassandra: $CASSANDRA_VERSION installed ($CASSANDRA_CACHE_DIR)"
    return 0
  fi
  if ! command -v mvn >/dev/null 2>&1; then
    command -v apt-get >/dev/null 2>&1 || die "cassandra: mvn is missing"
    log "cassandra: installing maven with apt-get"
    apt_install maven
  fi
  log "cassandra: resolving org.apache.cassandra:cassandra-all:$CASSANDRA_VERSION with mvn into $CASSANDRA_CACHE_DIR"
  mkdir -p "$CASSANDRA_CACHE_DIR"
  local tmp="$CASSANDRA_CACHE_DIR/lib.partial" out="$CASSANDRA_CACHE_DIR/mvn.log"
  rm -rf "$tmp"
  if ! timeout "$MVN_TIMEOUT" mvn -B -q -f "$CASSANDRA_CONF_DIR/pom.xml" \
       -Dcassandra.version="$CASSANDRA_VERSION" \
       dependency:copy-dependencies -DincludeScope=runtime \
       -DoutputDirectory="$tmp" >"$out" 2>&1; then
    tail -n 30 "$out" >&2
    die "cassandra: mvn could not resolve cassandra-all $CASSANDRA_VERSION (full output: $out)"
  fi
  [ -f "$tmp/cassandra-all-$CASSANDRA_VERSION.jar" ] || die "cassandra: mvn finished but cassandra-all-$CASSANDRA_VERSION.jar is missing (see $out)"
  rm -rf "$CASSANDRA_LIB"
  mv "$tmp" "$CASSANDRA_LIB"
  printf '%s\n' "$CASSANDRA_VERSION" >"$CASSANDRA_CACHE_DIR/.complete"
  log "cassandra: $CASSANDRA_VERSION installed ($(find "$CASSANDRA_LIB" -name '*.jar' | wc -l) jars, $(du -sh "$CASSANDRA_LIB" | cut -f1))"
}

java_major() { # java_major JAVA: prints the feature version (8, 11, 17, ...)
  timeout 30 "$1" -XshowSettings:properties -version 2>&1 |
    awk -F'= ' '/java.specification.version =/ {v=$2; sub(/^1\./, "", v); print v; exit}'
}

find_java() {
  local candidate major
  if [ -n "${CASSANDRA_JAVA:-}" ]; then
    major=$(java_major "$CASSANDRA_JAVA")
    case "$major" in
      11|17) ;;
      *) log "cassandra: warning: CASSANDRA_JAVA is Java ${major:-?}; Cassandra ${CASSANDRA_VERSION%%.*} supports Java 11 and 17" ;;
    esac
    printf '%s\n' "$CASSANDRA_JAVA"
    return 0
  fi
  for candidate in ${JAVA_HOME:+"$JAVA_HOME/bin/java"} "$(command -v java 2>/dev/null || true)" \
      /usr/lib/jvm/*17*/bin/java /usr/lib/jvm/*11*/bin/java; do
    if [ -z "$candidate" ] || [ ! -x "$candidate" ]; then continue; fi
    major=$(java_major "$candidate")
    if [ "$major" = 17 ] || [ "$major" = 11 ]; then
      printf '%s\n' "$candidate"
      return 0
    fi
  done
  return 1
}

# cql_query FILE HOST PORT QUERY: runs QUERY over the CQL native protocol (v4)
# on HOST:PORT with bash alone and writes the RESULT body to FILE (after any
# warnings the server put before it). Fails unless the server answers STARTUP
# with READY and the query with RESULT.
cql_query() {
  # shellcheck disable=SC2016 # the script is expanded by the inner bash
  timeout 10 bash -c '
    set -e
    exec 3<>"/dev/tcp/$2/$3"
    out=$1
    q=$4
    read_frame() { # read_frame FILE: body to FILE, opcode to $op, flags to $flags
      local h len
      h=($(head -c 9 <&3 | od -An -tu1))
      [ "${#h[@]}" -eq 9 ] || { echo "short CQL frame" >&2; return 1; }
      flags=${h[1]}
      op=${h[4]}
      len=$(( (h[5] << 24) | (h[6] << 16) | (h[7] << 8) | h[8] ))
      head -c "$len" <&3 >"$1"
    }
    hex4() { printf "\\\\x%02x\\\\x%02x\\\\x%02x\\\\x%02x" $(( ($1 >> 24) & 255 )) $(( ($1 >> 16) & 255 )) $(( ($1 >> 8) & 255 )) $(( $1 & 255 )); }
    # STARTUP {CQL_VERSION: 3.0.0} on stream 1; expect READY (0x02).
    printf "\x04\x00\x00\x01\x01\x00\x00\x00\x16\x00\x01\x00\x0bCQL_VERSION\x00\x053.0.0" >&3
    read_frame "$out"
    [ "$op" -eq 2 ] || { echo "CQL STARTUP answered opcode $op: $(tr -c "[:print:]" " " <"$out")" >&2; exit 1; }
    # QUERY on stream 2, consistency ONE, no flags; expect RESULT (0x08).
    printf "\x04\x00\x00\x02\x07$(hex4 $((4 + ${#q} + 3)))$(hex4 ${#q})%s\x00\x01\x00" "$q" >&3
    read_frame "$out"
    [ "$op" -eq 8 ] || { echo "CQL QUERY answered opcode $op: $(tr -c "[:print:]" " " <"$out")" >&2; exit 1; }
    exec 3<&- 3>&-
    if [ $((flags & 8)) -ne 0 ]; then # warnings: a [string list] before the result
      n=$(head -c 2 "$out" | od -An -tu1 | awk "{print \$1 * 256 + \$2}")
      skip=2
      for _ in $(seq 1 "$n"); do
        l=$(tail -c +$((skip + 1)) "$out" | head -c 2 | od -An -tu1 | awk "{print \$1 * 256 + \$2}")
        skip=$((skip + 2 + l))
      done
      tail -c +$((skip + 1)) "$out" >"$out.body" && mv -f "$out.body" "$out"
    fi
  ' _ "$1" "$2" "$3" "$4"
}

# cassandra_query_version [HOST PORT]: prints release_version or fails
# (default: the single node, 127.0.0.1:$CASSANDRA_PORT).
cassandra_query_version() {
  local tmp rc=0 version
  tmp=$(mktemp)
  cql_query "$tmp" "${1:-127.0.0.1}" "${2:-$CASSANDRA_PORT}" 'SELECT release_version FROM system.local' || rc=$?
  if [ "$rc" -ne 0 ]; then rm -f "$tmp"; return 1; fi
  # A ROWS result (kind 2) whose last value is the version string.
  if [ "$(head -c 4 "$tmp" | od -An -tu1 | tr -d ' \n')" != "0002" ]; then
    rm -f "$tmp"
    return 1
  fi
  version=$(tr -c '[:print:]' '\n' <"$tmp" | grep -E '^[0-9]+\.[0-9]+(\.[0-9]+)?' | tail -n 1)
  rm -f "$tmp"
  [ -n "$version" ] || return 1
  printf '%s\n' "$version"
}

# cassandra_peer_count HOST PORT: prints how many peers the node at HOST:PORT
# lists in system.peers (the other nodes of its ring it has heard of).
cassandra_peer_count() {
  local tmp rc=0 count
  tmp=$(mktemp)
  cql_query "$tmp" "$1" "$2" 'SELECT count(*) FROM system.peers' || rc=$?
  # A ROWS result of one bigint: its value is the last 8 bytes.
  if [ "$rc" -ne 0 ] || [ "$(head -c 4 "$tmp" | od -An -tu1 | tr -d ' \n')" != "0002" ]; then
    rm -f "$tmp"
    return 1
  fi
  count=$(tail -c 8 "$tmp" | od -An -tu1 | awk '{ v = 0; for (i = 1; i <= NF; i++) v = v * 256 + $i; print v }')
  rm -f "$tmp"
  printf '%s\n' "$count"
}

# cassandra_jvm_options: JVM_OPTIONS= the options of jvm17-server.options and
# the jamm agent (each start adds heap, paths and ports).
cassandra_jvm_options() {
  local line jamm
  JVM_OPTIONS=()
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    case "$line" in -*) JVM_OPTIONS+=("$line") ;; esac
  done <"$CASSANDRA_CONF_DIR/jvm17-server.options"
  jamm=$(find "$CASSANDRA_LIB" -maxdepth 1 -name 'jamm-*.jar' | head -n 1)
  if [ -n "$jamm" ]; then JVM_OPTIONS+=("-javaagent:$jamm"); fi
}

# cassandra_launch DIR LOG PIDFILE JAVA OPTION...: starts a CassandraDaemon in
# DIR, in the background and its own session, with the options of
# jvm17-server.options, the jamm agent, OPTION... and CASSANDRA_JVM_OPTS last (so
# they win); its output goes to LOG, its pid to PIDFILE and LAUNCHED_PID.
cassandra_launch() {
  local dir=$1 output=$2 pidfile=$3 java=$4
  shift 4
  cassandra_jvm_options
  local -a opts=("${JVM_OPTIONS[@]}" "$@"
    "-XX:ErrorFile=$dir/hs_err_pid%p.log"
    "-Dlogback.configurationFile=file://$CASSANDRA_CONF_DIR/logback.xml"
    "-Dcassandra-foreground=yes")
  # shellcheck disable=SC2206 # word splitting of the extra options is intended
  if [ -n "$CASSANDRA_JVM_OPTS" ]; then opts+=($CASSANDRA_JVM_OPTS); fi
  local setsid=()
  command -v setsid >/dev/null 2>&1 && setsid=(setsid)
  (
    cd "$dir"
    # Cassandra's request stages share a pool whose idle workers wait for work in sleeps of
    # 10 µs and more (SEPWorker), so a node with a steady trickle of requests wakes thousands of
    # times a second for nothing. A timer slack of 1 ms (inherited across exec by every thread the
    # JVM starts) lets the kernel merge those wakeups; it delays only timed sleeps, never a wakeup
    # by another thread. On the ring on two cores at 1,000 single-row writes/s it cut the three
    # JVMs from 1.5 to 1.0 cores and the p99 from 520-630 to 22-43 ms (bench/micro/cassandra-writes.ts).
    if [ "${CASSANDRA_TIMER_SLACK_NS:-0}" != 0 ] && [ -w /proc/self/timerslack_ns ]; then
      echo "$CASSANDRA_TIMER_SLACK_NS" >/proc/self/timerslack_ns 2>/dev/null || true
    fi
    exec "${setsid[@]}" "$java" "${opts[@]}" -cp "$CASSANDRA_LIB/*" \
      org.apache.cassandra.service.CassandraDaemon </dev/null >"$output" 2>&1 9>&-
  ) &
  LAUNCHED_PID=$!
  printf '%s\n' "$LAUNCHED_PID" >"$pidfile"
}

cassandra_start() {
  local pid java
  if pid=$(pid_alive "$CASSANDRA_PID" CassandraDaemon); then
    log "cassandra: already running (pid $pid, 127.0.0.1:$CASSANDRA_PORT)"
    cassandra_wait "$pid"
    return 0
  fi
  cassandra_install
  java=$(find_java) || die "cassandra: Cassandra $CASSANDRA_VERSION needs Java 11 or 17; none found (set CASSANDRA_JAVA)"
  local -a ports=("$CASSANDRA_PORT" "$CASSANDRA_STORAGE_PORT") jmx=()
  if [ "$CASSANDRA_JMX_PORT" != off ]; then
    ports+=("$CASSANDRA_JMX_PORT")
    # JMX (nodetool: flush, tablestats) on 127.0.0.1 only.
    jmx=("-Dcassandra.jmx.local.port=$CASSANDRA_JMX_PORT")
  fi
  for port in "${ports[@]}"; do
    if port_open "$port"; then
      die "cassandra: port $port on 127.0.0.1 is in use by another process (not one started with this state dir); set CASSANDRA_PORT / CASSANDRA_STORAGE_PORT / CASSANDRA_JMX_PORT"
    fi
  done
  mkdir -p "$CASSANDRA_DIR/data" "$CASSANDRA_DIR/logs" "$CASSANDRA_DIR/triggers"
  [ -f "$CASSANDRA_LOG" ] && mv -f "$CASSANDRA_LOG" "$CASSANDRA_LOG.1"

  log "cassandra: starting $CASSANDRA_VERSION on 127.0.0.1:$CASSANDRA_PORT with $java (log: $CASSANDRA_LOG)"
  cassandra_launch "$CASSANDRA_DIR" "$CASSANDRA_LOG" "$CASSANDRA_PID" "$java" \
    "-Xms$CASSANDRA_HEAP_MIN" "-Xmx$CASSANDRA_HEAP_MAX" \
    "-Dcassandra.config=file://$CASSANDRA_CONF_DIR/cassandra.yaml" \
    "-Dcassandra.storagedir=$CASSANDRA_DIR/data" \
    "-Dcassandra.logdir=$CASSANDRA_DIR/logs" \
    "-Dcassandra.triggers_dir=$CASSANDRA_DIR/triggers" \
    "-Dcassandra.native_transport_port=$CASSANDRA_PORT" \
    "-Dcassandra.storage_port=$CASSANDRA_STORAGE_PORT" "${jmx[@]}"
  pid=$LAUNCHED_PID
  cassandra_wait "$pid"
}

cassandra_wait() { # cassandra_wait PID: waits for CQL, stops the node on failure
  local pid=$1 start=$SECONDS version=""
  while :; do
    if ! kill -0 "$pid" 2>/dev/null; then
      rm -f "$CASSANDRA_PID"
      log "cassandra: the process exited during startup; last lines of $CASSANDRA_LOG:"
      log_tail "$CASSANDRA_LOG" 30
      exit 1
    fi
    if grep -qF "$CASSANDRA_READY_LINE" "$CASSANDRA_LOG" 2>/dev/null && port_open "$CASSANDRA_PORT" &&
       version=$(cassandra_query_version); then
      break
    fi
    if [ $((SECONDS - start)) -ge "$CASSANDRA_START_TIMEOUT" ]; then
      log "cassandra: CQL not ready on 127.0.0.1:$CASSANDRA_PORT after ${CASSANDRA_START_TIMEOUT}s; last lines of $CASSANDRA_LOG:"
      log_tail "$CASSANDRA_LOG" 30
      stop_pid cassandra "$CASSANDRA_PID" CassandraDaemon
      exit 1
    fi
    sleep 1
  done
  log "cassandra: ready (pid $pid, 127.0.0.1:$CASSANDRA_PORT, release_version $version, $((SECONDS - start))s)"
}

cassandra_status() {
  local pid version
  if pid=$(pid_alive "$CASSANDRA_PID" CassandraDaemon); then
    if version=$(cassandra_query_version); then
      echo "cassandra  running  pid $pid  127.0.0.1:$CASSANDRA_PORT  ready (CQL, release_version $version)"
      return 0
    fi
    echo "cassandra  running  pid $pid  127.0.0.1:$CASSANDRA_PORT  not ready (no CQL answer)"
    return 1
  fi
  echo "cassandra  stopped"
  return 1
}

cassandra_stop() { stop_pid cassandra "$CASSANDRA_PID" CassandraDaemon; }

# --- HA topology: a Cassandra ring and a Redis Cluster on loopback addresses --

# ha_parse: the node lists from HA_CASSANDRA_ADDRESSES, HA_REDIS_ADDRESSES and
# HA_CASSANDRA_JMX_PORTS, checked.
ha_parse() {
  local a
  IFS=', ' read -r -a HA_CASSANDRA <<<"$HA_CASSANDRA_ADDRESSES"
  IFS=', ' read -r -a HA_REDIS <<<"$HA_REDIS_ADDRESSES"
  for a in "${HA_CASSANDRA[@]}" "${HA_REDIS[@]}"; do
    [[ "$a" =~ ^[0-9]+\.[0-9]+\.[0-9]+\.[0-9]+$ ]] || die "HA address '$a' is not an IPv4 address"
  done
  [ "${#HA_CASSANDRA[@]}" -ge 1 ] || die "HA_CASSANDRA_ADDRESSES names no address"
  [ "${#HA_REDIS[@]}" -ge 6 ] || die "HA_REDIS_ADDRESSES names ${#HA_REDIS[@]} addresses; a Redis Cluster with one replica per master needs at least 6"
  [ $(( ${#HA_REDIS[@]} % 2 )) -eq 0 ] || die "HA_REDIS_ADDRESSES names ${#HA_REDIS[@]} addresses; one replica per master needs an even number"
  HA_JMX=()
  if [ "$HA_CASSANDRA_JMX_PORTS" != off ]; then
    IFS=', ' read -r -a HA_JMX <<<"$HA_CASSANDRA_JMX_PORTS"
    [ "${#HA_JMX[@]}" -eq "${#HA_CASSANDRA[@]}" ] ||
      die "HA_CASSANDRA_JMX_PORTS names ${#HA_JMX[@]} ports for ${#HA_CASSANDRA[@]} Cassandra nodes (or set it to off)"
  fi
  # With one replica per node up to three: LOCAL_QUORUM (2 of 3) survives one node down.
  HA_RF=${#HA_CASSANDRA[@]}
  [ "$HA_RF" -le 3 ] || HA_RF=3
}

ha_cassandra_contact_points() {
  local a out=""
  for a in "${HA_CASSANDRA[@]}"; do out+="${out:+,}$a:$HA_CASSANDRA_PORT"; done
  printf '%s\n' "$out"
}

ha_redis_nodes() {
  local a out=""
  for a in "${HA_REDIS[@]}"; do out+="${out:+,}$a:$HA_REDIS_PORT"; done
  printf '%s\n' "$out"
}

ha_env() {
  printf 'export CASSANDRA_CONTACT_POINTS=%s CASSANDRA_REPLICATION_FACTOR=%s REDIS_CLUSTER_NODES=%s STORE=cassandra BUS=redis\n' \
    "$(ha_cassandra_contact_points)" "$HA_RF" "$(ha_redis_nodes)"
}

rss_of() { # rss_of PID: resident memory in MiB
  awk '/^VmRSS:/ {printf "%d MiB", $2 / 1024}' "/proc/$1/status" 2>/dev/null || true
}

# ha_tokens: HA_TOKENS= one token per Cassandra node, splitting the Murmur3
# ring (-2^63 .. 2^63-1) evenly.
ha_tokens() {
  local n=${#HA_CASSANDRA[@]} i token step
  # shellcheck disable=SC2017 # (2^63 - 1) * 2 / n would overflow 64 bits
  step=$(( 9223372036854775807 / n * 2 ))
  token=$(( -9223372036854775807 - 1 ))
  HA_TOKENS=()
  for ((i = 0; i < n; i++)); do
    HA_TOKENS+=("$token")
    token=$(( token + step ))
  done
}

ha_cassandra_dir() { printf '%s\n' "$HA_DIR/cassandra-$(( $1 + 1 ))"; }
ha_redis_dir() { printf '%s\n' "$HA_DIR/redis-$(( $1 + 1 ))"; }

# ha_cassandra_launch I: writes node I's cassandra.yaml and starts it in the
# background (pid file in its directory).
ha_cassandra_launch() {
  local i=$1 java=$2 dir addr seeds="" a pid
  dir=$(ha_cassandra_dir "$i")
  addr=${HA_CASSANDRA[$i]}
  for a in "${HA_CASSANDRA[@]}"; do seeds+="${seeds:+,}$a:$HA_CASSANDRA_STORAGE_PORT"; done
  mkdir -p "$dir/data" "$dir/commitlog" "$dir/saved_caches" "$dir/hints" "$dir/cdc_raw" "$dir/logs" "$dir/triggers"
  local sed_dir=${dir//\\/\\\\}
  sed_dir=${sed_dir//|/\\|}
  sed_dir=${sed_dir//&/\\&}
  sed -e "s|@ADDRESS@|$addr|g" -e "s|@SEEDS@|$seeds|g" -e "s|@INITIAL_TOKEN@|${HA_TOKENS[$i]}|g" \
      -e "s|@CQL_PORT@|$HA_CASSANDRA_PORT|g" -e "s|@STORAGE_PORT@|$HA_CASSANDRA_STORAGE_PORT|g" \
      -e "s|@DATA_DIR@|$sed_dir|g" \
      "$CASSANDRA_CONF_DIR/cassandra-ha.yaml" >"$dir/cassandra.yaml"
  [ -f "$dir/cassandra.log" ] && mv -f "$dir/cassandra.log" "$dir/cassandra.log.1"

  local -a extra=("-Xms$HA_CASSANDRA_HEAP" "-Xmx$HA_CASSANDRA_HEAP"
    "-Dcassandra.config=file://$dir/cassandra.yaml"
    "-Dcassandra.logdir=$dir/logs"
    "-Dcassandra.triggers_dir=$dir/triggers")
  # JMX (nodetool) listens on 127.0.0.1 only, on a port per node.
  if [ "${#HA_JMX[@]}" -gt 0 ]; then extra+=("-Dcassandra.jmx.local.port=${HA_JMX[$i]}"); fi
  cassandra_launch "$dir" "$dir/cassandra.log" "$dir/cassandra.pid" "$java" "${extra[@]}"
  pid=$LAUNCHED_PID
  log "cassandra-$((i + 1)): starting on $addr:$HA_CASSANDRA_PORT (pid $pid, log: $dir/cassandra.log)"
}

# ha_cassandra_node_check I: prints "release_version peers" when node I answers
# CQL; fails when it does not.
ha_cassandra_node_check() {
  local addr=${HA_CASSANDRA[$1]} version peers
  version=$(cassandra_query_version "$addr" "$HA_CASSANDRA_PORT") || return 1
  peers=$(cassandra_peer_count "$addr" "$HA_CASSANDRA_PORT") || return 1
  printf '%s %s\n' "$version" "$peers"
}

# nodetool_command PORT: NODETOOL= the command that runs Cassandra's NodeTool
# against the node whose JMX is on 127.0.0.1:PORT (add its arguments).
nodetool_command() {
  local java
  cassandra_installed || die "nodetool: Cassandra $CASSANDRA_VERSION is not installed (scripts/services.sh install cassandra)"
  java=$(find_java) || die "cassandra: Cassandra $CASSANDRA_VERSION needs Java 11 or 17; none found (set CASSANDRA_JAVA)"
  # The modules Cassandra's classes need opened on Java 17: the server's list.
  local line
  local -a jpms=()
  while IFS= read -r line || [ -n "$line" ]; do
    case "$line" in --add-*) jpms+=("$line") ;; esac
  done <"$CASSANDRA_CONF_DIR/jvm17-server.options"
  NODETOOL=("$java" -Xmx128m -XX:+UseSerialGC -XX:TieredStopAtLevel=1 "${jpms[@]}"
    "-Dlogback.configurationFile=file://$CASSANDRA_CONF_DIR/logback-tools.xml"
    -cp "$CASSANDRA_LIB/*" org.apache.cassandra.tools.NodeTool
    -h 127.0.0.1 -p "$1")
}

# ha_ring_up: HA_UP= how many nodes `nodetool status` on the first live node
# shows Up and Normal (UN); HA_RING= its output.
ha_ring_up() {
  local i
  HA_RING=""
  HA_UP=0
  for i in "${!HA_CASSANDRA[@]}"; do
    pid_alive "$(ha_cassandra_dir "$i")/cassandra.pid" CassandraDaemon >/dev/null || continue
    nodetool_command "${HA_JMX[$i]}"
    HA_RING=$(timeout 60 "${NODETOOL[@]}" status 2>&1) || true
    break
  done
  HA_UP=$(grep -c '^UN ' <<<"$HA_RING" || true)
}

ha_cassandra_start() {
  local i n=${#HA_CASSANDRA[@]} java pid dir start=$SECONDS started=() port
  ha_tokens
  for i in "${!HA_CASSANDRA[@]}"; do
    dir=$(ha_cassandra_dir "$i")
    if pid=$(pid_alive "$dir/cassandra.pid" CassandraDaemon); then
      log "cassandra-$((i + 1)): already running (pid $pid, ${HA_CASSANDRA[$i]}:$HA_CASSANDRA_PORT)"
      continue
    fi
    for port in "$HA_CASSANDRA_PORT" "$HA_CASSANDRA_STORAGE_PORT"; do
      if port_open "$port" "${HA_CASSANDRA[$i]}"; then
        die "cassandra-$((i + 1)): ${HA_CASSANDRA[$i]}:$port is in use by another process (not one started with this state dir); set HA_CASSANDRA_ADDRESSES"
      fi
    done
    if [ "${#HA_JMX[@]}" -gt 0 ] && port_open "${HA_JMX[$i]}"; then
      die "cassandra-$((i + 1)): JMX port 127.0.0.1:${HA_JMX[$i]} is in use; set HA_CASSANDRA_JMX_PORTS"
    fi
    started+=("$i")
  done
  if [ "${#started[@]}" -gt 0 ]; then
    cassandra_install
    java=$(find_java) || die "cassandra: Cassandra $CASSANDRA_VERSION needs Java 11 or 17; none found (set CASSANDRA_JAVA)"
    # Every node is a seed and none bootstraps, so they start at once and form one ring.
    for i in "${started[@]}"; do ha_cassandra_launch "$i" "$java"; done
  fi

  # Ready: every node answers CQL and lists the others as peers; then nodetool
  # (over JMX) sees every node Up and Normal.
  local -a ready=() check
  local all
  while :; do
    all=1
    for i in "${!HA_CASSANDRA[@]}"; do
      [ -n "${ready[$i]:-}" ] && continue
      dir=$(ha_cassandra_dir "$i")
      if ! pid=$(pid_alive "$dir/cassandra.pid" CassandraDaemon); then
        log "cassandra-$((i + 1)): the process exited during startup; last lines of $dir/cassandra.log:"
        log_tail "$dir/cassandra.log" 30
        ha_stop_started "${started[@]}"
        exit 1
      fi
      if grep -qF "$CASSANDRA_READY_LINE" "$dir/cassandra.log" 2>/dev/null &&
         read -r -a check < <(ha_cassandra_node_check "$i") && [ "${check[1]:-}" = "$((n - 1))" ]; then
        ready[i]=1
        log "cassandra-$((i + 1)): ready (pid $pid, ${HA_CASSANDRA[$i]}:$HA_CASSANDRA_PORT, release_version ${check[0]}, $((n - 1)) peers, $((SECONDS - start))s)"
      else
        all=0
      fi
    done
    if [ "$all" -eq 1 ]; then
      if [ "${#HA_JMX[@]}" -eq 0 ]; then
        log "cassandra: ring of $n ready (every node answers CQL and lists $((n - 1)) peers; JMX off, nodetool not run) in $((SECONDS - start))s"
        return 0
      fi
      ha_ring_up
      if [ "$HA_UP" -eq "$n" ]; then
        log "cassandra: ring of $n ready, $n nodes UN, in $((SECONDS - start))s:"
        printf '%s\n' "$HA_RING" | sed -n '/^Datacenter/,$p' >&2
        return 0
      fi
    fi
    if [ $((SECONDS - start)) -ge "$HA_START_TIMEOUT" ]; then
      log "cassandra: the ring is not ready after ${HA_START_TIMEOUT}s"
      [ -n "${HA_RING:-}" ] && printf '%s\n' "$HA_RING" >&2
      for i in "${!HA_CASSANDRA[@]}"; do
        if [ -z "${ready[$i]:-}" ]; then
          log "cassandra-$((i + 1)): last lines of $(ha_cassandra_dir "$i")/cassandra.log:"
          log_tail "$(ha_cassandra_dir "$i")/cassandra.log" 15
        fi
      done
      ha_stop_started "${started[@]}"
      exit 1
    fi
    sleep 2
  done
}

ha_stop_started() { # ha_stop_started I...: stops the Cassandra nodes this run started
  local i
  for i in "$@"; do stop_pid "cassandra-$((i + 1))" "$(ha_cassandra_dir "$i")/cassandra.pid" CassandraDaemon & done
  wait
}

ha_cassandra_status() {
  local i dir pid rc=0 check=() jmx
  for i in "${!HA_CASSANDRA[@]}"; do
    dir=$(ha_cassandra_dir "$i")
    jmx=""
    [ "${#HA_JMX[@]}" -gt 0 ] && jmx=", JMX 127.0.0.1:${HA_JMX[$i]}"
    if pid=$(pid_alive "$dir/cassandra.pid" CassandraDaemon); then
      check=()
      read -r -a check < <(ha_cassandra_node_check "$i") || true
      if [ "${check[1]:-}" = "$(( ${#HA_CASSANDRA[@]} - 1 ))" ]; then
        printf 'cassandra-%-2s running  pid %-7s %s:%s  ready (CQL, release_version %s, %s peers%s, rss %s)\n' \
          "$((i + 1))" "$pid" "${HA_CASSANDRA[$i]}" "$HA_CASSANDRA_PORT" "${check[0]}" "${check[1]}" "$jmx" "$(rss_of "$pid")"
      else
        local why="no CQL answer"
        [ -n "${check[1]:-}" ] && why="lists ${check[1]} of $(( ${#HA_CASSANDRA[@]} - 1 )) peers"
        printf 'cassandra-%-2s running  pid %-7s %s:%s  not ready (%s, rss %s)\n' "$((i + 1))" "$pid" "${HA_CASSANDRA[$i]}" "$HA_CASSANDRA_PORT" \
          "$why" "$(rss_of "$pid")"
        rc=1
      fi
    else
      printf 'cassandra-%-2s stopped                %s:%s\n' "$((i + 1))" "${HA_CASSANDRA[$i]}" "$HA_CASSANDRA_PORT"
      rc=1
    fi
  done
  return "$rc"
}

ha_cassandra_stop() {
  local i
  for i in "${!HA_CASSANDRA[@]}"; do
    stop_pid "cassandra-$((i + 1))" "$(ha_cassandra_dir "$i")/cassandra.pid" CassandraDaemon &
  done
  wait
}

# Redis Cluster

ha_redis_cli() { # ha_redis_cli I ARGS...: redis-cli against Redis node I
  local i=$1
  shift
  timeout 5 redis-cli -h "${HA_REDIS[$i]}" -p "$HA_REDIS_PORT" "$@" 2>/dev/null
}

ha_redis_info() { # ha_redis_info I FIELD: one field of CLUSTER INFO
  ha_redis_cli "$1" cluster info | tr -d '\r' | awk -F: -v f="$2" '$1 == f {print $2}'
}

ha_redis_pattern() { printf 'redis-server %s:%s\n' "${HA_REDIS[$1]}" "$HA_REDIS_PORT"; }

ha_redis_start() {
  local i n=${#HA_REDIS[@]} dir pid start=$SECONDS addr port started=()
  for i in "${!HA_REDIS[@]}"; do
    dir=$(ha_redis_dir "$i")
    addr=${HA_REDIS[$i]}
    if pid=$(pid_alive "$dir/redis.pid" "$(ha_redis_pattern "$i")"); then
      log "redis-$((i + 1)): already running (pid $pid, $addr:$HA_REDIS_PORT)"
      continue
    fi
    for port in "$HA_REDIS_PORT" "$((HA_REDIS_PORT + 10000))"; do
      if port_open "$port" "$addr"; then
        die "redis-$((i + 1)): $addr:$port is in use by another process (not one started with this state dir); set HA_REDIS_ADDRESSES"
      fi
    done
    started+=("$i")
  done
  [ "${#started[@]}" -eq 0 ] || redis_install
  for i in "${started[@]}"; do
    dir=$(ha_redis_dir "$i")
    addr=${HA_REDIS[$i]}
    mkdir -p "$dir"
    [ -f "$dir/redis.log" ] && mv -f "$dir/redis.log" "$dir/redis.log.1"
    # Cluster mode on its own address (outgoing cluster-bus connections too, so a
    # firewall rule on an address cuts that node off). Only nodes.conf is kept:
    # no RDB, no AOF. A node unreachable for 2 s is failed over, by a replica
    # however long it was cut off from its master (validity factor 0). Protected
    # mode is off: it accepts only 127.0.0.1 and ::1 as local, so it refused the
    # replicas, which connect from their own 127.0.0.x (each node binds a
    # loopback address only, so nothing off the machine reaches it).
    redis-server --bind "$addr" --port "$HA_REDIS_PORT" --bind-source-addr "$addr" --protected-mode no \
      --cluster-enabled yes --cluster-config-file "$dir/nodes.conf" --cluster-announce-ip "$addr" \
      --cluster-node-timeout "$HA_REDIS_NODE_TIMEOUT" --cluster-replica-validity-factor 0 \
      --save '' --appendonly no --dir "$dir" \
      --daemonize yes --pidfile "$dir/redis.pid" --logfile "$dir/redis.log" </dev/null 9>&-
    log "redis-$((i + 1)): starting on $addr:$HA_REDIS_PORT (log: $dir/redis.log)"
  done
  for i in "${started[@]}"; do
    dir=$(ha_redis_dir "$i")
    until [ "$(ha_redis_cli "$i" ping)" = PONG ]; do
      if [ $((SECONDS - start)) -ge "$REDIS_START_TIMEOUT" ]; then
        log "redis-$((i + 1)): not answering PING after ${REDIS_START_TIMEOUT}s; last lines of $dir/redis.log:"
        log_tail "$dir/redis.log" 20
        exit 1
      fi
      sleep 0.2
    done
  done

  # A node that knows no other node and serves no slot is new: all new, the
  # cluster is created; some new (a wiped node), they join the others as replicas.
  local -a fresh=() member=()
  for i in "${!HA_REDIS[@]}"; do
    if [ "$(ha_redis_info "$i" cluster_known_nodes)" = 1 ] && [ "$(ha_redis_info "$i" cluster_slots_assigned)" = 0 ]; then
      fresh+=("$i")
    else
      member+=("$i")
    fi
  done
  if [ "${#fresh[@]}" -eq "$n" ]; then
    log "redis: creating the cluster: $((n / 2)) masters, 1 replica each"
    local -a nodes=()
    for i in "${!HA_REDIS[@]}"; do nodes+=("${HA_REDIS[$i]}:$HA_REDIS_PORT"); done
    if ! timeout 120 redis-cli --cluster create "${nodes[@]}" --cluster-replicas 1 --cluster-yes >"$HA_DIR/redis-cluster-create.log" 2>&1; then
      tail -n 30 "$HA_DIR/redis-cluster-create.log" >&2
      die "redis: redis-cli --cluster create failed (full output: $HA_DIR/redis-cluster-create.log)"
    fi
  elif [ "${#fresh[@]}" -gt 0 ]; then
    local id j
    for i in "${fresh[@]}"; do
      # The others still list the wiped node under its old id, at its address
      # or, once the new node has answered there, at none (noaddr): forget it.
      for id in $(ha_redis_cli "${member[0]}" cluster nodes |
                  awk -v a="${HA_REDIS[$i]}:$HA_REDIS_PORT" 'index($2, a "@") == 1 || $3 ~ /(^|,)noaddr(,|$)/ {print $1}'); do
        for j in "${member[@]}"; do ha_redis_cli "$j" cluster forget "$id" >/dev/null || true; done
      done
      log "redis-$((i + 1)): new node, joining the cluster as a replica"
      timeout 120 redis-cli --cluster add-node "${HA_REDIS[$i]}:$HA_REDIS_PORT" "${HA_REDIS[${member[0]}]}:$HA_REDIS_PORT" \
        --cluster-slave >>"$HA_DIR/redis-cluster-create.log" 2>&1 ||
        die "redis-$((i + 1)): redis-cli --cluster add-node failed (see $HA_DIR/redis-cluster-create.log)"
    done
  fi

  # Ready: every node says cluster_state:ok, knows every node, and sees all
  # 16384 slots served; and the first sees half the nodes as masters, half as
  # replicas (right after a create a replica may still show as a master).
  local waiting
  while :; do
    waiting=""
    for i in "${!HA_REDIS[@]}"; do
      if [ "$(ha_redis_info "$i" cluster_state)" != ok ] || [ "$(ha_redis_info "$i" cluster_known_nodes)" != "$n" ] ||
         [ "$(ha_redis_info "$i" cluster_slots_ok)" != 16384 ]; then
        waiting+=" redis-$((i + 1))"
      fi
    done
    ha_redis_roles
    if [ "$HA_MASTERS" -ne $((n / 2)) ] || [ "$HA_REPLICAS" -ne $((n / 2)) ]; then
      waiting+=" (roles: $HA_MASTERS masters, $HA_REPLICAS replicas)"
    fi
    [ -z "$waiting" ] && break
    if [ $((SECONDS - start)) -ge "$HA_START_TIMEOUT" ]; then
      log "redis: cluster not ok after ${HA_START_TIMEOUT}s on:$waiting"
      for i in "${!HA_REDIS[@]}"; do log "redis-$((i + 1)): $(ha_redis_cli "$i" cluster info | tr -d '\r' | grep -E 'cluster_state|known_nodes|slots_ok' | tr '\n' ' ')"; done
      exit 1
    fi
    sleep 0.5
  done
  log "redis: cluster_state:ok on all $n nodes, $HA_MASTERS masters and $HA_REPLICAS replicas, in $((SECONDS - start))s"
}

# ha_redis_roles: HA_MASTERS, HA_REPLICAS= the masters and replicas not marked
# failing, as the first node sees them.
ha_redis_roles() {
  local nodes
  nodes=$(ha_redis_cli 0 cluster nodes || true)
  # CLUSTER NODES: the third field lists flags such as myself,master or slave.
  HA_MASTERS=$(awk '$3 ~ /(^|,)master(,|$)/ && $3 !~ /fail/' <<<"$nodes" | wc -l)
  HA_REPLICAS=$(awk '$3 ~ /(^|,)slave(,|$)/ && $3 !~ /fail/' <<<"$nodes" | wc -l)
}

ha_redis_status() {
  local i dir pid rc=0 state known role
  for i in "${!HA_REDIS[@]}"; do
    dir=$(ha_redis_dir "$i")
    if pid=$(pid_alive "$dir/redis.pid" "$(ha_redis_pattern "$i")"); then
      state=$(ha_redis_info "$i" cluster_state)
      known=$(ha_redis_info "$i" cluster_known_nodes)
      role=$(ha_redis_cli "$i" role | head -n 1 | sed "s/^slave$/replica/")
      if [ "$state" = ok ] && [ "$known" = "${#HA_REDIS[@]}" ]; then
        printf 'redis-%-6s running  pid %-7s %s:%s  ready (%s, cluster_state:ok, %s nodes known, rss %s)\n' \
          "$((i + 1))" "$pid" "${HA_REDIS[$i]}" "$HA_REDIS_PORT" "${role:-?}" "$known" "$(rss_of "$pid")"
      else
        printf 'redis-%-6s running  pid %-7s %s:%s  not ready (%s, cluster_state:%s, %s nodes known)\n' \
          "$((i + 1))" "$pid" "${HA_REDIS[$i]}" "$HA_REDIS_PORT" "${role:-no answer}" "${state:-?}" "${known:-?}"
        rc=1
      fi
    else
      printf 'redis-%-6s stopped                %s:%s\n' "$((i + 1))" "${HA_REDIS[$i]}" "$HA_REDIS_PORT"
      rc=1
    fi
  done
  return "$rc"
}

ha_redis_stop() {
  local i
  for i in "${!HA_REDIS[@]}"; do
    stop_pid "redis-$((i + 1))" "$(ha_redis_dir "$i")/redis.pid" "$(ha_redis_pattern "$i")" &
  done
  wait
}

ha_redis_install() { redis_install; }
ha_cassandra_install() { cassandra_install; }

# --- main ------------------------------------------------------------------

main() {
  local cmd=${1:-} topology=single
  case "$cmd" in
    -h|--help|help) usage; return 0 ;;
    install|start|status|stop|wipe|env|nodetool) shift ;;
    "") usage >&2; return 2 ;;
    *) log "services.sh: unknown command '$cmd'"; usage >&2; return 2 ;;
  esac
  [ "$cmd" = nodetool ] && topology=ha
  local -a services=()
  while [ "$#" -gt 0 ]; do
    case "$1" in
      --topology) [ "$#" -ge 2 ] || die "--topology needs a value (single, ha)"; topology=$2; shift 2 ;;
      --topology=*) topology=${1#--topology=}; shift ;;
      -h|--help) usage; return 0 ;;
      *)
        if [ "$cmd" = nodetool ]; then break; fi
        services+=("$1"); shift ;;
    esac
  done
  case "$topology" in single|ha) ;; *) die "unknown topology '$topology' (single, ha)" ;; esac

  if [ "$cmd" = env ]; then
    [ "${#services[@]}" -eq 0 ] || die "env takes no services"
    if [ "$topology" = ha ]; then ha_parse; ha_env
    else printf 'export REDIS_URL=redis://127.0.0.1:%s CASSANDRA_CONTACT_POINTS=127.0.0.1:%s S3_ENDPOINT=http://127.0.0.1:%s S3_ACCESS_KEY_ID=%s S3_SECRET_ACCESS_KEY=%s CLAMAV_ADDRESS=127.0.0.1:%s\n' \
      "$REDIS_PORT" "$CASSANDRA_PORT" "$OBJECTSTORE_PORT" "$OBJECTSTORE_ACCESS_KEY" "$OBJECTSTORE_SECRET_KEY" "$CLAMAV_PORT"
    fi
    return 0
  fi
  if [ "$cmd" = nodetool ] && [ "$topology" = single ]; then
    [ "$CASSANDRA_JMX_PORT" != off ] || die "nodetool: JMX is off (CASSANDRA_JMX_PORT=off)"
    nodetool_command "$CASSANDRA_JMX_PORT"
    exec "${NODETOOL[@]}" "$@"
  fi
  if [ "$cmd" = nodetool ]; then
    [ "$#" -ge 1 ] || die "nodetool: name a node (1-N or its address), then nodetool's arguments"
    ha_parse
    local node=$1 i found=""
    shift
    for i in "${!HA_CASSANDRA[@]}"; do
      if [ "$node" = "$((i + 1))" ] || [ "$node" = "${HA_CASSANDRA[$i]}" ]; then found=$i; fi
    done
    [ -n "$found" ] || die "nodetool: no Cassandra node '$node' (1-${#HA_CASSANDRA[@]} or one of $HA_CASSANDRA_ADDRESSES)"
    [ "${#HA_JMX[@]}" -gt 0 ] || die "nodetool: JMX is off (HA_CASSANDRA_JMX_PORTS=off)"
    nodetool_command "${HA_JMX[$found]}"
    exec "${NODETOOL[@]}" "$@"
  fi

  if [ "${#services[@]}" -eq 0 ]; then
    if [ "$topology" = ha ]; then services=(redis cassandra); else services=(redis cassandra objectstore clamav); fi
  fi
  local s
  for s in "${services[@]}"; do
    case "$s" in redis|cassandra|objectstore|clamav) ;; *) die "unknown service '$s' (redis, cassandra, objectstore, clamav)" ;; esac
    if [ "$topology" = ha ] && { [ "$s" = objectstore ] || [ "$s" = clamav ]; }; then
      die "$s is one server, started with the single topology (scripts/services.sh start $s)"
    fi
  done

  local lock_dir=$STATE_DIR prefix="" lock_wait=$((CASSANDRA_START_TIMEOUT + 120))
  if [ "$topology" = ha ]; then
    ha_parse
    lock_dir=$HA_DIR
    prefix=ha_
    lock_wait=$((2 * HA_START_TIMEOUT + 120))
  fi
  # One install/start/stop/wipe at a time per state dir (concurrent CI steps).
  if [ "$cmd" != status ] && command -v flock >/dev/null 2>&1; then
    mkdir -p "$lock_dir"
    exec 9>"$lock_dir/.lock"
    flock -w "$lock_wait" 9 || die "another services.sh holds $lock_dir/.lock"
  fi

  local rc=0 i
  for s in "${services[@]}"; do
    case "$cmd" in
      install) "${s}_install" ;;
      start) "${prefix}${s}_start" ;;
      status) "${prefix}${s}_status" || rc=1 ;;
      stop) "${prefix}${s}_stop" ;;
      wipe)
        "${prefix}${s}_stop"
        if [ "$topology" = ha ] && [ "$s" = redis ]; then
          for i in "${!HA_REDIS[@]}"; do rm -rf "$(ha_redis_dir "$i")"; done
          rm -f "$HA_DIR/redis-cluster-create.log"
        elif [ "$topology" = ha ]; then
          for i in "${!HA_CASSANDRA[@]}"; do rm -rf "$(ha_cassandra_dir "$i")"; done
        elif [ "$s" = redis ]; then rm -rf "$REDIS_DIR"
        elif [ "$s" = objectstore ]; then rm -rf "$OBJECTSTORE_DIR"
        elif [ "$s" = clamav ]; then rm -rf "$CLAMAV_DIR"
        else rm -rf "$CASSANDRA_DIR"
        fi
        log "$s: state removed"
        ;;
    esac
  done
  if [ "$cmd" = wipe ] && [ "$topology" = ha ]; then
    if [ -z "$(find "$HA_DIR" -mindepth 1 -maxdepth 1 ! -name .lock 2>/dev/null)" ]; then
      rm -f "$HA_DIR/.lock"
      rmdir "$HA_DIR" 2>/dev/null || true
      rmdir "$STATE_DIR" 2>/dev/null || true
    fi
  elif [ "$cmd" = wipe ] && [ ! -d "$REDIS_DIR" ] && [ ! -d "$CASSANDRA_DIR" ] && [ ! -d "$OBJECTSTORE_DIR" ] && [ ! -d "$CLAMAV_DIR" ]; then
    rm -f "$STATE_DIR/.lock"
    rmdir "$STATE_DIR" 2>/dev/null || true
  fi
  return "$rc"
}

main "$@"
