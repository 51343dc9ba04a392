/**
 * What the wallet provider's notification service receives for one customer notice, and the rules of its
 * delivery (retry schedule, give-up time, expiry): core's `Notice`, named here for the server's readers.
 */
import { Notice } from "@laari/core"

export type Document = Notice.Document
export const { DeliveryWindow, RetryDelays, afterFailure, delayAfter, giveUpAt, stored, withPhone } = Notice
export type AfterFailure = Notice.AfterFailure
