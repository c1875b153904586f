import { defined } from "../defined";
import { randomUUID } from "node:crypto";
import type { Database } from "../../../src/db/client";

/**
 * An in-memory database that answers the refund, refund-event and dispute modules
 * (src/orders/refund-order.ts, disputed-amount.ts, intake/refund-events.ts, intake/risk-events.ts)
 * as Prisma and PostgreSQL do, for their fast tier (decision 0015): no server, a few ms a test.
 *
 * What it keeps of the real thing, since the modules' guards depend on it:
 * - `where` filters by what it names only: equality (dates by time), `in`, `notIn`, `not`, `lt`,
 *   `lte`, `gt`, `gte`, `OR`, a relation's fields (`payment: { providerId }`), a JSON path
 *   (`detail: { path, equals }`); `select` returns only the fields named (relations with their own
 *   `where`, `orderBy`, `take`, `select`), `include` adds relations; rows come in stored order unless
 *   `orderBy` says otherwise.
 * - Prisma's query validation before any row is read: an empty `select` (its own or a relation's)
 *   and a null in an `in` or `notIn` list are refused (P2009 here; PrismaClientValidationError there).
 * - unique columns (a refund's id and Stripe id, a dispute's Stripe id, a payment's order) refuse a
 *   second row with P2002; `update` of a row that is not there fails with P2025.
 * - `$transaction(fn)` commits all or nothing: a throw puts every table back as it was.
 * - `$queryRaw` answers the payment row's `SELECT … FOR UPDATE` (the only raw read of these
 *   modules), `$queryRawUnsafe` the order model's facts (src/orders/model-check.ts) from the tables.
 */

type Row = Record<string, unknown>;
type Where = Record<string, unknown>;

interface Relation {
  model: string;
  /** The related row's field that holds this row's id (or this row's `local` field). */
  foreign: string;
  one: boolean;
  /** This row's field the related rows' `foreign` field names (default: its id). */
  local?: string;
}

const relations: Record<string, Record<string, Relation>> = {
  order: {
    payment: { model: "payment", foreign: "orderId", one: true },
    shipments: { model: "shipment", foreign: "orderId", one: false },
    emails: { model: "emailMessage", foreign: "orderId", one: false },
    lines: { model: "orderLine", foreign: "orderId", one: false },
    refunds: { model: "refund", foreign: "orderId", one: false },
  },
  orderLine: { product: { model: "product", foreign: "sku", local: "sku", one: true } },
  return: { order: { model: "order", foreign: "id", local: "orderId", one: true } },
  reconciliationRun: { mismatches: { model: "reconciliationMismatch", foreign: "runId", one: false } },
};

const uniques: Record<string, string[]> = {
  order: ["id"],
  payment: ["orderId"],
  refund: ["id", "providerId"],
  dispute: ["id", "providerId"],
  orderTimelineEntry: ["id"],
  shipment: ["id"],
  emailMessage: ["id"],
  orderLine: ["id"],
  product: ["sku"],
  return: ["id"],
  reconciliationRun: ["id", "day"],
  reconciliationMismatch: ["id"],
};

export class PrismaError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

const sameValue = (a: unknown, b: unknown): boolean =>
  a instanceof Date && b instanceof Date ? a.getTime() === b.getTime() : a === b;

const comparable = (value: unknown): number | string =>
  value instanceof Date ? value.getTime() : (value as number | string);

export class MoneyDb {
  readonly tables: Record<string, Row[]> = {
    order: [],
    payment: [],
    refund: [],
    dispute: [],
    orderTimelineEntry: [],
    shipment: [],
    emailMessage: [],
    orderLine: [],
    product: [],
    return: [],
    reconciliationRun: [],
    reconciliationMismatch: [],
  };
  /** Every statement asked, by model and method (`refund.create`, `$queryRaw`, …). */
  readonly calls: string[] = [];
  /** Earlier returns' settled units by sku, as return-money.ts's query answers them. */
  settledReturnUnits: { sku: string; units: number }[] = [];
  /**
   * "reversed": a read without `orderBy` hands its rows back last stored first, as PostgreSQL may
   * (it promises no order without ORDER BY), so a dropped sort shows. Unset: stored order.
   */
  unorderedReads?: "reversed";
  /** Runs once, before the next transaction starts. */
  beforeNextTransaction?: () => Promise<void> | void;
  private readonly hooks = new Map<string, () => void>();
  /** The payment row's lock: one transaction at a time, as `SELECT … FOR UPDATE` makes them. */
  private lock: Promise<void> = Promise.resolve();

  /** Runs `fn` once, just before the next statement named `call` (`order.findUnique`, `$queryRawUnsafe`). */
  before(call: string, fn: () => void): void {
    this.hooks.set(call, fn);
  }

  runHook(call: string): void {
    const hook = this.hooks.get(call);
    if (!hook) return;
    this.hooks.delete(call);
    hook();
  }
  private clock = Date.parse("2026-12-01T10:00:00Z");
  private sequence = 0;

  /** A strictly later time for each row written: `createdAt` orders as insertion does. */
  now(): Date {
    this.clock += 1000;
    return new Date(this.clock);
  }

  private defaults(model: string): Row {
    const base: Row = { id: randomUUID(), createdAt: this.now() };
    if (model === "refund")
      return { ...base, status: "pending", providerId: null, error: null, reason: null };
    if (model === "shipment") return { ...base, supersededAt: null, deliveredAt: null };
    // A BigInt autoincrement key: its order is the order the rows were written in.
    if (model === "reconciliationMismatch") return { ...base, id: BigInt(++this.sequence) };
    return base;
  }

  insert(model: string, data: Row): Row {
    const row = { ...this.defaults(model), ...data };
    for (const field of uniques[model] ?? []) {
      const value = row[field];
      if (value === null || value === undefined) continue;
      if (defined(this.tables[model]).some((other) => sameValue(other[field], value))) {
        throw new PrismaError("P2002", `Unique constraint failed on the fields: (\`${field}\`)`);
      }
    }
    defined(this.tables[model]).push(row);
    return row;
  }

  matches(model: string, row: Row, where: Where | undefined): boolean {
    for (const [field, condition] of Object.entries(where ?? {})) {
      if (condition === undefined) continue;
      if (field === "OR") {
        if (!(condition as Where[]).some((each) => this.matches(model, row, each))) return false;
        continue;
      }
      if (field === "AND") {
        if (!(condition as Where[]).every((each) => this.matches(model, row, each))) return false;
        continue;
      }
      const relation = relations[model]?.[field];
      if (relation) {
        const related = this.related(row, relation);
        const list = condition as { some?: Where; none?: Where; every?: Where };
        if (relation.one) {
          if (!related[0] || !this.matches(relation.model, related[0], condition as Where)) return false;
        } else if ("some" in list || "none" in list || "every" in list) {
          // A to-many relation's filters: `some`, `none` and `every` of the related rows.
          if (list.some && !related.some((each) => this.matches(relation.model, each, list.some)))
            return false;
          if (list.none && related.some((each) => this.matches(relation.model, each, list.none)))
            return false;
          if (list.every && !related.every((each) => this.matches(relation.model, each, list.every)))
            return false;
        } else if (!related.some((each) => this.matches(relation.model, each, condition as Where)))
          return false;
        continue;
      }
      const value = row[field];
      if (condition === null || typeof condition !== "object" || condition instanceof Date) {
        if (!sameValue(value, condition)) return false;
        continue;
      }
      const ops = condition as Record<string, unknown>;
      if ("path" in ops) {
        let at: unknown = value;
        for (const key of ops.path as string[]) at = (at as Row | null)?.[key];
        if (!sameValue(at, ops.equals)) return false;
        continue;
      }
      if ("equals" in ops && !sameValue(value, ops.equals)) return false;
      if ("in" in ops && !(ops.in as unknown[]).some((item) => sameValue(item, value))) return false;
      if ("notIn" in ops && (ops.notIn as unknown[]).some((item) => sameValue(item, value))) return false;
      // SQL: `status <> 'failed'` is false for a NULL too; these columns are not nullable.
      if ("not" in ops && sameValue(value, ops.not)) return false;
      const v = comparable(value);
      if ("lt" in ops && !(v < comparable(ops.lt))) return false;
      if ("lte" in ops && !(v <= comparable(ops.lte))) return false;
      if ("gt" in ops && !(v > comparable(ops.gt))) return false;
      if ("gte" in ops && !(v >= comparable(ops.gte))) return false;
    }
    return true;
  }

  private related(row: Row, relation: Relation): Row[] {
    const own = row[relation.local ?? "id"];
    return defined(this.tables[relation.model]).filter(
      (other) => own !== null && own !== undefined && other[relation.foreign] === own,
    );
  }

  private sorted(rows: Row[], orderBy: unknown): Row[] {
    const keys = (Array.isArray(orderBy) ? orderBy : orderBy ? [orderBy] : []) as Record<string, string>[];
    // `orderBy: {}` names no field: no order, as none given.
    const fields = keys.flatMap((key) => Object.entries(key));
    if (fields.length === 0) return this.unorderedReads === "reversed" ? [...rows].reverse() : rows;
    for (const [field, direction] of fields) {
      if (direction !== "asc" && direction !== "desc") {
        throw new PrismaError("P2009", `Invalid orderBy direction ${JSON.stringify(direction)} for ${field}`);
      }
    }
    return [...rows].sort((a, b) => {
      for (const [field, direction] of fields) {
        const x = comparable(a[field]);
        const y = comparable(b[field]);
        if (x === y) continue;
        const less = x < y ? -1 : 1;
        return direction === "desc" ? -less : less;
      }
      return 0;
    });
  }

  /**
   * Prisma's query validation, before any row is read (so with no rows too): a `select` naming no
   * field ("The `select` statement for type Refund must not be empty", or "needs at least one truthy
   * value" when all are false), a relation's own empty `select` likewise (`order: {}` is allowed:
   * the related row with all its fields), and a null in an `in` or `notIn` list ("Argument `in`:
   * Invalid value provided"), which PostgreSQL's `IN (NULL)` would otherwise match nothing for.
   */
  validate(model: string, args: { where?: Where; select?: Row; include?: Row }): void {
    const checkSelect = (at: string, select: Row | undefined, include: Row | undefined) => {
      if (select && !Object.values(select).some(Boolean)) {
        const type = `${at.charAt(0).toUpperCase()}${at.slice(1)}`;
        throw new PrismaError("P2009", `The \`select\` statement for type ${type} must not be empty`);
      }
      for (const [field, spec] of Object.entries(select ?? include ?? {})) {
        const relation = relations[at]?.[field];
        if (!relation || !spec || spec === true) continue;
        const nested = spec as { where?: Where; select?: Row; include?: Row };
        checkSelect(relation.model, nested.select, nested.include);
        checkWhere(nested.where);
      }
    };
    const checkWhere = (where: unknown): void => {
      if (Array.isArray(where)) return where.forEach(checkWhere);
      if (where === null || typeof where !== "object" || where instanceof Date) return;
      for (const [key, value] of Object.entries(where as Row)) {
        if (key === "equals" || key === "path") continue;
        if ((key === "in" || key === "notIn") && Array.isArray(value) && value.some((item) => item == null)) {
          throw new PrismaError("P2009", `Argument \`${key}\`: Invalid value provided (a null in the list)`);
        }
        checkWhere(value);
      }
    };
    checkSelect(model, args.select, args.include);
    checkWhere(args.where);
  }

  /** A row as Prisma hands it back: `select`'s fields only, or all with `include`'s relations. */
  shaped(model: string, row: Row, args: { select?: Row; include?: Row }): Row {
    const pick = args.select ?? args.include;
    const out: Row = args.select ? {} : { ...row };
    for (const [field, spec] of Object.entries(pick ?? {})) {
      if (!spec) continue;
      const relation = relations[model]?.[field];
      if (!relation) {
        out[field] = row[field];
        continue;
      }
      const nested = (spec === true ? {} : spec) as {
        where?: Where;
        orderBy?: unknown;
        take?: number;
        select?: Row;
        include?: Row;
      };
      let found = this.related(row, relation).filter((each) =>
        this.matches(relation.model, each, nested.where),
      );
      found = this.sorted(found, nested.orderBy);
      if (nested.take !== undefined) found = found.slice(0, nested.take);
      const shapedRows = found.map((each) => this.shaped(relation.model, each, nested));
      out[field] = relation.one ? (shapedRows[0] ?? null) : shapedRows;
    }
    return out;
  }

  private model(model: string) {
    // eslint-disable-next-line @typescript-eslint/no-this-alias -- the model's methods read the store they belong to
    const db = this;
    const table = () => defined(db.tables[model]);
    const find = (
      args: { where?: Where; orderBy?: unknown; take?: number; cursor?: Where; skip?: number } = {},
    ) => {
      let found = db.sorted(
        table().filter((row) => db.matches(model, row, args.where)),
        args.orderBy,
      );
      // Prisma's cursor: the rows from the one it names on (that row too unless `skip`), in order.
      if (args.cursor) {
        const from = found.findIndex((row) => db.matches(model, row, args.cursor));
        found = from < 0 ? [] : found.slice(from);
      }
      if (args.skip !== undefined) found = found.slice(args.skip);
      if (args.take !== undefined) found = found.slice(0, args.take);
      return found;
    };
    const log = (method: string, args: { where?: Where; select?: Row; include?: Row } = {}) => {
      db.calls.push(`${model}.${method}`);
      db.runHook(`${model}.${method}`);
      db.validate(model, args);
    };
    /** Prisma refuses a findUnique or update whose where names no unique field. */
    const unique = (where: Where | undefined) => {
      if (!(uniques[model] ?? []).some((field) => where?.[field] !== undefined)) {
        throw new PrismaError("P2009", `${model}: where needs a unique field, got ${JSON.stringify(where)}`);
      }
    };
    const apply = (row: Row, data: Row) => {
      for (const [field, value] of Object.entries(data)) if (value !== undefined) row[field] = value;
      row.updatedAt = db.now();
    };
    return {
      async findUnique(args: { where: Where; select?: Row; include?: Row }) {
        log("findUnique", args);
        unique(args.where);
        const row = find(args)[0];
        return row ? db.shaped(model, row, args) : null;
      },
      async findUniqueOrThrow(args: { where: Where; select?: Row; include?: Row }) {
        log("findUniqueOrThrow", args);
        unique(args.where);
        const row = find(args)[0];
        if (!row) throw new PrismaError("P2025", `No ${model} found`);
        return db.shaped(model, row, args);
      },
      async findFirst(args: { where?: Where; select?: Row; include?: Row; orderBy?: unknown } = {}) {
        log("findFirst", args);
        const row = find(args)[0];
        return row ? db.shaped(model, row, args) : null;
      },
      async findMany(
        args: {
          where?: Where;
          select?: Row;
          include?: Row;
          orderBy?: unknown;
          take?: number;
          cursor?: Where;
          skip?: number;
        } = {},
      ) {
        log("findMany", args);
        return find(args).map((row) => db.shaped(model, row, args));
      },
      async count(args: { where?: Where } = {}) {
        log("count", args);
        return find(args).length;
      },
      async aggregate(args: { where?: Where; _sum: Record<string, boolean> }) {
        log("aggregate", args);
        const found = find(args);
        const _sum: Record<string, number | null> = {};
        for (const [field, wanted] of Object.entries(args._sum)) {
          if (!wanted) continue;
          _sum[field] =
            found.length === 0 ? null : found.reduce((sum, row) => sum + (row[field] as number), 0);
        }
        return { _sum };
      },
      async create(args: { data: Row; select?: Row }) {
        log("create", args);
        return db.shaped(model, db.insert(model, args.data), args);
      },
      async createMany(args: { data: Row[] }) {
        log("createMany");
        // A field given as undefined is not written: the nullable column reads back null.
        for (const data of args.data)
          db.insert(
            model,
            Object.fromEntries(Object.entries(data).map(([field, value]) => [field, value ?? null])),
          );
        return { count: args.data.length };
      },
      async upsert(args: { where: Where; create: Row; update: Row; select?: Row; include?: Row }) {
        log("upsert", args);
        unique(args.where);
        const row = find(args)[0];
        if (!row) return db.shaped(model, db.insert(model, args.create), args);
        apply(row, args.update);
        return db.shaped(model, row, args);
      },
      async update(args: { where: Where; data: Row; select?: Row }) {
        log("update", args);
        unique(args.where);
        const row = find(args)[0];
        if (!row) throw new PrismaError("P2025", `Record to update not found (${model})`);
        apply(row, args.data);
        return db.shaped(model, row, args);
      },
      async updateMany(args: { where?: Where; data: Row }) {
        log("updateMany", args);
        const found = find(args);
        for (const row of found) apply(row, args.data);
        return { count: found.length };
      },
      async deleteMany(args: { where?: Where } = {}) {
        log("deleteMany", args);
        const found = new Set(find(args));
        db.tables[model] = table().filter((row) => !found.has(row));
        return { count: found.size };
      },
    };
  }

  readonly order = this.model("order");
  readonly payment = this.model("payment");
  readonly refund = this.model("refund");
  readonly dispute = this.model("dispute");
  readonly orderTimelineEntry = this.model("orderTimelineEntry");
  readonly product = this.model("product");
  readonly shipment = this.model("shipment");
  readonly orderLine = this.model("orderLine");
  readonly return = this.model("return");
  readonly reconciliationRun = this.model("reconciliationRun");
  readonly reconciliationMismatch = this.model("reconciliationMismatch");

  /** All or nothing: a throw inside puts every table back. */
  async $transaction<T>(fn: (tx: MoneyDb) => Promise<T>): Promise<T> {
    this.calls.push("$transaction");
    // Another request's write landing just before this one takes its turn (a race, staged).
    const before = this.beforeNextTransaction;
    this.beforeNextTransaction = undefined;
    await before?.();
    let release = () => {};
    const previous = this.lock;
    this.lock = new Promise<void>((resolve) => (release = resolve));
    await previous;
    const saved = Object.fromEntries(
      Object.entries(this.tables).map(([model, rows]) => [model, rows.map((row) => ({ ...row }))]),
    );
    try {
      return await fn(this);
    } catch (error) {
      for (const [model, rows] of Object.entries(saved)) this.tables[model] = rows;
      throw error;
    } finally {
      release();
    }
  }

  /** The payment row's `SELECT amount_captured, amount_refunded[, currency] … FOR UPDATE`. */
  async $queryRaw(strings: TemplateStringsArray, ...values: unknown[]): Promise<Row[]> {
    this.calls.push("$queryRaw");
    const text = strings.join("?");
    // A return's worth (src/returns/return-money.ts): the order's breakdown, earlier returns' units.
    if (/SELECT money_breakdown FROM orders WHERE id = \?::uuid/.test(text)) {
      const order = defined(this.tables.order).find((row) => row.id === values[0]);
      return order ? [{ money_breakdown: order.moneyBreakdown ?? null }] : [];
    }
    if (/FROM return_lines l JOIN returns r/.test(text)) return this.settledReturnUnits;
    if (!/FROM payments WHERE order_id = \?::uuid FOR UPDATE/.test(text)) {
      throw new Error(`MoneyDb: no answer for ${text}`);
    }
    const payment = defined(this.tables.payment).find((row) => row.orderId === values[0]);
    return payment
      ? [
          {
            amount_captured: payment.amountCaptured,
            amount_refunded: payment.amountRefunded,
            currency: payment.currency,
          },
        ]
      : [];
  }

  /** The order model's facts (loadOrderFacts), worked out from the tables as its SQL does. */
  async $queryRawUnsafe(text: string, ...values: unknown[]): Promise<Row[]> {
    this.calls.push("$queryRawUnsafe");
    this.runHook("$queryRawUnsafe");
    if (!/FROM orders o\s+LEFT JOIN payments p/.test(text)) throw new Error("MoneyDb: no answer for raw SQL");
    const order = defined(this.tables.order).find((row) => row.id === values[0]);
    if (!order) return [];
    const payment = defined(this.tables.payment).find((row) => row.orderId === order.id);
    const asked = defined(this.tables.refund)
      .filter((row) => row.orderId === order.id && row.status !== "failed")
      .reduce((sum, row) => sum + (row.amount as number), 0);
    const labels = defined(this.tables.shipment)
      .filter((row) => row.orderId === order.id && row.supersededAt === null)
      .map((row) => ({
        status: row.status ?? "label_created",
        tracker_status: row.trackerStatus ?? null,
        label_refund_status: row.labelRefundStatus ?? null,
      }));
    return [
      {
        status: order.status,
        cancel_requested: order.cancelRequestedAt !== null && order.cancelRequestedAt !== undefined,
        hold_reason: order.holdReason ?? null,
        purchase_in_flight: false,
        captured: (payment?.amountCaptured as number | undefined) ?? 0,
        refunded: Math.max((payment?.amountRefunded as number | undefined) ?? 0, asked),
        labels,
        run_failed: false,
      },
    ];
  }

  asDatabase(): Database {
    return this as unknown as Database;
  }

  /** An order with its payment and one line (the stand-ins' shape of a paid order). */
  addOrder(fields: Row & { captured?: number; refunded?: number; paymentIntentId?: string | null } = {}): {
    id: string;
    paymentIntentId: string | null;
  } {
    const { captured = 5000, refunded = 0, ...orderFields } = fields;
    const id = (orderFields.id as string | undefined) ?? randomUUID();
    const paymentIntentId =
      fields.paymentIntentId === undefined ? `pi_${id.slice(0, 8)}` : fields.paymentIntentId;
    this.insert("order", {
      id,
      status: "shipped",
      email: "buyer@example.com",
      currency: "usd",
      total: captured,
      cancelRequestedAt: null,
      holdReason: null,
      moneyBreakdown: null,
      ...orderFields,
      paymentIntentId,
    });
    this.insert("orderLine", { orderId: id, sku: "MUG", name: "Mug", quantity: 1, unitPrice: captured });
    if (captured > 0 || fields.captured !== undefined) {
      this.insert("payment", {
        orderId: id,
        providerId: paymentIntentId,
        amountCaptured: captured,
        amountRefunded: refunded,
        currency: "usd",
        status: refunded >= captured && captured > 0 ? "refunded" : "captured",
      });
    }
    return { id, paymentIntentId };
  }

  timeline(orderId: string, kind?: string): Row[] {
    return defined(this.tables.orderTimelineEntry).filter(
      (row) => row.orderId === orderId && (kind === undefined || row.kind === kind),
    );
  }
}
