/**
 * The HTTP answers of the subscriptions' errors. An endpoint lists the ones it can fail with (`addError`);
 * an error is answered by the schemas its endpoint lists.
 */
import { Subscriptions } from "@laari/core"
import * as Problem from "../Http/Problem.js"

export const SubscriptionNotFound = Problem.plain(
  Subscriptions.SubscriptionNotFound,
  "SubscriptionNotFound",
  404,
  "Subscription not found",
  "SUBSCRIPTION_NOT_FOUND"
)
export const SubscriptionNotCancellable = Problem.plain(
  Subscriptions.SubscriptionNotCancellable,
  "SubscriptionNotCancellable",
  409,
  "Subscription cannot be cancelled",
  "SUBSCRIPTION_NOT_CANCELLABLE"
)
