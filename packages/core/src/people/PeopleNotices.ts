/**
 * Messages to people (not customers): an invitation's link goes out through the provider's notification
 * channel (`LAARI_NOTIFY_URL`), queued in the same transaction as the invitation so that it is sent
 * exactly when the invitation exists. On a development start the queued links are readable by the
 * operator (`pnpm laari users invitations --merchant`). The server's implementation is `People/Notices`.
 */
import { Context, type DateTime, type Effect } from "effect"
import type { ServiceUnavailable } from "../kernel/Errors.js"
import type { MerchantId } from "../kernel/Ids.js"
import type { MerchantRole } from "./Role.js"

export interface InvitationNotice {
  readonly invitationId: string
  readonly merchantId: MerchantId
  readonly merchantName: string
  readonly email: string
  readonly role: MerchantRole
  /** The whole link, its token included: stored only as long as it is worth sending. */
  readonly link: string
  readonly expiresAt: DateTime.Utc
}

export interface PeopleNoticesService {
  /** Queues the invitation's message, in the caller's transaction. */
  readonly invitation: (notice: InvitationNotice) => Effect.Effect<void, ServiceUnavailable>
}

export class PeopleNotices extends Context.Tag("laari/PeopleNotices")<
  PeopleNotices,
  PeopleNoticesService
>() {}
