import type { IncomingWebhookSendArguments } from "@slack/webhook";
import type { OpsNotice, RunFailure } from "./alerter";

/** Slack's mrkdwn treats &, < and > as control characters; user text must not open a link or mention. */
function escapeMrkdwn(value: string): string {
  return value.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

type Field = [label: string, value: string | number | undefined];

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
  return message(
    `Run failed: ${failure.functionId}`,
    [
      ["Function", failure.functionId],
      ["Run", failure.runId],
      ["Order", failure.orderId],
      ["Customer", failure.customerId],
      ["Error", failure.error.name],
      ["Message", failure.error.message],
    ],
    link,
    orderLink,
  );
}

export function noticeMessage(notice: OpsNotice, link?: string): IncomingWebhookSendArguments {
  return message(notice.title, Object.entries(notice.fields), link);
}
