/** The ops console's pages an alert or a report links to, under PUBLIC_URL. */
export function opsUrls(publicUrl: string) {
  const base = publicUrl.replace(/\/+$/, "");
  return {
    order: (orderId: string) => `${base}/ops/orders/${orderId}`,
    product: (sku: string) => `${base}/ops/products/${encodeURIComponent(sku)}`,
    report: (runId: string) => `${base}/ops/reconciliation/${runId}`,
  };
}
