import { spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, readdirSync, readlinkSync, rmdirSync, statSync, writeFileSync } from 'node:fs';
import { endianness } from 'node:os';
import { isIPv4 } from 'node:net';

/**
 * Network partitions, pauses and kills between processes on one machine, for Jepsen-style fault
 * tests where every process (chat node, control service, Cassandra node, Redis instance) listens on
 * a loopback address of its own.
 *
 * Addresses alone cannot tell which process sent a packet: every outgoing connection to a 127.x
 * address leaves from 127.0.0.1 (`local 127.0.0.0/8 src 127.0.0.1`). So each process a test
 * partitions is put in a cgroup v2 of its own ("enlisted"), and every rule matches the cgroup of the
 * socket the packet belongs to (`socket cgroupv2`), on the way out (its connections and what it
 * writes to them) and on the way in (what arrives for it). No rule matches anything but the sockets
 * of enlisted processes, so nothing else on the machine is ever cut.
 *
 * A socket belongs to the cgroup its process was in when it made the socket, and keeps it. A
 * process enlisted after it started (a chat node already connected to Cassandra and Redis) still
 * has sockets of the cgroup it came from: those are found through /proc (its descriptors and the
 * TCP table) when it is enlisted and again at every cut, and matched by their address and port
 * pairs instead (a set per process). Connections it accepts later on a listener it made before
 * are not its cgroup's either; a cut never needs them, because a connection another enlisted
 * process makes to it is cut on that process's side (its cgroup and the destination address).
 *
 * One instance owns one nft table (`inet chat_faults_<pid>_<random>`) and one cgroup directory of
 * the same name holding a cgroup per enlisted process. Everything is removed when the test ends
 * (t.teardown), also when the process exits or gets SIGINT/SIGTERM; what a killed test left behind
 * is removed by the next openFaults (sweepStale: names whose pid is gone).
 */

/** What a fault test needs that the machine may lack: a reason to skip, or undefined. */
export function faultsMissing(): string | undefined {
  if (process.platform !== 'linux') return `fault injection needs Linux (nftables and cgroup v2), not ${process.platform}`;
  if (process.getuid?.() !== 0) return 'fault injection needs root (nft rules, cgroups, bind mounts)';
  const version = spawnSync('nft', ['--version'], { encoding: 'utf8' });
  if (version.error || version.status !== 0) return 'nft is not installed (apt-get install nftables)';
  const mount = cgroup2Mount();
  if (!mount) return 'no cgroup v2 hierarchy is mounted (mount -t cgroup2 none /sys/fs/cgroup/unified)';
  if (mount !== NFT_CGROUP_BASE && !isDir(NFT_CGROUP_BASE)) return `${NFT_CGROUP_BASE} is missing: nft resolves cgroup paths there, cgroup v2 is at ${mount}`;
  // The kernel must know the socket expression: a batch checked (never committed) by the kernel.
  const probe = `chat_faults_probe_${process.pid}`;
  const path = mount === NFT_CGROUP_BASE ? '.' : mount.slice(NFT_CGROUP_BASE.length + 1);
  const check = spawnSync('nft', ['-c', '-f', '-'], {
    input: `add table inet ${probe}\nadd chain inet ${probe} out { type filter hook output priority 0; policy accept; }\nadd rule inet ${probe} out socket cgroupv2 level 1 "${path}" ip daddr 127.0.0.2 drop\n`,
    encoding: 'utf8',
  });
  if (check.status !== 0) return `nft cannot match sockets by cgroup v2 here: ${check.stderr.trim()}`;
  return undefined;
}

/**
 * True when fault injection works here. Otherwise, like requireService: with CI=true it throws,
 * so a fault suite can never pass by not running; outside CI it logs a loud SKIPPED line.
 */
export function requireFaults(log: (line: string) => void): boolean {
  const missing = faultsMissing();
  if (!missing) return true;
  if (process.env.CI === 'true') throw new Error(`fault injection unavailable and CI=true: ${missing}`);
  log(`SKIPPED: ${missing}`);
  return false;
}

/** A rule this instance added, by chain and nft handle: what heal deletes. */
export interface RuleHandle {
  chain: 'out' | 'in';
  handle: number;
}

/** The rules of one cut or isolation, removed by its heal (or by faults.heal). */
export interface Cut {
  /** The enlisted process cut off. */
  name: string;
  /** What it was cut from: addresses and prefixes within 127.0.0.0/8 ... */
  from: string[];
  /** ... except these (isolate: 127.0.0.1, where the test's clients come from, and its own). */
  except: string[];
  rules: RuleHandle[];
  heal(): Promise<void>;
}

export interface Member {
  name: string;
  pid: number;
  /** The address it listens on, if it has one of its own. */
  address?: string;
  /** Its cgroup, as nft names it (relative to /sys/fs/cgroup, at level 2). */
  cgroup: string;
}

export interface Faults {
  /** The nft table: `inet <table>`. */
  readonly table: string;
  readonly members: ReadonlyMap<string, Member>;
  /**
   * Puts a process in a cgroup of its own named `name` (letters, digits, `_`, `-`). `address`: the
   * loopback address it listens on (not 127.0.0.1, which every process's connections leave from),
   * so that cuts can also refuse the connections other enlisted processes make to it.
   */
  enlist(name: string, pid: number, address?: string): Promise<Member>;
  /**
   * Drops every packet both ways between `name` and each address or prefix (within 127.0.0.0/8):
   * its connections to them, established or new, and, when it has an address of its own, the
   * connections enlisted processes listening on those addresses make to it. Cuts add up.
   */
  cut(name: string, addresses: string[]): Promise<Cut>;
  /**
   * Cuts `name` from every loopback address but its own and 127.0.0.1 (Cassandra, Redis, the other
   * nodes, the control service, anything else listening on an address of its own), and every other
   * enlisted process from it; processes not enlisted (the test's own clients) still reach it.
   */
  isolate(name: string): Promise<Cut>;
  /** Removes the rules of every cut of `name`, or of every cut. */
  heal(name?: string): Promise<void>;
  /** SIGSTOP; every paused process is resumed when the instance closes. */
  pause(target: number | string): void;
  /** SIGCONT. */
  resume(target: number | string): void;
  kill(target: number | string, signal?: NodeJS.Signals): void;
  /** Every rule in the table now, with its handle and comment (nft -a list). */
  listing(): string;
  /** Removes everything (also done by teardown and at exit); idempotent. */
  close(): void;
}

const NFT_CGROUP_BASE = '/sys/fs/cgroup';
const PREFIX = 'chat_faults_';
const OWNED = /^chat_faults_(\d+)_[0-9a-f]+$/;
const NAME = /^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/;

/** Where the cgroup v2 hierarchy is mounted (from /proc/mounts), if it is. */
export function cgroup2Mount(): string | undefined {
  for (const line of readFileSync('/proc/mounts', 'utf8').split('\n')) {
    const [, where, type] = line.split(' ');
    if (type === 'cgroup2' && where) return where.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
  }
  return undefined;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function nft(args: string[], input?: string): string {
  const result = spawnSync('nft', input === undefined ? args : [...args, '-f', '-'], { input, encoding: 'utf8' });
  if (result.error) throw result.error;
  if (result.status !== 0) throw new Error(`nft ${args.join(' ')} failed: ${result.stderr.trim()}${input ? `\n${input}` : ''}`);
  return result.stdout;
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** rmdir, retried briefly: a cgroup whose last process just left may still count as populated. */
function removeDir(path: string): void {
  for (let i = 0; ; i++) {
    try {
      rmdirSync(path);
      return;
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') return;
      if (code !== 'EBUSY' || i >= 50) throw error;
      sleepSync(20);
    }
  }
}

function mounted(path: string): boolean {
  return readFileSync('/proc/mounts', 'utf8').split('\n').some((line) => line.split(' ')[1] === path);
}

/** The processes in a cgroup directory (its cgroup.procs). */
function procsOf(dir: string): number[] {
  try {
    return readFileSync(`${dir}/cgroup.procs`, 'utf8').split('\n').filter(Boolean).map(Number);
  } catch {
    return [];
  }
}

/** Moves a process to a cgroup directory; false when it is gone or the cgroup refuses it. */
function moveTo(dir: string, pid: number): boolean {
  try {
    writeFileSync(`${dir}/cgroup.procs`, String(pid));
    return true;
  } catch {
    return false;
  }
}

/** A process's cgroup v2 path ("/" for the root), from /proc/<pid>/cgroup. */
function cgroupOf(pid: number): string {
  const line = readFileSync(`/proc/${pid}/cgroup`, 'utf8').split('\n').find((l) => l.startsWith('0::'));
  if (!line) throw new Error(`process ${pid} is in no cgroup v2`);
  return line.slice(3) || '/';
}

/** Removes a cgroup directory of ours: its processes go to `back(pid)` (or the root), then the bind mount and the directories. */
function removeGroup(mount: string, table: string, back: (pid: number) => string | undefined, errors: string[]): void {
  const dir = `${mount}/${table}`;
  if (isDir(dir)) {
    for (const child of readdirSync(dir, { withFileTypes: true })) {
      if (!child.isDirectory()) continue;
      const path = `${dir}/${child.name}`;
      for (const pid of procsOf(path)) {
        const home = back(pid);
        if (!(home && moveTo(`${mount}${home === '/' ? '' : home}`, pid)) && !moveTo(mount, pid) && alive(pid)) errors.push(`could not move ${pid} out of ${path}`);
      }
      try {
        removeDir(path);
      } catch (error) {
        errors.push(`rmdir ${path}: ${(error as Error).message}`);
      }
    }
  }
  if (mount !== NFT_CGROUP_BASE) {
    const bind = `${NFT_CGROUP_BASE}/${table}`;
    if (mounted(bind)) {
      const umount = spawnSync('umount', [bind], { encoding: 'utf8' });
      if (umount.status !== 0) errors.push(`umount ${bind}: ${umount.stderr.trim()}`);
    }
    try {
      removeDir(bind);
    } catch (error) {
      errors.push(`rmdir ${bind}: ${(error as Error).message}`);
    }
  }
  try {
    removeDir(dir);
  } catch (error) {
    errors.push(`rmdir ${dir}: ${(error as Error).message}`);
  }
}

/**
 * Deletes the tables, cgroups and bind mounts named chat_faults_<pid>_* whose pid is gone (a test
 * killed before its teardown), and resumes the processes left in those cgroups. Returns their names.
 */
export function sweepStale(): string[] {
  const swept = new Set<string>();
  const stale = (name: string) => {
    const owner = OWNED.exec(name);
    return owner !== null && !alive(Number(owner[1]));
  };
  for (const match of nft(['list', 'tables']).matchAll(/^table inet (\S+)$/gm)) {
    const name = match[1]!;
    if (!stale(name)) continue;
    nft(['delete', 'table', 'inet', name]);
    swept.add(name);
  }
  const mount = cgroup2Mount();
  if (mount) {
    const names = new Set([...readdirSync(mount), ...(mount !== NFT_CGROUP_BASE && isDir(NFT_CGROUP_BASE) ? readdirSync(NFT_CGROUP_BASE) : [])].filter(stale));
    for (const name of names) {
      const errors: string[] = [];
      const dir = `${mount}/${name}`;
      if (isDir(dir)) for (const child of readdirSync(dir)) for (const pid of procsOf(`${dir}/${child}`)) signal(pid, 'SIGCONT');
      removeGroup(mount, name, () => undefined, errors);
      if (errors.length) throw new Error(`could not sweep ${name}: ${errors.join('; ')}`);
      swept.add(name);
    }
  }
  return [...swept];
}

function signal(pid: number, sig: NodeJS.Signals): void {
  try {
    process.kill(pid, sig);
  } catch {
    /* gone */
  }
}

const u32 = (hex: string): number[] => {
  const bytes = [...Buffer.from(hex, 'hex')];
  return endianness() === 'LE' ? bytes.reverse() : bytes;
};

/** An address and port from /proc/net/tcp{,6} (IPv4, or IPv4-mapped IPv6), or undefined. */
function procAddress(field: string): { ip: string; port: number } | undefined {
  const [hex, port] = field.split(':');
  if (!hex || !port) return undefined;
  let bytes: number[];
  if (hex.length === 8) bytes = u32(hex);
  else if (hex.length === 32 && u32(hex.slice(0, 8)).concat(u32(hex.slice(8, 16)), u32(hex.slice(16, 24))).join('.') === '0.0.0.0.0.0.0.0.0.0.255.255') bytes = u32(hex.slice(24));
  else return undefined;
  return { ip: bytes.join('.'), port: parseInt(port, 16) };
}

/**
 * The TCP connections a process holds (not its listeners), as nft concatenations
 * `local . local port . remote . remote port`.
 */
function connectionsOf(pid: number): string[] {
  const inodes = new Set<string>();
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return [];
  }
  for (const fd of fds) {
    try {
      const inode = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`))?.[1];
      if (inode) inodes.add(inode);
    } catch {
      /* closed meanwhile */
    }
  }
  const tuples: string[] = [];
  for (const table of ['tcp', 'tcp6']) {
    let text: string;
    try {
      text = readFileSync(`/proc/${pid}/net/${table}`, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields.length < 10 || fields[3] === '0A' || !inodes.has(fields[9]!)) continue;
      const local = procAddress(fields[1]!);
      const remote = procAddress(fields[2]!);
      if (local && remote && remote.port !== 0) tuples.push(`${local.ip} . ${local.port} . ${remote.ip} . ${remote.port}`);
    }
  }
  return tuples;
}

/** An address or prefix within 127.0.0.0/8, normalized; anything else throws. */
function loopback(target: string): string {
  const [ip, bits, extra] = target.split('/');
  const prefix = bits === undefined ? 32 : Number(bits);
  if (extra !== undefined || !ip || !isIPv4(ip) || !Number.isInteger(prefix) || prefix < 8 || prefix > 32 || (bits !== undefined && !/^\d+$/.test(bits))) {
    throw new Error(`faults: not an IPv4 address or prefix: ${target}`);
  }
  if (!ip.startsWith('127.')) throw new Error(`faults: ${target} is outside 127.0.0.0/8: only loopback traffic is ever cut`);
  const value = ip.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const network = prefix === 32 ? value : value - (value % 2 ** (32 - prefix));
  const text = [24, 16, 8, 0].map((shift) => Math.floor(network / 2 ** shift) % 256).join('.');
  return prefix === 32 ? text : `${text}/${prefix}`;
}

function contains(target: string, address: string): boolean {
  const [ip, bits = '32'] = target.split('/');
  const toNumber = (a: string) => a.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toNumber(address) / size) === Math.floor(toNumber(ip!) / size);
}

/** Open instances, closed by the exit and signal handlers (installed once). */
const open = new Set<{ close(): void }>();
let handlersInstalled = false;

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  const closeAll = () => {
    for (const faults of [...open]) {
      try {
        faults.close();
      } catch (error) {
        process.stderr.write(`faults: cleanup at exit failed: ${(error as Error).message}\n`);
      }
    }
  };
  process.on('exit', closeAll);
  for (const sig of ['SIGINT', 'SIGTERM'] as const) {
    const onSignal = () => {
      closeAll();
      // Then die of the signal as if nobody had listened (a handler that remains sees it again).
      process.removeListener(sig, onSignal);
      process.kill(process.pid, sig);
    };
    process.on(sig, onSignal);
  }
}

/**
 * A new fault injector for one test: its own table and cgroups, all removed at t.teardown (and at
 * exit or SIGINT/SIGTERM if the test never gets there). Leftovers of killed tests are swept first.
 */
export async function openFaults(t: { teardown(fn: () => unknown): void; comment?(line: string): void }): Promise<Faults> {
  const missing = faultsMissing();
  if (missing) throw new Error(`fault injection unavailable: ${missing}`);
  const swept = sweepStale();
  if (swept.length) t.comment?.(`faults: removed what killed tests left: ${swept.join(', ')}`);

  const owner = process.pid;
  const table = `${PREFIX}${owner}_${randomBytes(4).toString('hex')}`;
  const mount = cgroup2Mount()!;
  const groupDir = `${mount}/${table}`;
  const members = new Map<string, Member & { home: string; set: string }>();
  const cuts: Cut[] = [];
  const paused = new Set<number>();
  let closed = false;
  let sets = 0;

  const comment = (what: string) => `"${`pid=${owner} ${what}`.replace(/[^\w .=/,:-]/g, '').slice(0, 120)}"`;

  const faults: Faults = {
    table,
    members,
    enlist: async (name, pid, address) => {
      if (closed) throw new Error('faults: closed');
      if (!NAME.test(name)) throw new Error(`faults: a member's name is 1-32 letters, digits, _ or - (not ${JSON.stringify(name)})`);
      if (!Number.isInteger(pid) || pid <= 1 || pid === owner || !alive(pid)) throw new Error(`faults: no process ${pid} to enlist (nor the test's own)`);
      if (address !== undefined) {
        if (loopback(address) !== address) throw new Error(`faults: ${address} is not one address`);
        if (address === '127.0.0.1') throw new Error('faults: 127.0.0.1 is where every connection leaves from, not an address of its own');
      }
      // A process that is gone (a node killed or restarted) gives up its name and its address to
      // the next one; the rules of its cuts stay until healed, matching nothing alive.
      for (const other of [...members.values()].filter((m) => m.name === name || (address !== undefined && m.address === address))) {
        if (stillIn(other)) throw new Error(`faults: ${other.name === name ? name : `${address}, ${other.name}'s address,`} is taken by live process ${other.pid}`);
        members.delete(other.name);
        if (other.name === name) removeDir(`${groupDir}/${name}`);
      }
      const home = cgroupOf(pid);
      const dir = `${groupDir}/${name}`;
      mkdirSync(dir);
      writeFileSync(`${dir}/cgroup.procs`, String(pid));
      const set = `pre_${++sets}`;
      const member = { name, pid, address, cgroup: `${table}/${name}`, home, set };
      members.set(name, member);
      nft([], `add set inet ${table} ${set} { type ipv4_addr . inet_service . ipv4_addr . inet_service; comment ${comment(`connections ${name} held before it was enlisted`)}; }\n`);
      remember(member);
      return { name, pid, address, cgroup: member.cgroup };
    },
    cut: async (name, addresses) => {
      if (addresses.length === 0) throw new Error('faults: cut from nothing');
      const member = memberOf(name);
      const from = [...new Set(addresses.map(loopback))];
      if (member.address && from.some((a) => contains(a, member.address!))) throw new Error(`faults: ${name} cannot be cut from its own address ${member.address}`);
      const peers = [...members.values()].filter((m) => m !== member && m.address && from.some((a) => contains(a, m.address!)));
      return addCut(member, from, [], peers, `cut ${name} from ${from.join(',')}`);
    },
    isolate: async (name) => {
      const member = memberOf(name);
      const except = ['127.0.0.1', ...(member.address ? [member.address] : [])];
      const peers = [...members.values()].filter((m) => m !== member);
      return addCut(member, ['127.0.0.0/8'], except, peers, `isolate ${name}`);
    },
    heal: async (name) => {
      for (const cut of [...cuts]) if (name === undefined || cut.name === name) await cut.heal();
    },
    pause: (target) => {
      const pid = pidOf(target);
      process.kill(pid, 'SIGSTOP');
      paused.add(pid);
    },
    resume: (target) => {
      const pid = pidOf(target);
      process.kill(pid, 'SIGCONT');
      paused.delete(pid);
    },
    kill: (target, sig = 'SIGKILL') => {
      const pid = pidOf(target);
      process.kill(pid, sig);
      if (sig === 'SIGKILL') paused.delete(pid);
    },
    listing: () => nft(['-a', 'list', 'table', 'inet', table]),
    close: () => {
      if (closed) return;
      closed = true;
      open.delete(faults);
      const errors: string[] = [];
      for (const pid of paused) signal(pid, 'SIGCONT');
      paused.clear();
      if (new RegExp(`^table inet ${table}$`, 'm').test(nft(['list', 'tables']))) {
        try {
          nft(['delete', 'table', 'inet', table]);
        } catch (error) {
          errors.push((error as Error).message);
        }
      }
      const homes = new Map([...members.values()].map((m) => [m.pid, m.home]));
      removeGroup(mount, table, (pid) => homes.get(pid) ?? homes.get(parentOf(pid)), errors);
      cuts.length = 0;
      if (errors.length) throw new Error(`faults: cleanup of ${table} failed: ${errors.join('; ')}`);
    },
  };

  function memberOf(name: string): Member & { home: string; set: string } {
    if (closed) throw new Error('faults: closed');
    const member = members.get(name);
    if (!member) throw new Error(`faults: ${name} is not enlisted`);
    return member;
  }

  /** Whether a member's process is still there, in its cgroup (not gone, nor its pid reused). */
  function stillIn(member: Member): boolean {
    try {
      return cgroupOf(member.pid) === `/${member.cgroup}`;
    } catch {
      return false;
    }
  }

  function pidOf(target: number | string): number {
    const pid = typeof target === 'string' ? memberOf(target).pid : target;
    if (!Number.isInteger(pid) || pid <= 1 || pid === owner) throw new Error(`faults: will not signal ${target}`);
    return pid;
  }

  /** Adds the connections a member holds now to its set: those made before it was enlisted are matched by them. */
  function remember(member: { pid: number; set: string }): void {
    const tuples = connectionsOf(member.pid).filter((tuple) => tuple.split(' . ').every((part, i) => i % 2 === 1 || part.startsWith('127.')));
    if (tuples.length) nft([], `add element inet ${table} ${member.set} { ${tuples.join(', ')} }\n`);
  }

  /** The rules that drop every packet between a member's sockets and the addresses matched. */
  function rulesFor(member: Member & { set: string }, from: string[], except: string[], why: string): string[] {
    const match = (field: 'daddr' | 'saddr') => `ip ${field} { ${from.join(', ')} }${except.length ? ` ip ${field} != { ${except.join(', ')} }` : ''}`;
    const socket = `socket cgroupv2 level 2 "${member.cgroup}"`;
    const note = comment(why);
    return [
      `add rule inet ${table} out ${socket} ${match('daddr')} drop comment ${note}`,
      `add rule inet ${table} out ip saddr . tcp sport . ip daddr . tcp dport @${member.set} ${match('daddr')} drop comment ${note}`,
      `add rule inet ${table} in ${match('saddr')} ${socket} drop comment ${note}`,
      `add rule inet ${table} in ip daddr . tcp dport . ip saddr . tcp sport @${member.set} ${match('saddr')} drop comment ${note}`,
    ];
  }

  async function addCut(member: Member & { set: string }, from: string[], except: string[], peers: (Member & { set: string })[], why: string): Promise<Cut> {
    for (const m of [member, ...peers]) if (alive(m.pid)) remember(m);
    const batch = rulesFor(member, from, except, why);
    for (const peer of peers) if (member.address) batch.push(...rulesFor(peer, [member.address], [], `${why}: ${peer.name} to ${member.address}`));
    const echoed = nft(['-e', '-a'], `${batch.join('\n')}\n`);
    const rules = [...echoed.matchAll(/^add rule inet \S+ (out|in) .*# handle (\d+)$/gm)].map((m) => ({ chain: m[1] as 'out' | 'in', handle: Number(m[2]) }));
    if (rules.length !== batch.length) throw new Error(`faults: nft echoed ${rules.length} rule handles for ${batch.length} rules:\n${echoed}`);
    const cut: Cut = {
      name: member.name,
      from,
      except,
      rules,
      heal: async () => {
        const at = cuts.indexOf(cut);
        if (at < 0 || closed) return;
        cuts.splice(at, 1);
        nft([], `${rules.map((r) => `delete rule inet ${table} ${r.chain} handle ${r.handle}`).join('\n')}\n`);
      },
    };
    cuts.push(cut);
    return cut;
  }

  installHandlers();
  open.add(faults);
  t.teardown(() => faults.close());
  try {
    nft(
      [],
      `add table inet ${table} { comment ${comment('chat fault injection')}; }\n` +
        `add chain inet ${table} out { type filter hook output priority 0; policy accept; }\n` +
        `add chain inet ${table} in { type filter hook input priority 0; policy accept; }\n`,
    );
    mkdirSync(groupDir);
    if (mount !== NFT_CGROUP_BASE) {
      // nft finds a cgroup by its path under /sys/fs/cgroup: show ours there.
      mkdirSync(`${NFT_CGROUP_BASE}/${table}`);
      const bind = spawnSync('mount', ['--bind', groupDir, `${NFT_CGROUP_BASE}/${table}`], { encoding: 'utf8' });
      if (bind.status !== 0) throw new Error(`mount --bind ${groupDir}: ${bind.stderr.trim()}`);
    }
  } catch (error) {
    faults.close();
    throw error;
  }
  return faults;
}

/** The parent of a process (for a child an enlisted process started, moved back with it). */
function parentOf(pid: number): number {
  try {
    return Number(/^PPid:\s+(\d+)$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0);
  } catch {
    return 0;
  }
}

