import type { AnyRoute, HttpMethod } from './route.ts';

type Segment = { kind: 'static'; value: string } | { kind: 'param'; name: string };

interface CompiledPath {
  segments: Segment[];
  /** Each route keeps its own segments: routes of one path may name their parameters differently. */
  byMethod: Map<HttpMethod, { route: AnyRoute; segments: Segment[] }>;
}

export type Match =
  | { kind: 'found'; route: AnyRoute; params: Record<string, string> }
  | { kind: 'method-not-allowed'; allowed: HttpMethod[] }
  | { kind: 'not-found' };

const parse = (path: string): Segment[] =>
  path
    .split('/')
    .filter(Boolean)
    .map((s) => (s.startsWith(':') ? { kind: 'param', name: s.slice(1) } : { kind: 'static', value: s }));

/**
 * Matches paths segment by segment. Static segments win over parameters, so `/apps/mine` and
 * `/apps/:id` can coexist. The router knows every method of a path, which is what makes 405
 * (with `Allow`) distinguishable from 404.
 */
export class Router {
  private readonly paths: CompiledPath[] = [];

  constructor(routes: readonly AnyRoute[]) {
    for (const route of routes) this.add(route);
    // Paths with more static segments first, so the most specific match is found first.
    this.paths.sort((a, b) => staticCount(b) - staticCount(a));
  }

  get routes(): AnyRoute[] {
    return this.paths.flatMap((p) => [...p.byMethod.values()].map((m) => m.route));
  }

  private add(route: AnyRoute): void {
    const segments = parse(route.path);
    const key = segments.map((s) => (s.kind === 'static' ? s.value : ':')).join('/');
    let entry = this.paths.find((p) => p.segments.map((s) => (s.kind === 'static' ? s.value : ':')).join('/') === key);
    if (!entry) {
      entry = { segments, byMethod: new Map() };
      this.paths.push(entry);
    }
    if (entry.byMethod.has(route.method)) throw new Error(`duplicate route ${route.method} ${route.path}`);
    entry.byMethod.set(route.method, { route, segments });
  }

  match(method: string, path: string): Match {
    const parts = path.split('/').filter(Boolean);
    for (const entry of this.paths) {
      const params = matchSegments(entry.segments, parts);
      if (!params) continue;
      const found = entry.byMethod.get(method as HttpMethod);
      if (found) return { kind: 'found', route: found.route, params: found.segments === entry.segments ? params : matchSegments(found.segments, parts)! };
      return { kind: 'method-not-allowed', allowed: [...entry.byMethod.keys()] };
    }
    return { kind: 'not-found' };
  }
}

const staticCount = (p: CompiledPath) => p.segments.filter((s) => s.kind === 'static').length;

function matchSegments(segments: Segment[], parts: string[]): Record<string, string> | undefined {
  if (segments.length !== parts.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < segments.length; i++) {
    const seg = segments[i]!;
    const part = parts[i]!;
    if (seg.kind === 'static') {
      if (seg.value !== part) return undefined;
    } else {
      let value: string;
      try {
        value = decodeURIComponent(part);
      } catch {
        return undefined;
      }
      params[seg.name] = value;
    }
  }
  return params;
}
