import { isShimOn } from "./switches";

const utf8 = new TextDecoder();
const bodyUnusable = () => new TypeError("Body is unusable: Body has already been read");

/**
 * The platform's `Response` for a body already in memory, without the platform's body stream.
 * `new Response(bytes)` wraps the bytes in a web ReadableStream (a transferable object, with a
 * copy of the bytes) and `json()` reads them back through it: about 15 µs of CPU per call here
 * against 3 µs for this (docs/decisions/0011), on every event send and checkpoint. So the body is
 * kept as bytes and `text()`, `json()`, `arrayBuffer()`, `bytes()` and `blob()` read them directly.
 * Everything else is the platform's: status, headers and `ok` come from the `Response` this
 * constructs (with no body), and the first caller that wants the stream itself (`body`,
 * `formData()`) gets a platform `Response` over the same bytes, to which this one then defers;
 * the body can be read once, as with fetch, and `clone()` gives a second reader.
 */
export class BufferedResponse extends Response {
  readonly #bytes: Uint8Array<ArrayBuffer>;
  /** The platform's body over the same bytes, made only when a caller asks for the stream. */
  #streamed: Response | undefined;
  #read = false;

  constructor(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
  }

  /** Status and headers as they are now (a caller may have changed the headers). */
  #currentInit(): ResponseInit {
    return { status: this.status, statusText: this.statusText, headers: this.headers };
  }

  #platformBody(): Response {
    if (!this.#streamed) {
      this.#streamed = new Response(this.#bytes, this.#currentInit());
      // Read here already: its stream is then the used one the platform would show.
      if (this.#read) void this.#streamed.arrayBuffer();
    }
    return this.#streamed;
  }

  #consume<T>(
    fromBytes: (bytes: Uint8Array<ArrayBuffer>) => T,
    fromPlatform: (r: Response) => Promise<T>,
  ): Promise<T> {
    if (this.#streamed) return fromPlatform(this.#streamed);
    if (this.#read) return Promise.reject(bodyUnusable());
    this.#read = true;
    try {
      return Promise.resolve(fromBytes(this.#bytes));
    } catch (error) {
      return Promise.reject(error as Error);
    }
  }

  static {
    // undici-types declares the body members as readonly properties, which a subclass may not
    // redeclare as methods or getters; the platform has them on the prototype, and so do these.
    const overrides: {
      [K in "text" | "json" | "arrayBuffer" | "bytes" | "blob" | "formData" | "clone"]: (
        this: BufferedResponse,
      ) => ReturnType<BufferedResponse[K]>;
    } = {
      text() {
        return this.#consume(
          (bytes) => utf8.decode(bytes),
          (r) => r.text(),
        );
      },
      json() {
        return this.#consume(
          (bytes) => JSON.parse(utf8.decode(bytes)) as unknown,
          (r) => r.json(),
        );
      },
      arrayBuffer() {
        return this.#consume(
          (bytes) => bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength),
          (r) => r.arrayBuffer(),
        );
      },
      bytes() {
        return this.#consume(
          (bytes) => new Uint8Array(bytes),
          (r) => r.bytes(),
        );
      },
      blob() {
        return this.#consume(
          (bytes) => new Blob([bytes], { type: this.headers.get("content-type") ?? "" }),
          (r) => r.blob(),
        );
      },
      formData() {
        return this.#platformBody().formData();
      },
      clone() {
        if (this.#streamed) return this.#streamed.clone();
        if (this.#read) throw new TypeError("Response.clone: Body has already been consumed.");
        return new BufferedResponse(this.#bytes, this.#currentInit());
      },
    };
    for (const [name, value] of Object.entries(overrides)) {
      Object.defineProperty(BufferedResponse.prototype, name, { value, writable: true, configurable: true });
    }
    Object.defineProperties(BufferedResponse.prototype, {
      body: {
        get(this: BufferedResponse) {
          return this.#platformBody().body;
        },
        configurable: true,
      },
      bodyUsed: {
        get(this: BufferedResponse) {
          return this.#streamed ? this.#streamed.bodyUsed : this.#read;
        },
        configurable: true,
      },
    });
  }
}

/**
 * The answer for a body already in memory: a BufferedResponse, or the platform's own Response
 * when the shim is switched off for a measurement.
 */
export function responseOfBytes(bytes: Uint8Array<ArrayBuffer>, init: ResponseInit): Response {
  return isShimOn("buffered-response") ? new BufferedResponse(bytes, init) : new Response(bytes, init);
}
