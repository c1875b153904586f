/** A promise the test settles by hand: the gate a delayed stand-in answer waits behind. */
export function gate(): { promise: Promise<void>; open(): void } {
  let open = (): void => undefined;
  const promise = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { promise, open };
}

/**
 * Polls `check` until it returns true. Tests wait for states, never for durations; `what` names
 * the state in the failure message when it never comes.
 */
export async function eventually(
  what: string,
  check: () => boolean | Promise<boolean>,
  options: { attempts?: number; everyMs?: number } = {},
): Promise<void> {
  const attempts = options.attempts ?? 400;
  for (let i = 0; i < attempts; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, options.everyMs ?? 25));
  }
  throw new Error(`never became true: ${what}`);
}
