import {
  answerOf,
  differences,
  firstAnswers,
  owedRetry,
  type Delivery,
} from "../../scripts/bench/exactly-once";

// bench:webhook once printed 1,565 first deliveries sent against 1,564 announced and accepted, and
// nothing to say which order or why: it now names the orders on which the counts part.
describe("the exactly-once check of bench:webhook", () => {
  const ok = answerOf(200, '{"received":true,"outcome":"processed","announced":true}');
  const delivery = (
    orderId: string,
    first: Delivery["first"] = ok,
    row = "webhook, first deliveries (1)",
  ) => ({
    orderId,
    row,
    first,
    redeliveries: [],
  });

  it("finds nothing when every delivered order was announced and accepted once", () => {
    expect(
      differences({
        deliveries: [delivery("a"), delivery("b")],
        announced: ["b", "a"],
        accepted: ["a", "b"],
      }),
    ).toEqual([]);
  });

  it("names a delivered order neither announced nor accepted, with the answer it got", () => {
    const failed = delivery("b", answerOf(500, ""), "open loop, reference handler (2)");
    expect(
      differences({
        deliveries: [delivery("a"), failed, delivery("c")],
        announced: ["a", "c"],
        accepted: ["a", "c"],
      }),
    ).toEqual([{ orderId: "b", delivery: failed, announced: false, accepted: 0 }]);
  });

  it("names an order announced but accepted twice, or accepted but not marked", () => {
    expect(
      differences({
        deliveries: [delivery("a"), delivery("b")],
        announced: ["a"],
        accepted: ["a", "a", "b"],
      }),
    ).toEqual([
      { orderId: "a", delivery: delivery("a"), announced: true, accepted: 2 },
      { orderId: "b", delivery: delivery("b"), announced: false, accepted: 1 },
    ]);
  });

  it("names an order announced or accepted that no first delivery was handed out for", () => {
    expect(differences({ deliveries: [delivery("a")], announced: ["a", "x"], accepted: ["a", "y"] })).toEqual(
      [
        { orderId: "x", announced: true, accepted: 0 },
        { orderId: "y", announced: false, accepted: 1 },
      ],
    );
  });

  it("counts the answers to first deliveries, an unanswered one apart", () => {
    expect(
      firstAnswers([
        delivery("a"),
        delivery("b", answerOf(503, "")),
        { orderId: "c", row: "webhook, first deliveries (2)", redeliveries: [] },
      ]),
    ).toEqual({
      "200": 1,
      "503": 1,
      unanswered: 1,
    });
  });

  it("retries, as Stripe does, a delivery whose last answer was not a 2xx", () => {
    const healed = { ...delivery("b", answerOf(503, "")), redeliveries: [answerOf(200, "")] };
    const stillFailing = { ...delivery("c", answerOf(200, "")), redeliveries: [answerOf(500, "")] };
    const unanswered = { orderId: "d", row: "open loop, webhook (1)", redeliveries: [] };
    expect(
      owedRetry([delivery("a"), healed, stillFailing, unanswered, delivery("e", answerOf(400, ""))]),
    ).toEqual([2, 3, 4]);
  });

  it("keeps a long answer's first 200 characters", () => {
    expect(answerOf(500, "x".repeat(300)).body).toBe(`${"x".repeat(200)}…`);
  });
});
