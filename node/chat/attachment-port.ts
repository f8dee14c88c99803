import type { ApiError } from '../../common/index.ts';
import type { StoredAttachment } from '../store/index.ts';

/** The files a send names. */
export interface AttachmentLookup {
  appId: string;
  chatId: string;
  senderId: string;
  /** The upload ids the send names, distinct, in the order given. */
  uploadIds: readonly string[];
}

/** A send's request to carry files. */
export interface AttachmentClaim extends AttachmentLookup {
  /** The id the message will have. */
  messageId: string;
  /** The message that carries an upload already: stored, or being written by this chat's actor. */
  heldBy: (uploadId: string) => Promise<string | undefined>;
}

/**
 * What the chat needs of attachments (implemented by node/files, passed in when attachments are
 * on), called by the chat's actor in its serial queue, so no two sends of a chat claim at once.
 *
 * `claim` answers the attachments in the order of `uploadIds`, or a refusal naming the upload: not
 * finalized, expired, not the sender's, not of this chat (ATTACHMENT_NOT_FOUND), or carried by
 * another message (ATTACHMENT_IN_USE). The holder is recorded by the message store, with the
 * message (MessageStore.attachmentHolder); the actor remembers the ones it is writing.
 */
export interface AttachmentPort {
  claim(request: AttachmentClaim): Promise<StoredAttachment[] | ApiError>;
  /**
   * The attachments a send names, as its message would carry them, for the before-send hook
   * (asked before the actor sees the send): the refusals of `claim` but ATTACHMENT_IN_USE, which
   * only the actor's claim can decide. A read: nothing is claimed.
   */
  describe(request: AttachmentLookup): Promise<StoredAttachment[] | ApiError>;
  /**
   * Called before a message that holds files is deleted (its tombstone written): records, durably,
   * that they are to go once the deletion has landed. Throws when that cannot be recorded, and the
   * deletion is then not made.
   */
  messageDeleting(appId: string, chatId: string, messageId: string, uploadIds: readonly string[]): Promise<void>;
  /** Called before a chat is deleted, likewise, for every file of the chat. */
  chatDeleting(appId: string, chatId: string): Promise<void>;
}
