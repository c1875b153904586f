import type { IncomingWebhookSendArguments } from "@slack/webhook";
import type { AlertKind, OpsNotice, RunFailure } from "./alerter";

/** Slack's mrkdwn treats &, < and > as control characters; user text must not open a link or mention. */
function escapeMrkdwn(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

export type Field = [label: string, value: string | number | undefined];

function field([label, value]: Field): { type: "mrkdwn"; text: string } {
  return { type: "mrkdwn", text: `*${label}*\n${value === undefined ? "—" : escapeMrkdwn(String(value))}` };
}

function message(
  title: string,
  fields: Field[],
  link?: string,
  orderLink?: string,
): IncomingWebhookSendArguments {
  const plain = fields
    .filter(([, value]) => value !== undefined)
    .map(([label, value]) => `${label}: ${String(value)}`);
  return {
    // The fallback text is what notifications and screen readers show.
    text: [
      title,
      ...plain,
      ...(link ? [`Run: ${link}`] : []),
      ...(orderLink ? [`Order page: ${orderLink}`] : []),
    ].join("\n"),
    blocks: [
      { type: "header", text: { type: "plain_text", text: title.slice(0, 150) } },
      // Slack allows at most ten fields per section.
      ...chunk(fields, 10).map((group) => ({ type: "section" as const, fields: group.map(field) })),
      ...(link
        ? [{ type: "section" as const, text: { type: "mrkdwn" as const, text: `<${link}|Open the run>` } }]
        : []),
      ...(orderLink
        ? [
            {
              type: "section" as const,
              text: { type: "mrkdwn" as const, text: `<${orderLink}|Open the order>` },
            },
          ]
        : []),
    ],
  };
}

function chunk<T>(items: T[], size: number): T[][] {
  const groups: T[][] = [];
  for (let i = 0; i < items.length; i += size) groups.push(items.slice(i, i + size));
  return groups;
}

export function runFailedMessage(
  failure: RunFailure,
  link: string,
  orderLink?: string,
): IncomingWebhookSendArguments {
  return alertMessage(runFailedContent(failure, link, orderLink));
}

export function noticeMessage(notice: OpsNotice, link?: string): IncomingWebhookSendArguments {
  return alertMessage(noticeContent(notice, link));
}

/** An alert as the outbox keeps it: what its message shows, already resolved to text and links. */
export interface AlertContent {
  kind: AlertKind;
  title: string;
  fields: Field[];
  runUrl?: string;
  orderUrl?: string;
  orderId?: string;
  runId?: string;
}

export function runFailedContent(failure: RunFailure, link: string, orderLink?: string): AlertContent {
  return {
    kind: "run-failed",
    title: `Run failed: ${failure.functionId}`,
    fields: [
      ["Function", failure.functionId],
      ["Run", failure.runId],
      ["Order", failure.orderId],
      ["Customer", failure.customerId],
      ["Error", failure.error.name],
      ["Message", failure.error.message],
    ],
    runUrl: link,
    ...(orderLink ? { orderUrl: orderLink } : {}),
    ...(failure.orderId ? { orderId: failure.orderId } : {}),
    runId: failure.runId,
  };
}

export function noticeContent(notice: OpsNotice, link?: string): AlertContent {
  const orderId = notice.fields.orderId;
  return {
    kind: "notice",
    title: notice.title,
    fields: Object.entries(notice.fields),
    ...(link ? { runUrl: link } : {}),
    ...(typeof orderId === "string" ? { orderId } : {}),
    ...(notice.runId ? { runId: notice.runId } : {}),
  };
}

export function alertMessage(alert: AlertContent): IncomingWebhookSendArguments {
  return message(alert.title, alert.fields, alert.runUrl, alert.orderUrl);
}

/** How many alerts of a storm its one message lists; the count says how many there were. */
export const alertsListedPerGroup = 5;

/**
 * A storm of one kind of alert (a bad deploy failing every order) as one message: the count, the
 * time span, and the first few alerts' orders and runs, so the channel is not buried.
 */
export function groupedAlertMessage(
  alerts: Array<AlertContent & { raisedAt: Date }>,
): IncomingWebhookSendArguments {
  const [first] = alerts;
  if (first === undefined) throw new Error("groupedAlertMessage: no alerts");
  if (alerts.length === 1) return alertMessage(first);
  const last = alerts[alerts.length - 1] ?? first;
  const listed = alerts.slice(0, alertsListedPerGroup);
  const more = alerts.length - listed.length;
  const title = `${alerts.length}× ${first.title}`;
  const line = (alert: AlertContent) =>
    [
      alert.orderId ? `order ${alert.orderId}` : undefined,
      alert.runId ? `run ${alert.runId}` : undefined,
      alert.runUrl,
    ]
      .filter((part) => part !== undefined)
      .join(" · ") || alert.fields.map(([label, value]) => `${label}: ${String(value ?? "—")}`).join(", ");
  const lines = [...listed.map(line), ...(more > 0 ? [`and ${more} more`] : [])];
  const firstError = first.fields.find(([label]) => label === "Message" || label === "Error");
  return {
    text: [
      title,
      `Between ${first.raisedAt.toISOString()} and ${last.raisedAt.toISOString()}`,
      ...(firstError ? [`First error: ${String(firstError[1])}`] : []),
      ...lines,
    ].join("\n"),
    blocks: [
      { type: "header", text: { type: "plain_text", text: title.slice(0, 150) } },
      {
        type: "section",
        fields: [
          field(["Alerts", alerts.length]),
          field(["First", first.raisedAt.toISOString()]),
          field(["Last", last.raisedAt.toISOString()]),
          ...(firstError ? [field(["First error", firstError[1]])] : []),
        ],
      },
      {
        type: "section",
        text: {
          type: "mrkdwn",
          text: lines
            .map((text) => `• ${escapeMrkdwn(text)}`)
            .join("\n")
            .slice(0, 3000),
        },
      },
    ],
  };
}
