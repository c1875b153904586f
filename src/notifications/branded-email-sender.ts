import type { Brand } from "../shared/brand";
import type { EmailSender } from "./email-sender";
import { brandEmail } from "./templates/brand";

/** Every e-mail leaves with the shop's brand on it (templates/brand.ts), whichever path sends it. */
export function brandedEmailSender(sender: EmailSender, brand: Brand): EmailSender {
  return {
    send: (request) => sender.send({ ...request, content: brandEmail(request.content, brand) }),
    sendToOrder: (request) =>
      sender.sendToOrder({ ...request, render: (order) => brandEmail(request.render(order), brand) }),
  };
}
