import { useEffect, useReducer } from 'preact/hooks';
import type { ChatState } from './chat-state.ts';

/** Renders the calling view again whenever the state changes. */
export function useChatState(state: ChatState): ChatState {
  const [, tick] = useReducer((n: number) => n + 1, 0);
  useEffect(() => state.subscribe(() => tick(undefined)), [state]);
  return state;
}
