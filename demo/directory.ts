import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { ChatApiError, type ChatServer } from '../sdk/server.ts';

/** A user of the demo application, as the page lists it for sign-in and member picking. */
export interface DemoUser {
  userId: string;
  username: string;
  displayName: string;
}

/**
 * The demo backend's user directory. The chat service keeps users but, like the hosted chat APIs,
 * offers no "list everyone" call to browsers: who may find whom is the integrator's decision. This
 * demo lets everyone find everyone, which a real product would not; it keeps the names it has seen
 * in a file beside the service's data.
 */
export class DemoDirectory {
  private readonly users = new Map<string, DemoUser>();

  constructor(
    private readonly server: ChatServer,
    private readonly file: string,
  ) {
    if (existsSync(file)) for (const u of JSON.parse(readFileSync(file, 'utf8')) as DemoUser[]) this.users.set(u.username, u);
  }

  list(): DemoUser[] {
    return [...this.users.values()].sort((a, b) => a.username.localeCompare(b.username));
  }

  /**
   * The user with this name, registered first if new. The service checks the name (its problem
   * detail reaches the page); a name taken before the directory knew it is signed in by name.
   */
  async ensure(username: string): Promise<DemoUser> {
    const known = this.users.get(username);
    if (known) return known;
    let user: DemoUser;
    try {
      const created = await this.server.registerUser({ username });
      user = { userId: created.userId, username: created.username, displayName: created.displayName };
    } catch (error) {
      if (!(error instanceof ChatApiError) || error.code !== 'USERNAME_TAKEN') throw error;
      const { userId } = await this.server.signIn({ username });
      const found = await this.server.getUser(userId);
      user = { userId, username: found.username, displayName: found.displayName };
    }
    this.users.set(username, user);
    writeFileSync(this.file, JSON.stringify(this.list()), { mode: 0o600 });
    return user;
  }
}
