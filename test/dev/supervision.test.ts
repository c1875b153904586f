import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { exitWhenDataDirGoes } from "../../src/dev/supervision";
import { createLogger } from "../../src/logger";

/**
 * DATA_DIR deleted under a running service: every query fails from then on, and the engine's
 * scheduler or a request may log its failure before the once-a-second watch notices. The first
 * such error line is the moment to say what happened: one fatal line in words, and the errors
 * that only follow from it stay out of the error level.
 */
function collectingLogger() {
  const lines: { level: number; msg: string }[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { logger: createLogger({ level: "info", destination }), lines };
}

describe("the data folder deleted while the service runs", () => {
  let dataDir: string;
  let lockFile: string;
  beforeEach(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), "of-supervision-"));
    lockFile = path.join(dataDir, "service.pid");
    await writeFile(lockFile, `${process.pid}\n`);
  });
  afterEach(() => rm(dataDir, { recursive: true, force: true }));

  it("turns the first error after the deletion into the one line saying so, and stops once", async () => {
    const { logger, lines } = collectingLogger();
    const stops: number[] = [];
    const unwatch = exitWhenDataDirGoes(lockFile, dataDir, logger, { stop: (code) => stops.push(code) });
    try {
      await rm(dataDir, { recursive: true, force: true });
      // What the scheduler's next pass logs when the database's files are gone (logged from a
      // child logger too, as request and step lines are).
      logger.error({ err: new Error("could not open file base/16384/2619") }, "firing due crons failed");
      logger
        .child({ component: "engine" })
        .error({ err: new Error("terminating connection") }, "claiming jobs failed");
      logger.info("still written at its own level");

      const atErrorLevel = lines.filter((line) => line.level >= 50);
      expect(atErrorLevel).toHaveLength(1);
      expect(atErrorLevel[0]).toMatchObject({ level: 60 });
      expect(atErrorLevel[0]?.msg).toMatch(/was deleted while the service was running/);
      expect(lines.map((line) => line.msg)).toContain("still written at its own level");
      expect(stops).toEqual([1]);
    } finally {
      unwatch();
    }
  });

  it("leaves error lines alone while the folder is there, and after the watch is removed", async () => {
    const { logger, lines } = collectingLogger();
    const stops: number[] = [];
    const unwatch = exitWhenDataDirGoes(lockFile, dataDir, logger, { stop: (code) => stops.push(code) });
    logger.error("a real failure, folder present");
    unwatch();
    await rm(dataDir, { recursive: true, force: true });
    logger.error("after the service stopped watching");

    expect(lines.filter((line) => line.level === 50).map((line) => line.msg)).toEqual([
      "a real failure, folder present",
      "after the service stopped watching",
    ]);
    expect(stops).toEqual([]);
  });
});
