#!/usr/bin/env bash
# Installs, starts, checks and stops the real backing services on loopback for
# development and CI: Redis (Debian's redis-server) and a single-node Apache
# Cassandra 5.0 (resolved from Maven Central with mvn, run on Java 17).
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
CASSANDRA_HEAP_MIN="${CASSANDRA_HEAP_MIN:-512m}"
CASSANDRA_HEAP_MAX="${CASSANDRA_HEAP_MAX:-1g}"
CASSANDRA_JVM_OPTS="${CASSANDRA_JVM_OPTS:-}"
CASSANDRA_START_TIMEOUT="${CASSANDRA_START_TIMEOUT:-180}"
REDIS_START_TIMEOUT="${REDIS_START_TIMEOUT:-20}"
SERVICES_STOP_TIMEOUT="${SERVICES_STOP_TIMEOUT:-60}"
MVN_TIMEOUT="${MVN_TIMEOUT:-900}"
APT_TIMEOUT="${APT_TIMEOUT:-600}"

REDIS_DIR="$STATE_DIR/redis"
REDIS_PID="$REDIS_DIR/redis.pid"
REDIS_LOG="$REDIS_DIR/redis.log"
CASSANDRA_DIR="$STATE_DIR/cassandra"
CASSANDRA_PID="$CASSANDRA_DIR/cassandra.pid"
CASSANDRA_LOG="$CASSANDRA_DIR/cassandra.log"
CASSANDRA_LIB="$CASSANDRA_CACHE_DIR/lib"
CASSANDRA_READY_LINE='Starting listening for CQL clients'

usage() {
  cat <<EOF
Usage: scripts/services.sh <command> [service...]

Runs the backing services on 127.0.0.1 for development and CI.
Services: redis, cassandra (default: both).

Commands:
  install   Redis: apt-get install redis-server if it is missing (apt-get update
            only when the package is unknown or the install fails).
            Cassandra: resolve org.apache.cassandra:cassandra-all:\$CASSANDRA_VERSION
            and its runtime dependencies with mvn into \$CASSANDRA_CACHE_DIR;
            later runs reuse it and do not call mvn.
  start     Install if needed, start in the background with a pid file under
            \$SERVICES_STATE_DIR and wait until ready (Redis answers PING;
            Cassandra logs "$CASSANDRA_READY_LINE" and answers a CQL
            query on its native port). Already running: reports and exits 0.
  status    For each service: running or not, pid, address, ready or not.
            Exit 0 if every requested service is ready, 1 otherwise.
  stop      SIGTERM the pid in the pid file, wait up to \$SERVICES_STOP_TIMEOUT s,
            then SIGKILL; remove the pid file. Only processes this script
            started (per its pid files) are signalled.
  wipe      stop, then delete the service's state (data, logs) under
            \$SERVICES_STATE_DIR.
  -h, --help  This text.

Environment (default):
  SERVICES_STATE_DIR      pid files, logs and data    (<repo>/tmp/services)
  REDIS_PORT              Redis port                   (6379)
  REDIS_START_TIMEOUT     seconds to wait for Redis    (20)
  CASSANDRA_VERSION       cassandra-all version        (5.0.9)
  CASSANDRA_CACHE_DIR     resolved jars                (\${XDG_CACHE_HOME:-\$HOME/.cache}/chat-service/cassandra-<version>)
  CASSANDRA_PORT          CQL native transport port    (9042)
  CASSANDRA_STORAGE_PORT  internode storage port       (7000)
  CASSANDRA_HEAP_MIN      -Xms                         (512m)
  CASSANDRA_HEAP_MAX      -Xmx                         (1g)
  CASSANDRA_JVM_OPTS      extra JVM options, space separated   (none)
  CASSANDRA_JAVA          java binary (Java 11 or 17)  (\$JAVA_HOME/bin/java, java on PATH,
                                                        or a JDK 17/11 under /usr/lib/jvm)
  CASSANDRA_START_TIMEOUT seconds to wait for CQL      (180)
  SERVICES_STOP_TIMEOUT   seconds before SIGKILL       (60)
  MVN_TIMEOUT, APT_TIMEOUT  bounds for mvn / apt-get in seconds (900, 600)

Files:
  Cassandra config: scripts/cassandra/cassandra.yaml, jvm17-server.options,
  logback.xml, pom.xml. Logs: \$SERVICES_STATE_DIR/redis/redis.log,
  \$SERVICES_STATE_DIR/cassandra/cassandra.log.

Examples:
  scripts/services.sh start                 # both, waits until ready
  REDIS_PORT=6380 scripts/services.sh start redis
  scripts/services.sh status cassandra && echo up
  scripts/services.sh stop
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

port_open() { # port_open PORT
  timeout 2 bash -c "exec 3<>/dev/tcp/127.0.0.1/$1" 2>/dev/null
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

# cql_release_version FILE: runs `SELECT release_version FROM system.local`
# over the CQL native protocol (v4) on 127.0.0.1:$CASSANDRA_PORT with bash
# alone and writes the RESULT body to FILE. Fails unless the server answers
# STARTUP with READY and the query with RESULT.
cql_release_version() {
  # shellcheck disable=SC2016 # the script is expanded by the inner bash
  timeout 10 bash -c '
    set -e
    exec 3<>"/dev/tcp/127.0.0.1/$1"
    out=$2
    read_frame() { # read_frame FILE: body to FILE, opcode to $op
      local h len
      h=($(head -c 9 <&3 | od -An -tu1))
      [ "${#h[@]}" -eq 9 ] || { echo "short CQL frame" >&2; return 1; }
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
    q="SELECT release_version FROM system.local"
    printf "\x04\x00\x00\x02\x07$(hex4 $((4 + ${#q} + 3)))$(hex4 ${#q})%s\x00\x01\x00" "$q" >&3
    read_frame "$out"
    [ "$op" -eq 8 ] || { echo "CQL QUERY answered opcode $op: $(tr -c "[:print:]" " " <"$out")" >&2; exit 1; }
    exec 3<&- 3>&-
  ' _ "$CASSANDRA_PORT" "$1"
}

cassandra_query_version() { # prints release_version or fails
  local tmp rc=0 version
  tmp=$(mktemp)
  cql_release_version "$tmp" || rc=$?
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

cassandra_start() {
  local pid java
  if pid=$(pid_alive "$CASSANDRA_PID" CassandraDaemon); then
    log "cassandra: already running (pid $pid, 127.0.0.1:$CASSANDRA_PORT)"
    cassandra_wait "$pid"
    return 0
  fi
  cassandra_install
  java=$(find_java) || die "cassandra: Cassandra $CASSANDRA_VERSION needs Java 11 or 17; none found (set CASSANDRA_JAVA)"
  for port in "$CASSANDRA_PORT" "$CASSANDRA_STORAGE_PORT"; do
    if port_open "$port"; then
      die "cassandra: port $port on 127.0.0.1 is in use by another process (not one started with this state dir); set CASSANDRA_PORT / CASSANDRA_STORAGE_PORT"
    fi
  done
  mkdir -p "$CASSANDRA_DIR/data" "$CASSANDRA_DIR/logs" "$CASSANDRA_DIR/triggers"
  [ -f "$CASSANDRA_LOG" ] && mv -f "$CASSANDRA_LOG" "$CASSANDRA_LOG.1"

  local -a opts=()
  local line jamm
  while IFS= read -r line || [ -n "$line" ]; do
    line="${line#"${line%%[![:space:]]*}"}"
    line="${line%"${line##*[![:space:]]}"}"
    case "$line" in -*) opts+=("$line") ;; esac
  done <"$CASSANDRA_CONF_DIR/jvm17-server.options"
  jamm=$(find "$CASSANDRA_LIB" -maxdepth 1 -name 'jamm-*.jar' | head -n 1)
  [ -n "$jamm" ] && opts+=("-javaagent:$jamm")
  opts+=(
    "-Xms$CASSANDRA_HEAP_MIN" "-Xmx$CASSANDRA_HEAP_MAX"
    "-XX:ErrorFile=$CASSANDRA_DIR/hs_err_pid%p.log"
    "-Dcassandra.config=file://$CASSANDRA_CONF_DIR/cassandra.yaml"
    "-Dlogback.configurationFile=file://$CASSANDRA_CONF_DIR/logback.xml"
    "-Dcassandra.storagedir=$CASSANDRA_DIR/data"
    "-Dcassandra.logdir=$CASSANDRA_DIR/logs"
    "-Dcassandra.triggers_dir=$CASSANDRA_DIR/triggers"
    "-Dcassandra.native_transport_port=$CASSANDRA_PORT"
    "-Dcassandra.storage_port=$CASSANDRA_STORAGE_PORT"
    "-Dcassandra-foreground=yes"
  )
  # shellcheck disable=SC2206 # word splitting of the extra options is intended
  [ -n "$CASSANDRA_JVM_OPTS" ] && opts+=($CASSANDRA_JVM_OPTS)

  log "cassandra: starting $CASSANDRA_VERSION on 127.0.0.1:$CASSANDRA_PORT with $java (log: $CASSANDRA_LOG)"
  local setsid=()
  command -v setsid >/dev/null 2>&1 && setsid=(setsid)
  (
    cd "$CASSANDRA_DIR"
    exec "${setsid[@]}" "$java" "${opts[@]}" -cp "$CASSANDRA_LIB/*" \
      org.apache.cassandra.service.CassandraDaemon </dev/null >"$CASSANDRA_LOG" 2>&1 9>&-
  ) &
  pid=$!
  printf '%s\n' "$pid" >"$CASSANDRA_PID"
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

# --- main ------------------------------------------------------------------

main() {
  local cmd=${1:-}
  case "$cmd" in
    -h|--help|help) usage; return 0 ;;
    install|start|status|stop|wipe) shift ;;
    "") usage >&2; return 2 ;;
    *) log "services.sh: unknown command '$cmd'"; usage >&2; return 2 ;;
  esac
  local -a services=("$@")
  [ "${#services[@]}" -gt 0 ] || services=(redis cassandra)
  local s
  for s in "${services[@]}"; do
    case "$s" in redis|cassandra) ;; *) die "unknown service '$s' (redis, cassandra)" ;; esac
  done

  # One install/start/stop/wipe at a time per state dir (concurrent CI steps).
  if [ "$cmd" != status ] && command -v flock >/dev/null 2>&1; then
    mkdir -p "$STATE_DIR"
    exec 9>"$STATE_DIR/.lock"
    flock -w "$((CASSANDRA_START_TIMEOUT + 120))" 9 || die "another services.sh holds $STATE_DIR/.lock"
  fi

  local rc=0
  for s in "${services[@]}"; do
    case "$cmd" in
      install) "${s}_install" ;;
      start) "${s}_start" ;;
      status) "${s}_status" || rc=1 ;;
      stop) "${s}_stop" ;;
      wipe)
        "${s}_stop"
        if [ "$s" = redis ]; then rm -rf "$REDIS_DIR"; else rm -rf "$CASSANDRA_DIR"; fi
        log "$s: state removed"
        ;;
    esac
  done
  if [ "$cmd" = wipe ] && [ ! -d "$REDIS_DIR" ] && [ ! -d "$CASSANDRA_DIR" ]; then
    rm -f "$STATE_DIR/.lock"
    rmdir "$STATE_DIR" 2>/dev/null || true
  fi
  return "$rc"
}

main "$@"
