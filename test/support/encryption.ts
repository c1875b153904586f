import { isEncryptedValue } from "@inngest/middleware-encryption";
import { LibSodiumEncryptionService } from "@inngest/middleware-encryption/strategies/libSodium";

/**
 * The Inngest encryption key the harnesses run the service with, so every workflow and e2e test
 * takes production's path: Inngest (the local engine) holds only ciphertext of customer data.
 */
export const testEncryptionKey = "test-inngest-encryption-key-0123456789abcdef";

const service = new LibSodiumEncryptionService(testEncryptionKey);

/** A value as the service saw it: decrypted when Inngest holds it encrypted, else as it is. */
export async function decrypted(value: unknown): Promise<unknown> {
  return isEncryptedValue(value) ? service.decrypt(value.data) : value;
}
