import { ApiError } from '../../common/index.ts';
import type { MessageStore, StoredAttachment } from '../store/index.ts';
import type { AttachmentPort } from './attachment-port.ts';

/**
 * The files of a chat's new messages (README, "Attachments"): each send's uploads are checked by
 * the attachments port, in the chat's serial queue, and remembered as that message's until its
 * write settles. Then the store holds the claim (written with the message), or the write failed
 * and the upload is free again. So a send queued behind another cannot take the same upload,
 * stored or not yet.
 */
export class SendAttachments {
  /** Uploads claimed by messages being written, by upload id. */
  private readonly claiming = new Map<string, string>();

  constructor(
    private readonly appId: string,
    private readonly chatId: string,
    private readonly store: MessageStore,
    private readonly port: AttachmentPort | undefined,
  ) {}

  /** The attachments message `messageId` carries, or the refusal; remembered until `settled`. */
  async claim(senderId: string, messageId: string, uploadIds: readonly string[]): Promise<StoredAttachment[] | ApiError> {
    if (!this.port) return new ApiError('UNAVAILABLE', 'this deployment stores no attachments (ATTACHMENTS_STORE=off)');
    const heldBy = async (id: string) => this.claiming.get(id) ?? (await this.store.attachmentHolder(this.appId, this.chatId, id));
    const files = await this.port.claim({ appId: this.appId, chatId: this.chatId, senderId, uploadIds, messageId, heldBy });
    if (!(files instanceof ApiError)) for (const id of uploadIds) this.claiming.set(id, messageId);
    return files;
  }

  /** Forgets a message's claims once its write has settled, durable or failed. */
  settled(durable: Promise<unknown>, files: readonly StoredAttachment[]): void {
    const release = () => files.forEach((a) => this.claiming.delete(a.id));
    durable.then(release, release);
  }
}
