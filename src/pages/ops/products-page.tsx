import { Router, type Request, type Response } from "express";
import { isAppError } from "../../errors";
import type { Catalog } from "../../inventory/catalog";
import type { ImportLineError, ImportResult } from "../../inventory/catalog-csv";
import {
  createProductBody,
  describeIssues,
  manualStockReasons,
  stockChangeBody,
  updateProductBody,
  type Product,
  type StockMovement,
} from "../../inventory/product-schemas";
import { formatMoney } from "../../notifications/templates";
import { minorToMajorText, parseMajorUnits } from "../../shared/money";
import { formatTime, sendPage } from "../layout";
import type { OpsConsoleDeps } from "./deps";
import { csrfOf, OpsLayout, sendNotFound } from "./layout";

type Form = Record<string, string>;
type Notice = { text: string; bad?: boolean };

const formOf = (req: Request): Form =>
  Object.fromEntries(
    Object.entries((req.body ?? {}) as Record<string, unknown>).flatMap(([key, value]) =>
      typeof value === "string" && key !== "_csrf" ? [[key, value.trim()]] : [],
    ),
  );

/**
 * The price as typed, in the currency's major unit ("12.50"), as the API's minor units (1250); a
 * price that cannot be read is a message for the form. A currency the catalog refuses is left to
 * its own check, which says why.
 */
function priceOf(form: Form, currency: string | undefined): { minorUnits?: number; error?: string } {
  const typed = form.unitPrice;
  if (typed === undefined || typed === "") return {};
  if (currency === undefined || !/^[A-Za-z]{3}$/.test(currency))
    return { error: "currency: a three-letter code" };
  try {
    const parsed = parseMajorUnits(typed, currency);
    return parsed.ok ? { minorUnits: parsed.minorUnits } : { error: `price: ${parsed.message}` };
  } catch {
    return { error: `currency: ${currency} is not an ISO 4217 currency code` };
  }
}

/** A form's text fields as the API's JSON body: numbers as numbers, an empty measure as null. */
function productBodyOf(
  form: Form,
  fields: readonly string[],
  price: number | undefined,
): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  const numberOrText = (value: string) => (/^-?\d+(\.\d+)?$/.test(value) ? Number(value) : value);
  for (const key of fields) {
    const value = form[key];
    if (value === undefined) continue;
    if (["weightOz", "lengthIn", "widthIn", "heightIn", "lowStockThreshold", "taxCode"].includes(key)) {
      body[key] = value === "" ? null : numberOrText(value);
    } else if (key === "unitPrice") {
      if (price !== undefined) body.unitPrice = price;
    } else if (["stockOnHand", "version"].includes(key)) {
      if (value !== "") body[key] = numberOrText(value);
    } else if (value !== "" || key === "name") body[key] = value;
  }
  body.digital = form.digital === "on";
  body.shipsAlone = form.shipsAlone === "on";
  return body;
}

const fieldsEdited = [
  "name",
  "unitPrice",
  "currency",
  "weightOz",
  "lengthIn",
  "widthIn",
  "heightIn",
  "lowStockThreshold",
  "taxCode",
  "version",
];

function ProductFields(props: { product?: Product; form?: Form; creating: boolean }) {
  const { product } = props;
  const value = (key: keyof Product) =>
    props.form?.[key] ??
    (product && product[key] !== null
      ? key === "unitPrice"
        ? minorToMajorText(product.unitPrice, product.currency)
        : String(product[key])
      : "");
  const input = (key: keyof Product, label: string, extra: Record<string, unknown> = {}) => (
    <p>
      <label>
        {label} <input name={key} value={value(key)} {...extra} />
      </label>
    </p>
  );
  return (
    <>
      {props.creating ? input("sku", "SKU", { required: true, maxLength: 64 }) : null}
      {input("name", "Name", { required: true, maxLength: 200, size: 40 })}
      {input("unitPrice", "Price (in the currency, e.g. 12.50; 1250 for JPY)", {
        required: true,
        inputMode: "decimal",
        size: 10,
      })}
      {input("currency", "Currency", { required: true, maxLength: 3, size: 4 })}
      {input("weightOz", "Weight (oz)", { inputMode: "decimal" })}
      {input("lengthIn", "Length (in)", { inputMode: "decimal" })}
      {input("widthIn", "Width (in)", { inputMode: "decimal" })}
      {input("heightIn", "Height (in)", { inputMode: "decimal" })}
      {input("lowStockThreshold", "Low-stock threshold", { inputMode: "numeric" })}
      {input("taxCode", "Stripe tax code (txcd_…; empty: the shop's default)", { maxLength: 13, size: 14 })}
      {props.creating ? input("stockOnHand", "Opening stock", { inputMode: "numeric" }) : null}
      <p>
        <label>
          <input
            type="checkbox"
            name="digital"
            checked={props.form ? props.form.digital === "on" : (props.product?.digital ?? false)}
          />{" "}
          Digital (nothing to ship)
        </label>
      </p>
      <p>
        <label>
          <input
            type="checkbox"
            name="shipsAlone"
            checked={props.form ? props.form.shipsAlone === "on" : (props.product?.shipsAlone ?? false)}
          />{" "}
          Ships alone (each unit in a parcel of its own)
        </label>
      </p>
    </>
  );
}

function ProductsPage(props: {
  csrf: string;
  products: Product[];
  lowOnly: boolean;
  archived: boolean;
  csv: boolean;
}) {
  return (
    <OpsLayout title="Products" csrf={props.csrf}>
      <h1>Products</h1>
      <p class="card inline">
        <a href="/ops/products">All on sale</a> · <a href="/ops/products?low=true">Low on stock</a> ·{" "}
        <a href="/ops/products?archived=include">Including archived</a> ·{" "}
        <a class="button" href="/ops/products/new">
          New product
        </a>{" "}
        {props.csv ? (
          <>
            <a class="button secondary" href="/ops/products/export.csv" download="products.csv">
              Export CSV
            </a>{" "}
            <a class="button secondary" href="/ops/products/import">
              Import CSV
            </a>
          </>
        ) : null}
      </p>
      <div class="card">
        <table>
          <thead>
            <tr>
              <th>SKU</th>
              <th>Name</th>
              <th>Price</th>
              <th>On hand</th>
              <th>Low at</th>
              <th>Weight</th>
            </tr>
          </thead>
          <tbody>
            {props.products.map((product) => (
              <tr key={product.sku} data-sku={product.sku}>
                <td>
                  <a href={`/ops/products/${encodeURIComponent(product.sku)}`}>{product.sku}</a>
                </td>
                <td>
                  {product.name}
                  {product.archived ? <span class="pill warn"> archived</span> : null}
                  {product.digital ? <span class="pill"> digital</span> : null}
                  {product.shipsAlone ? <span class="pill"> ships alone</span> : null}
                </td>
                <td>{formatMoney(product.unitPrice, product.currency)}</td>
                <td class={product.lowStock ? "bad" : ""}>
                  {product.stockOnHand}
                  {product.lowStock ? <span class="pill bad"> low</span> : null}
                </td>
                <td>{product.lowStockThreshold ?? "—"}</td>
                <td>{product.weightOz !== null ? `${product.weightOz} oz` : "default"}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {props.products.length === 0 ? (
          <p>{props.lowOnly ? "Nothing is low on stock." : "No products yet."}</p>
        ) : null}
      </div>
    </OpsLayout>
  );
}

function NewProductPage(props: { csrf: string; form?: Form; notice?: Notice }) {
  return (
    <OpsLayout title="New product" csrf={props.csrf}>
      <h1>New product</h1>
      {props.notice ? <p class={`notice ${props.notice.bad ? "bad" : "ok"}`}>{props.notice.text}</p> : null}
      <form class="card" method="post" action="/ops/products">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <ProductFields creating {...(props.form ? { form: props.form } : {})} />
        <p>
          <button type="submit">Create</button>{" "}
          <a class="button secondary" href="/ops/products">
            Back
          </a>
        </p>
      </form>
    </OpsLayout>
  );
}

function ProductPage(props: {
  csrf: string;
  product: Product;
  movements: StockMovement[];
  nextCursor: string | null;
  form?: Form;
  notice?: Notice;
}) {
  const { product } = props;
  const base = `/ops/products/${encodeURIComponent(product.sku)}`;
  return (
    <OpsLayout title={product.name} csrf={props.csrf}>
      <h1>
        {product.name} <small>{product.sku}</small>
        {product.archived ? <span class="pill warn"> archived</span> : null}
      </h1>
      {props.notice ? (
        <p class={`notice ${props.notice.bad ? "bad" : "ok"}`} role="status">
          {props.notice.text}
        </p>
      ) : null}
      <div class="card">
        <h2>Stock</h2>
        <p>
          On hand: <strong data-testid="stock-on-hand">{product.stockOnHand}</strong>
          {product.lowStock ? <span class="pill bad"> low</span> : null}
        </p>
        <form method="post" action={`${base}/stock`} class="inline">
          <input type="hidden" name="_csrf" value={props.csrf} />
          <select name="reason" aria-label="Reason">
            {manualStockReasons.map((reason) => (
              <option key={reason} value={reason}>
                {reason}
              </option>
            ))}
          </select>
          <input
            name="quantity"
            aria-label="Quantity"
            placeholder="+10, -2, or the count"
            size={14}
            required
          />
          <input name="note" aria-label="Note" placeholder="Note" maxLength={500} size={30} />
          <button type="submit">Record</button>
        </form>
        <p>
          <small>
            received, returned: units in (+n); adjusted: ±n; written-off: units out (−n or n); counted: what
            is on the shelf, the ledger records the difference.
          </small>
        </p>
        <table>
          <thead>
            <tr>
              <th>When</th>
              <th>Change</th>
              <th>Reason</th>
              <th>By</th>
              <th>After</th>
              <th>Note</th>
            </tr>
          </thead>
          <tbody>
            {props.movements.map((movement) => (
              <tr key={movement.id} class="movement">
                <td>{formatTime(new Date(movement.createdAt))}</td>
                <td>{movement.delta > 0 ? `+${movement.delta}` : String(movement.delta)}</td>
                <td>{movement.reason}</td>
                <td>
                  {movement.orderId ? (
                    <a href={`/ops/orders/${movement.orderId}`}>{movement.actor}</a>
                  ) : (
                    movement.actor
                  )}
                </td>
                <td>{movement.stockAfter}</td>
                <td>{movement.note ?? ""}</td>
              </tr>
            ))}
          </tbody>
        </table>
        {props.nextCursor ? <a href={`${base}?before=${props.nextCursor}`}>Older movements</a> : null}
      </div>
      <form class="card" method="post" action={base}>
        <h2>Edit</h2>
        <input type="hidden" name="_csrf" value={props.csrf} />
        <input type="hidden" name="version" value={String(product.version)} />
        <ProductFields product={product} creating={false} {...(props.form ? { form: props.form } : {})} />
        <p>
          <button type="submit">Save</button>
        </p>
      </form>
      <form class="card inline" method="post" action={`${base}/archive`}>
        <input type="hidden" name="_csrf" value={props.csrf} />
        <input type="hidden" name="archived" value={product.archived ? "false" : "true"} />
        <button class={product.archived ? "" : "danger"} type="submit">
          {product.archived ? "Put back on sale" : "Archive (stop selling)"}
        </button>
      </form>
    </OpsLayout>
  );
}

function ImportPage(props: {
  csrf: string;
  csv: string;
  result?: ImportResult;
  errors?: ImportLineError[];
  notice?: Notice;
}) {
  const { result } = props;
  const changes = (row: ImportResult["rows"][number]) =>
    Object.entries(row.changes)
      .map(([field, [from, to]]) => `${field}: ${from === null ? "—" : String(from)} → ${String(to)}`)
      .join("; ");
  return (
    <OpsLayout title="Import products" csrf={props.csrf}>
      <h1>Import products from CSV</h1>
      {props.notice ? (
        <p class={`notice ${props.notice.bad ? "bad" : "ok"}`} role="status">
          {props.notice.text}
        </p>
      ) : null}
      {props.errors && props.errors.length > 0 ? (
        <div class="card" id="import-errors">
          <h2>Nothing was imported</h2>
          <ul>
            {props.errors.map((error) => (
              <li>
                Line {error.line}, {error.field}: {error.message}
              </li>
            ))}
          </ul>
        </div>
      ) : null}
      {result ? (
        <div class="card" id="import-result">
          <h2>
            {result.dryRun ? "Preview: nothing changed yet" : "Imported"} · {result.summary.create} new,{" "}
            {result.summary.update} changed, {result.summary.unchanged} unchanged
          </h2>
          <table>
            <thead>
              <tr>
                <th>Line</th>
                <th>SKU</th>
                <th>Action</th>
                <th>Changes (prices in minor units)</th>
              </tr>
            </thead>
            <tbody>
              {result.rows.map((row) => (
                <tr key={row.line} data-sku={row.sku}>
                  <td>{row.line}</td>
                  <td>{row.sku}</td>
                  <td>{row.action}</td>
                  <td class="small">{changes(row)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      ) : null}
      <form class="card" method="post" action="/ops/products/import">
        <input type="hidden" name="_csrf" value={props.csrf} />
        <p>
          <label>
            The CSV, header line first, with the export&apos;s columns (
            <a href="/ops/products/export.csv">export</a> for a template; prices in minor units, as the API
            takes them):
            <br />
            <textarea name="csv" rows={12} cols={80} required value={props.csv} />
          </label>
        </p>
        <p>
          <button type="submit" name="mode" value="preview">
            Preview
          </button>{" "}
          <button type="submit" name="mode" value="import" class={result?.dryRun ? "" : "secondary"}>
            Import
          </button>
        </p>
        <p class="small muted">
          All or nothing: a file with a bad row changes nothing and names the line. A stock count is a counted
          movement in each product&apos;s ledger.
        </p>
      </form>
    </OpsLayout>
  );
}

/**
 * The catalog in the ops console: the product list (with a low-stock filter), a new product, a
 * product with its stock ledger, edit, archive and stock movements. Each post calls the same
 * catalog use case as the admin API and shows what happened, or why not.
 */
export function productPages(deps: OpsConsoleDeps, catalog: Catalog): Router {
  const router = Router();

  async function showProduct(
    req: Request,
    res: Response,
    sku: string,
    extra: { form?: Form; notice?: Notice } = {},
    status = 200,
  ) {
    const product = await catalog.get(sku);
    if (!product) {
      sendNotFound(deps, req, res, `No product ${sku}`);
      return;
    }
    const before =
      typeof req.query.before === "string" && /^\d+$/.test(req.query.before) ? req.query.before : undefined;
    const page = await catalog.ledger.page(sku, { limit: 50, ...(before ? { before } : {}) });
    const done = typeof req.query.done === "string" ? req.query.done.slice(0, 200) : undefined;
    const notice = extra.notice ?? (done ? { text: done } : undefined);
    sendPage(
      res,
      <ProductPage
        csrf={csrfOf(deps, req)}
        product={product}
        movements={page.movements}
        nextCursor={page.nextCursor}
        {...(extra.form ? { form: extra.form } : {})}
        {...(notice ? { notice } : {})}
      />,
      status,
    );
  }

  /** Runs a use case; a refusal (4xx) is shown on the page it came from, with the form kept. */
  async function attempt(
    run: () => Promise<void>,
    refused: (notice: Notice, status: number) => Promise<void>,
  ) {
    try {
      await run();
    } catch (error) {
      if (!isAppError(error) || error.httpStatus >= 500) throw error;
      await refused({ text: error.message, bad: true }, error.httpStatus);
    }
  }

  router.get("/ops/products", async (req, res) => {
    const lowOnly = req.query.low === "true";
    const archived = req.query.archived === "include";
    const products = await catalog.list({ lowOnly, includeArchived: archived });
    sendPage(
      res,
      <ProductsPage
        csrf={csrfOf(deps, req)}
        products={products}
        lowOnly={lowOnly}
        archived={archived}
        csv={deps.catalogCsv !== undefined}
      />,
    );
  });

  const csv = deps.catalogCsv;
  if (csv) {
    // Before /ops/products/:sku, which would take "export.csv" and "import" for SKUs.
    router.get("/ops/products/export.csv", async (_req, res) => {
      res
        .type("text/csv")
        .set("Content-Disposition", 'attachment; filename="products.csv"')
        .send(await csv.exportCsv());
    });
    router.get("/ops/products/import", (req, res) => {
      sendPage(res, <ImportPage csrf={csrfOf(deps, req)} csv="" />);
    });
    router.post("/ops/products/import", async (req, res) => {
      const form = formOf(req);
      // Kept as sent (formOf trims): the file's last line may matter to nobody, but its first does.
      const text =
        typeof (req.body as { csv?: unknown }).csv === "string" ? (req.body as { csv: string }).csv : "";
      const dryRun = form.mode !== "import";
      try {
        const result = await csv.importCsv(text, { dryRun, by: "ops-console" });
        sendPage(res, <ImportPage csrf={csrfOf(deps, req)} csv={text} result={result} />, dryRun ? 200 : 201);
      } catch (error) {
        if (!isAppError(error) || error.httpStatus >= 500) throw error;
        const details = error.details as { errors?: ImportLineError[] } | undefined;
        sendPage(
          res,
          <ImportPage
            csrf={csrfOf(deps, req)}
            csv={text}
            {...(details?.errors
              ? { errors: details.errors }
              : { notice: { text: error.message, bad: true } })}
          />,
          error.httpStatus,
        );
      }
    });
  }

  router.get("/ops/products/new", (req, res) => {
    sendPage(res, <NewProductPage csrf={csrfOf(deps, req)} />);
  });

  router.post("/ops/products", async (req, res) => {
    const form = formOf(req);
    const showRefusal = async (notice: Notice, status: number) => {
      sendPage(res, <NewProductPage csrf={csrfOf(deps, req)} form={form} notice={notice} />, status);
    };
    const price = priceOf(form, form.currency);
    const parsed = createProductBody.safeParse(
      productBodyOf(
        form,
        [...fieldsEdited.filter((f) => f !== "version"), "sku", "stockOnHand"],
        price.minorUnits,
      ),
    );
    if (price.error || !parsed.success) {
      const text = price.error ?? (parsed.success ? "" : describeIssues(parsed.error).message);
      await showRefusal({ text, bad: true }, 400);
      return;
    }
    await attempt(async () => {
      const product = await catalog.create(parsed.data, "ops-console");
      res.redirect(
        303,
        `/ops/products/${encodeURIComponent(product.sku)}?done=${encodeURIComponent("Product created.")}`,
      );
    }, showRefusal);
  });

  router.get("/ops/products/:sku", async (req, res) => {
    await showProduct(req, res, String(req.params.sku));
  });

  router.post("/ops/products/:sku", async (req, res) => {
    const sku = String(req.params.sku);
    const form = formOf(req);
    const current = await catalog.get(sku);
    const price = priceOf(form, form.currency || current?.currency);
    const parsed = updateProductBody.safeParse(productBodyOf(form, fieldsEdited, price.minorUnits));
    if (price.error || !parsed.success) {
      const text = price.error ?? (parsed.success ? "" : describeIssues(parsed.error).message);
      await showProduct(req, res, sku, { form, notice: { text, bad: true } }, 400);
      return;
    }
    await attempt(
      async () => {
        await catalog.update(sku, parsed.data, { by: "ops-console" });
        res.redirect(303, `/ops/products/${encodeURIComponent(sku)}?done=${encodeURIComponent("Saved.")}`);
      },
      (notice, status) => showProduct(req, res, sku, { form, notice }, status),
    );
  });

  router.post("/ops/products/:sku/archive", async (req, res) => {
    const sku = String(req.params.sku);
    const archived = formOf(req).archived !== "false";
    await attempt(
      async () => {
        await catalog.update(sku, { archived }, { by: "ops-console" });
        const done = archived ? "Archived: no new checkout." : "Back on sale.";
        res.redirect(303, `/ops/products/${encodeURIComponent(sku)}?done=${encodeURIComponent(done)}`);
      },
      (notice, status) => showProduct(req, res, sku, { notice }, status),
    );
  });

  router.post("/ops/products/:sku/stock", async (req, res) => {
    const sku = String(req.params.sku);
    const form = formOf(req);
    const reason = form.reason ?? "";
    const quantity = /^[+-]?\d{1,10}$/.test(form.quantity ?? "") ? Number(form.quantity) : Number.NaN;
    // The form takes a plain number: a count for counted, units out for written-off.
    const body =
      reason === "counted"
        ? { count: quantity, reason }
        : { delta: reason === "written-off" ? -Math.abs(quantity) : quantity, reason };
    const parsed = stockChangeBody.safeParse({ ...body, ...(form.note ? { note: form.note } : {}) });
    if (!parsed.success || Number.isNaN(quantity)) {
      const text = parsed.success
        ? "quantity: a whole number, e.g. 10 or -2"
        : describeIssues(parsed.error).message;
      await showProduct(req, res, sku, { notice: { text, bad: true } }, 400);
      return;
    }
    await attempt(
      async () => {
        const movement = await catalog.changeStock(sku, parsed.data, "ops-console");
        const done = `Recorded ${movement.reason} ${movement.delta > 0 ? "+" : ""}${movement.delta}: ${movement.stockAfter} on hand.`;
        res.redirect(303, `/ops/products/${encodeURIComponent(sku)}?done=${encodeURIComponent(done)}`);
      },
      (notice, status) => showProduct(req, res, sku, { notice }, status),
    );
  });

  return router;
}
