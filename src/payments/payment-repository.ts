import type { Database } from "../db/client";

/** Our record of each order's payment, kept in step with what the provider reports. */
export interface PaymentRecord {
  id: string;
  orderId: string;
  providerId: string;
  status: "authorized" | "captured" | "voided" | "refunded" | "failed";
  amountAuthorized: number;
  amountCaptured: number;
  amountRefunded: number;
}

export interface PaymentRepository {
  recordCaptured(
    orderId: string,
    providerId: string,
    amount: number,
    currency: string,
  ): Promise<PaymentRecord>;
  recordVoided(orderId: string, providerId: string, currency: string): Promise<void>;
  recordRefunded(orderId: string, amount: number): Promise<void>;
  /** Records a refund as the provider reports it, creating the record if the capture never got one. */
  recordRefund(
    orderId: string,
    providerId: string,
    currency: string,
    amounts: { captured: number; refunded: number },
  ): Promise<void>;
  recordFailed(orderId: string, providerId: string, currency: string): Promise<void>;
  findByOrder(orderId: string): Promise<PaymentRecord | null>;
}

export function createPaymentRepository(db: Database): PaymentRepository {
  const upsert = (
    orderId: string,
    providerId: string,
    currency: string,
    data: {
      status: PaymentRecord["status"];
      amountCaptured?: number;
      amountAuthorized?: number;
      amountRefunded?: number;
    },
  ) =>
    db.payment.upsert({
      where: { orderId },
      create: { orderId, providerId, currency, ...data },
      update: data,
    });

  return {
    async recordCaptured(orderId, providerId, amount, currency) {
      return upsert(orderId, providerId, currency, {
        status: "captured",
        amountCaptured: amount,
        amountAuthorized: amount,
      });
    },
    async recordVoided(orderId, providerId, currency) {
      // The hold that was released: the order's total (a void releases the whole authorization).
      const order = await db.order.findUnique({ where: { id: orderId }, select: { total: true } });
      await upsert(orderId, providerId, currency, { status: "voided", amountAuthorized: order?.total ?? 0 });
    },
    async recordRefunded(orderId, amount) {
      await db.payment.update({ where: { orderId }, data: { status: "refunded", amountRefunded: amount } });
    },
    async recordRefund(orderId, providerId, currency, amounts) {
      await upsert(orderId, providerId, currency, {
        status: "refunded",
        amountCaptured: amounts.captured,
        amountAuthorized: amounts.captured,
        amountRefunded: amounts.refunded,
      });
    },
    async recordFailed(orderId, providerId, currency) {
      await upsert(orderId, providerId, currency, { status: "failed" });
    },
    async findByOrder(orderId) {
      return db.payment.findUnique({ where: { orderId } });
    },
  };
}
