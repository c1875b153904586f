import type { Database } from "../db/client";
import type { Timeline } from "../timeline/timeline";
import { findCustomerOrder } from "./customer-order";
import { findOrderDetails } from "./order-details";
import { parseOrderSearch, searchOrders } from "./order-search";

/**
 * The read models the doors show (the admin API, the ops console, the customer's pages), as
 * query functions over the database, so that no door touches it.
 */
export function createOrderQueries(db: Database, timeline: Pick<Timeline, "orderOfRun">) {
  return {
    /** GET /api/orders and the console's list: query parameters as given, checked here. */
    search: (query: Record<string, unknown>, now?: Date) => searchOrders(db, parseOrderSearch(query), now),
    /** Everything that happened to one order, or null. */
    details: (orderId: string) => findOrderDetails(db, orderId),
    customerOrder: (where: { id: string } | { checkoutSessionId: string }) => findCustomerOrder(db, where),
    orderOfRun: (runId: string) => timeline.orderOfRun(runId),
  };
}

export type OrderQueries = ReturnType<typeof createOrderQueries>;
