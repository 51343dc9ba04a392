/**
 * The money invariants the reliability suite asserts after every fault, read straight from PostgreSQL
 * with a connection of its own (so it works for a server in another process too):
 * - every transfer's entries sum to zero, and every balance equals the sum of its folded entries;
 * - one transfer per mandate charge and none without its charge;
 * - one transfer per paid invoice attempt, none for an invoice that is not PAID with that payment;
 * - no idempotency key left without its response (nothing stuck in flight);
 * - per merchant and environment, payments minus refunds equal the balance plus the fees taken:
 *   no other transfer moves a merchant's money, and none moves it but by what it says.
 */
import pg from "pg"

export interface Violations {
  readonly unbalancedTransfers: ReadonlyArray<string>
  readonly driftedAccounts: ReadonlyArray<string>
  readonly chargesWithoutTransfer: ReadonlyArray<string>
  readonly chargeTransfersWithoutCharge: ReadonlyArray<string>
  readonly invoicesWithSeveralTransfers: ReadonlyArray<string>
  readonly invoiceTransfersNotPaid: ReadonlyArray<string>
  readonly paidInvoicesWithoutTransfer: ReadonlyArray<string>
  readonly keysInFlight: ReadonlyArray<string>
  readonly merchantBalancesOff: ReadonlyArray<string>
}

export const none: Violations = {
  unbalancedTransfers: [],
  driftedAccounts: [],
  chargesWithoutTransfer: [],
  chargeTransfersWithoutCharge: [],
  invoicesWithSeveralTransfers: [],
  invoiceTransfersNotPaid: [],
  paidInvoicesWithoutTransfer: [],
  keysInFlight: [],
  merchantBalancesOff: []
}

const InvoiceTransfer = "'^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}:[0-9]+$'"

const queries: Record<keyof Violations, string> = {
  unbalancedTransfers:
    "SELECT transfer_id AS id FROM ledger_entries GROUP BY transfer_id HAVING sum(amount) <> 0",
  driftedAccounts: `SELECT a.id FROM ledger_accounts a
    LEFT JOIN (SELECT account_id, sum(amount) AS total FROM ledger_entries WHERE rolled GROUP BY account_id) e
      ON e.account_id = a.id
    WHERE a.balance <> coalesce(e.total, 0)`,
  chargesWithoutTransfer: `SELECT c.id::text AS id FROM mandate_charges c
    WHERE NOT EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = 'mandate-charge:' || c.id)`,
  chargeTransfersWithoutCharge: `SELECT t.id FROM ledger_transfers t WHERE t.id LIKE 'mandate-charge:%'
    AND NOT EXISTS (SELECT 1 FROM mandate_charges c WHERE t.id = 'mandate-charge:' || c.id)`,
  invoicesWithSeveralTransfers: `SELECT split_part(t.id, ':', 1) AS id FROM ledger_transfers t
    WHERE t.id ~ ${InvoiceTransfer} GROUP BY 1 HAVING count(*) > 1`,
  invoiceTransfersNotPaid: `SELECT t.id FROM ledger_transfers t WHERE t.id ~ ${InvoiceTransfer}
    AND NOT EXISTS (SELECT 1 FROM invoices i
      WHERE i.id::text = split_part(t.id, ':', 1) AND i.status = 'PAID' AND i.payment_intent_id = t.id)`,
  paidInvoicesWithoutTransfer: `SELECT i.id::text AS id FROM invoices i WHERE i.status = 'PAID'
    AND NOT EXISTS (SELECT 1 FROM ledger_transfers t WHERE t.id = i.payment_intent_id)`,
  keysInFlight: "SELECT key AS id FROM idempotency_keys WHERE response_status IS NULL",
  merchantBalancesOff: `SELECT a.id FROM ledger_accounts a
    LEFT JOIN (SELECT account_id, sum(amount) AS pending FROM ledger_entries WHERE NOT rolled GROUP BY account_id) u
      ON u.account_id = a.id
    LEFT JOIN (SELECT merchant_id, environment,
        sum(CASE kind WHEN 'payment' THEN amount WHEN 'refund' THEN -amount ELSE 0 END) AS paid,
        sum(CASE kind WHEN 'payment' THEN fee ELSE 0 END) AS fees
      FROM ledger_transfers WHERE merchant_id IS NOT NULL GROUP BY 1, 2) t
      ON t.merchant_id = a.merchant_id AND t.environment = a.environment
    WHERE a.kind = 'merchant' AND coalesce(t.paid, 0) <> a.balance + coalesce(u.pending, 0) + coalesce(t.fees, 0)`
}

/** Every violation found in the database at `url` (all empty when the invariants hold). */
export const check = async (url: string): Promise<Violations> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const found: Record<string, ReadonlyArray<string>> = {}
    for (const [name, query] of Object.entries(queries)) {
      const result = await client.query<{ id: string }>(query)
      found[name] = result.rows.map((r) => r.id)
    }
    return found as unknown as Violations
  } finally {
    await client.end()
  }
}

/** Runs `f` with a connection of its own to `url`, closed afterwards. */
export const withClient = async <A>(url: string, f: (client: pg.Client) => Promise<A>): Promise<A> => {
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    return await f(client)
  } finally {
    await client.end().catch(() => {})
  }
}
