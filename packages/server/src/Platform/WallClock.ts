/**
 * Wall time, the system's: what webhook and notice signatures carry, on the system clock and the manual
 * one alike (`Background/Clockwork` sets the service's clock, never this).
 */
import { WallClock } from "@laari/core"

export const layer = WallClock.layer(() => Date.now())
