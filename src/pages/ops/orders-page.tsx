import { Router } from "express";
import { isAppError } from "../../errors";
import { OrderStatus } from "../../generated/prisma/enums";
import { formatMoney, orderReference } from "../../notifications/templates";
import { attentionFilters, type OrderListItem } from "../../orders/order-search";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout, statusTone } from "./layout";

const attentionLabels: Record<(typeof attentionFilters)[number], string> = {
  any: "Needs attention (any)",
  failed: "Failed run",
  payment_failed: "Payment failed",
  stock: "Stock problem",
  authorization_expiring: "Authorization expiring",
  stalled: "Stalled",
  reconciliation: "Reconciliation mismatch",
};

function OrdersPage(props: {
  csrf: string;
  query: Record<string, string>;
  orders: OrderListItem[];
  nextCursor: string | null;
  error?: string;
}) {
  const { query } = props;
  const next = props.nextCursor
    ? `/ops?${new URLSearchParams({ ...query, cursor: props.nextCursor }).toString()}`
    : null;
  return (
    <OpsLayout title="Orders" csrf={props.csrf}>
      <h1>Orders</h1>
      <form class="card inline" method="get" action="/ops">
        <select name="status" aria-label="Status">
          <option value="">Any status</option>
          {Object.values(OrderStatus).map((status) => (
            <option key={status} value={status} selected={query.status === status}>
              {status}
            </option>
          ))}
        </select>
        <select name="attention" aria-label="Needs attention">
          <option value="">All orders</option>
          {attentionFilters.map((filter) => (
            <option key={filter} value={filter} selected={query.attention === filter}>
              {attentionLabels[filter]}
            </option>
          ))}
        </select>
        <input
          type="search"
          name="q"
          value={query.q ?? ""}
          placeholder="Order id, e-mail, cs_…, pi_…"
          size={30}
        />
        <button type="submit">Filter</button>
      </form>
      {props.error ? <p class="notice bad">{props.error}</p> : null}
      <div class="card">
        <table>
          <thead>
            <tr>
              <th>Order</th>
              <th>Status</th>
              <th class="hide">Customer</th>
              <th class="num">Total</th>
              <th class="hide">Created</th>
            </tr>
          </thead>
          <tbody>
            {props.orders.map((order) => (
              <tr key={order.id}>
                <td>
                  <a href={`/ops/orders/${order.id}`}>{orderReference(order.id)}</a>
                  {order.attentionReason ? <div class="small error">{order.attentionReason}</div> : null}
                </td>
                <td>
                  <span class={`badge ${statusTone(order.status)}`}>{order.status}</span>
                </td>
                <td class="hide">{order.email}</td>
                <td class="num">{formatMoney(order.total, order.currency)}</td>
                <td class="hide small">{formatTime(order.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {props.orders.length === 0 ? <p class="muted">No orders match.</p> : null}
        {next ? (
          <p>
            <a href={next}>Next page →</a>
          </p>
        ) : null}
      </div>
    </OpsLayout>
  );
}

/** GET /ops: the order list, with the admin API's search and filters. */
export function ordersPage(deps: OpsConsoleDeps): Router {
  const router = Router();
  router.get("/ops", async (req, res) => {
    const query = Object.fromEntries(
      Object.entries(req.query).filter(
        (entry): entry is [string, string] => typeof entry[1] === "string" && entry[1] !== "",
      ),
    );
    const { cursor: _cursor, ...filters } = query;
    const csrf = csrfOf(deps, req);
    try {
      const result = await deps.queries.search(query);
      sendPage(
        res,
        <OrdersPage csrf={csrf} query={filters} orders={result.orders} nextCursor={result.nextCursor} />,
      );
    } catch (error) {
      if (!isAppError(error)) throw error;
      sendPage(
        res,
        <OrdersPage csrf={csrf} query={filters} orders={[]} nextCursor={null} error={error.message} />,
        400,
      );
    }
  });
  return router;
}
