import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import type Stripe from "stripe";

export interface IdempotencyRecord {
  /** `POST /v1/refunds`: a key reused on another endpoint is a mismatch too. */
  route: string;
  fingerprint: string;
  status: number;
  body: unknown;
  createdAt: number;
}

/** What a session's PaymentIntent will look like once the customer pays (Stripe keeps this internally). */
export interface PaymentSettings {
  captureMethod: Stripe.PaymentIntent.CaptureMethod;
  metadata: Record<string, string>;
  description: string | null;
  /** `payment_intent_data[setup_future_usage]`: the card is saved to the Customer once paid. */
  setupFutureUsage?: "on_session" | "off_session" | null;
  /** `customer_creation`: `always` makes a Customer when the session completes. */
  customerCreation?: "always" | "if_required" | null;
}

/** A Customer Checkout created, and the cards saved to it (Stripe attaches them when paid). */
export interface SandboxCustomer {
  id: string;
  email: string | null;
  created: number;
  paymentMethods: string[];
}

export interface SandboxData {
  checkoutSessions: Record<string, Stripe.Checkout.Session>;
  lineItems: Record<string, Stripe.LineItem[]>;
  sessionSettings: Record<string, PaymentSettings>;
  paymentIntents: Record<string, Stripe.PaymentIntent>;
  charges: Record<string, Stripe.Charge>;
  refunds: Record<string, Stripe.Refund>;
  /** Oldest first (insertion order): what moved money on the account's balance. */
  balanceTransactions: Record<string, Stripe.BalanceTransaction>;
  disputes: Record<string, Stripe.Dispute>;
  customers: Record<string, SandboxCustomer>;
  coupons: Record<string, Stripe.Coupon>;
  promotionCodes: Record<string, Stripe.PromotionCode>;
  shippingRates: Record<string, Stripe.ShippingRate>;
  /** The products Checkout made from `price_data.product_data` (rendered when a line's price.product is expanded). */
  products: Record<string, Stripe.Product>;
  /** Per Checkout Session: what `total_details.breakdown` renders when expanded. */
  breakdowns: Record<string, Stripe.Checkout.Session.TotalDetails.Breakdown>;
  reviews: Record<string, Stripe.Review>;
  /** Oldest first, as recorded. */
  events: Stripe.Event[];
  idempotency: Record<string, IdempotencyRecord>;
  /** How far advanceClock has moved the sandbox clock, so a restart keeps the same time. */
  clockAdvancedMs: number;
}

function emptyData(): SandboxData {
  return {
    checkoutSessions: {},
    lineItems: {},
    sessionSettings: {},
    paymentIntents: {},
    charges: {},
    refunds: {},
    balanceTransactions: {},
    disputes: {},
    customers: {},
    coupons: {},
    promotionCodes: {},
    shippingRates: {},
    products: {},
    breakdowns: {},
    reviews: {},
    events: [],
    idempotency: {},
    clockAdvancedMs: 0,
  };
}

/**
 * The sandbox's whole world, in memory. With a state file every change is written through
 * (write to a temporary file, then rename) so a restarted `npm start` still knows the Checkout
 * Sessions its orders point at. The state is small and this is a development tool, so a
 * synchronous write per change is the simple, crash-safe choice.
 */
export class SandboxStore {
  readonly data: SandboxData;
  private readonly eventIndex = new Map<string, number>();

  constructor(private readonly stateFile?: string) {
    this.data = stateFile ? loadState(stateFile) : emptyData();
    this.data.events.forEach((event, i) => this.eventIndex.set(event.id, i));
  }

  addEvent(event: Stripe.Event): void {
    this.eventIndex.set(event.id, this.data.events.length);
    this.data.events.push(event);
  }

  findEvent(id: string): Stripe.Event | undefined {
    const index = this.eventIndex.get(id);
    return index === undefined ? undefined : this.data.events[index];
  }

  /** Call after every mutation. */
  persist(): void {
    if (!this.stateFile) return;
    mkdirSync(path.dirname(this.stateFile), { recursive: true, mode: 0o700 });
    const temporary = `${this.stateFile}.${process.pid}.tmp`;
    writeFileSync(temporary, JSON.stringify(this.data), { mode: 0o600 });
    renameSync(temporary, this.stateFile);
  }
}

function loadState(file: string): SandboxData {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return emptyData();
    throw error;
  }
  return { ...emptyData(), ...(JSON.parse(text) as Partial<SandboxData>) };
}
