/**
 * Runs tasks with the same key one after another (and tasks with different keys side by side),
 * in this process. Nothing is held in the database while a task waits on the network.
 */
export class KeyedMutex {
  private readonly tails = new Map<string, Promise<unknown>>();

  async run<T>(key: string, task: () => Promise<T>): Promise<T> {
    const previous = this.tails.get(key) ?? Promise.resolve();
    const current = previous.then(task, task);
    const tail = current.catch(() => undefined);
    this.tails.set(key, tail);
    try {
      return await current;
    } finally {
      // The last task for a key removes it, so the map only holds keys with work in flight.
      if (this.tails.get(key) === tail) this.tails.delete(key);
    }
  }
}
