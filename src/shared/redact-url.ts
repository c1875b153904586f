/**
 * Query parameters that carry a credential: a customer link's signature (it opens that customer's
 * order page), tokens, the Checkout Session id the success page looks an order up by. Their
 * values never reach a log line; the rest of the URL stays, for reading the log.
 */
const credentialParameters = [
  "sig",
  "signature",
  "token",
  "access_token",
  "session_id",
  "secret",
  "password",
];

const credentialInQuery = new RegExp(`([?&;](?:${credentialParameters.join("|")})=)[^&;#\\s"'<>]*`, "gi");

/** The URL (or any text quoting one) with each credential parameter's value replaced. */
export function redactUrlCredentials(text: string): string {
  return text.includes("=") ? text.replace(credentialInQuery, "$1[redacted]") : text;
}
