// distributed.d.ts - kd.distributed: the rendezvous stores of c10d (lib/distributed/).
export {};

declare module './index' {
  namespace distributed {
    type StoreValue = string | Buffer | Uint8Array;
    /** The key-value store every process group rendezvous through. */
    interface Store {
      set(key: string, value: StoreValue): Promise<void>;
      /** Waits up to the store's timeout for the key; rejects with code KD_TIMEOUT. */
      get(key: string): Promise<Buffer>;
      /** Adds to the integer at key (a missing key counts as 0); resolves to the new value. */
      add(key: string, amount: number): Promise<number>;
      /** Sets desired when the value is expected ('' for a missing key); resolves to the value held. */
      compareSet(key: string, expected: StoreValue, desired: StoreValue): Promise<Buffer>;
      /** Resolves when every key is set; rejects with code KD_TIMEOUT after timeout ms. */
      wait(keys: string[], timeout?: number): Promise<void>;
      check(keys: string[]): Promise<boolean>;
      deleteKey(key: string): Promise<boolean>;
      numKeys(): Promise<number>;
      setTimeout(ms: number): void;
      timeout: number;
    }
    /** A store served over TCP by the master process; port 0 on the master picks a free port (read `port` after `ready`). */
    // The Store methods, merged into the class.
    interface TCPStore extends Store {}
    class TCPStore {
      constructor(hostName: string, port: number, worldSize?: number | null, isMaster?: boolean, options?: { timeout?: number });
      readonly host: string;
      readonly port: number;
      readonly isMaster: boolean;
      readonly ready: Promise<TCPStore>;
      /** Closes this client, and the server on the master. */
      close(): Promise<void>;
    }
    /** A store over an append-only log file that every process opens (a shared file system). */
    // The Store methods, merged into the class.
    interface FileStore extends Store {}
    class FileStore {
      constructor(fileName: string, worldSize?: number, options?: { timeout?: number });
      readonly path: string;
      close(): Promise<void>;
    }
    /** Stores every key as `${prefix}/${key}` in the wrapped store. */
    // The Store methods, merged into the class.
    interface PrefixStore extends Store {}
    class PrefixStore {
      constructor(prefix: string, store: Store);
      readonly prefix: string;
      readonly store: Store;
    }
  }
}
