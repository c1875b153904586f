import net from "node:net";
import express from "express";
import request from "supertest";
import { parseConfig } from "../../src/config";
import { orderCancelledEvent } from "../../src/events/contracts";
import { createInngestPublisher } from "../../src/events/publisher";
import { errorHandler } from "../../src/http/errors";
import { createInngestClient } from "../../src/inngest/client";
import { captureLog } from "../support/log-capture";

/**
 * An event Inngest does not take (the dev server not running: ECONNREFUSED) is a 503 naming Inngest
 * on every door that publishes (cancel, hold release, returns, the webhooks), never the
 * `database_unavailable` that the socket code in its cause used to be taken for.
 */
describe("the event publisher when Inngest is unreachable", () => {
  it("fails with inngest_unavailable, which the HTTP layer answers 503 naming Inngest", async () => {
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, "127.0.0.1", resolve));
    const { port } = closed.address() as net.AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));

    const inngest = createInngestClient(parseConfig({ INNGEST_DEV: `http://127.0.0.1:${port}` }));
    const publisher = createInngestPublisher(inngest);
    const failure = await publisher
      .publish(orderCancelledEvent({ orderId: "3f2504e0-4f89-41d3-9a0c-0305e82c3301" }))
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ code: "inngest_unavailable", httpStatus: 503 });

    const log = captureLog();
    const app = express();
    app.use((req, _res, next) => {
      req.log = log.logger;
      next();
    });
    app.post("/cancel", (_req, _res, next) => next(failure));
    app.use(errorHandler);
    const res = await request(app).post("/cancel").expect(503);
    expect(res.body).toEqual({
      error: {
        code: "inngest_unavailable",
        message: "Inngest did not accept shop/order.cancelled (unreachable or refusing it); retry shortly",
      },
    });
  });
});
