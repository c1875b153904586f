/**
 * A bounded set of recently seen ids, oldest evicted first. Used to answer a redelivery of an
 * event this process has already seen committed without touching the database; forgetting an id
 * only costs a database read, so the bound can be small.
 */
export class RecentIds {
  private readonly ids = new Set<string>();

  constructor(private readonly capacity: number) {}

  has(id: string): boolean {
    return this.ids.has(id);
  }

  add(id: string): void {
    if (this.ids.has(id)) return;
    this.ids.add(id);
    if (this.ids.size > this.capacity) {
      const oldest = this.ids.values().next().value;
      if (oldest !== undefined) this.ids.delete(oldest);
    }
  }
}
