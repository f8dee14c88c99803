import type { ChatClient, SearchHit } from '../../sdk/client.ts';
import { describe } from './conversation-state.ts';

/** How long typing pauses before a search is sent. */
const PAUSE_MS = 250;

/**
 * The sidebar's message search (README, "Search"): the query as typed, and the newest hits of
 * the chats you are in, searched again a moment after typing stops. An answer to an older query
 * than the one shown is dropped.
 */
export class SearchState {
  query = '';
  hits: SearchHit[] = [];
  error: string | undefined;
  searching = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private asked = 0;

  constructor(
    private readonly client: ChatClient,
    private readonly changed: () => void,
  ) {}

  /** Whether the sidebar shows hits instead of chats: a query is typed. */
  get active(): boolean {
    return this.query.trim() !== '';
  }

  type(query: string): void {
    this.query = query;
    clearTimeout(this.timer);
    if (!this.active) {
      this.hits = [];
      this.error = undefined;
    } else this.timer = setTimeout(() => void this.run(), PAUSE_MS);
    this.changed();
  }

  clear(): void {
    this.type('');
  }

  private async run(): Promise<void> {
    const asked = ++this.asked;
    this.searching = true;
    this.changed();
    try {
      const page = await this.client.search(this.query.trim(), { size: 30 });
      if (asked !== this.asked) return;
      this.hits = page.hits;
      this.error = undefined;
    } catch (error) {
      if (asked !== this.asked) return;
      this.error = `Could not search: ${describe(error)}`;
    } finally {
      if (asked === this.asked) this.searching = false;
      this.changed();
    }
  }
}
