import { useEffect, useMemo, useState } from 'preact/hooks';

/**
 * Which view the address names. Views live in the fragment (`#/apps/<id>`), so the service serves
 * one page, a reload stays on the same view, and Back and Forward work as people expect.
 */

export type Route = { view: 'login' } | { view: 'signup' } | { view: 'apps' } | { view: 'app'; appId: string } | { view: 'profile' };

export function parseRoute(hash: string): Route {
  const [, first, second] = hash.replace(/^#/, '').split('/');
  if (first === 'signup') return { view: 'signup' };
  if (first === 'login') return { view: 'login' };
  if (first === 'profile') return { view: 'profile' };
  if (first === 'apps' && second) return { view: 'app', appId: decodeURIComponent(second) };
  return { view: 'apps' };
}

export const go = (hash: string) => {
  if (location.hash !== hash) location.hash = hash;
};

export function useRoute(): Route {
  const [hash, setHash] = useState(location.hash);
  useEffect(() => {
    const onChange = () => setHash(location.hash);
    addEventListener('hashchange', onChange);
    return () => removeEventListener('hashchange', onChange);
  }, []);
  return useMemo(() => parseRoute(hash), [hash]);
}
