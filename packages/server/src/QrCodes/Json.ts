/**
 * Read shapes of QR codes and their payments: camelCase, Maldives time, `outletId` a string.
 */
import { Calendar, type QrCode } from "@laari/core"
import type { QrCodeDeactivated, QrCodeRead } from "./Api.js"

export const imageUrl = (baseUrl: string, c: QrCode.QrCode): string | null =>
  c.type === "STATIC" ? `${baseUrl}/qr/${c.id}.png` : null

export const qrCode = (c: QrCode.QrCode, baseUrl: string): typeof QrCodeRead.Type => ({
  id: c.id,
  type: c.type,
  status: c.status,
  outletId: String(c.outletId),
  title: c.title,
  description: c.description,
  amount: c.amount,
  payload: c.payload,
  qrid: c.qrid,
  imageUrl: imageUrl(baseUrl, c),
  reference: c.reference,
  expiresAt: c.expiresAt === null ? null : Calendar.formatMaldives(c.expiresAt),
  createdAt: Calendar.formatMaldives(c.createdAt)
})

export const deactivated = (c: QrCode.QrCode): typeof QrCodeDeactivated.Type => ({
  id: c.id,
  status: c.status,
  type: c.type
})

export const payment = (p: QrCode.Payment) => ({
  id: p.id,
  qrid: p.qrid,
  qrCodeId: p.qrCodeId,
  amount: p.amount,
  fee: p.fee,
  netAmount: p.netAmount,
  amountRefunded: p.amountRefunded,
  createdAt: Calendar.formatMaldives(p.createdAt)
})
